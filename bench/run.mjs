// `npm run bench [-- service gates webhooks load engine imports] [--jobs …]`: every benchmark, each measuring its contenders side
// by side in one run on this machine (timings on shared machines are noisy: compare ratios, not
// absolute numbers). Starts its own local service (fresh state) for the sections that need one.
// `--smoke`: every section with a handful of samples — it proves the scripts run (npm test does
// this), its figures mean nothing.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, startLocalService, VENV_PYTHON } from "../scripts/lib.mjs";
import { benchAccount } from "./accounts.mjs";

const ADMIN_TOKEN = "bench-admin-token-0123456789";
const args = process.argv.slice(2);
const smoke = args.includes("--smoke");
// `--jobs a,b`, `--repeat N` and `--full` go to the engine benchmark (`npm run bench -- engine --jobs nsga2`).
const engineArgs = [];
const named = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "--smoke") continue;
  if (arg === "--jobs" || arg === "--repeat") engineArgs.push(arg, args[++i] ?? "");
  else if (arg.startsWith("--jobs=") || arg.startsWith("--repeat=") || arg === "--full") engineArgs.push(arg);
  else named.push(arg);
}
const sections = named.length ? named : ["service", "gates", "webhooks", "load", "engine", "imports"];
const results = {};

async function withService(options, fn) {
  const state = mkdtempSync(join(tmpdir(), "allele-bench-"));
  const service = await startLocalService({
    port: await freePort(),
    workerPort: await freePort(),
    persistTo: state,
    quiet: true,
    ...options,
    vars: {
      ADMIN_TOKEN,
      RUN_TOKEN_SECRET: "bench-run-token-secret",
      WEBHOOK_ALLOW_PRIVATE: "true",
      RATE_LIMIT_KEY: "10000000",
      RATE_LIMIT_IP: "10000000",
      PLATFORM_QUEUE_CAP: "10000000",
      BENCH_ROUTES: "true",
      ...options.vars,
    },
  });
  try {
    return await fn(service);
  } finally {
    await service.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

if (sections.includes("service")) {
  const { run } = await import("./service.mjs");
  results.service = await withService({}, async ({ baseUrl }) => run({ baseUrl, key: await benchAccount(baseUrl, ADMIN_TOKEN), smoke }));
}

if (sections.includes("gates")) {
  // Runs are accepted by a stand-in worker that does nothing, so no GA competes for the CPU while the
  // request path is timed.
  const sink = createServer((req, res) => {
    req.resume();
    res.writeHead(req.method === "POST" && req.url === "/runs" ? 202 : 404, { "Content-Type": "application/json" });
    res.end("{}");
  });
  const sinkPort = await freePort();
  await new Promise((r) => sink.listen(sinkPort, "127.0.0.1", r));
  const { run } = await import("./gates.mjs");
  try {
    results.gates = await withService({ runnerUrl: `http://127.0.0.1:${sinkPort}` }, async ({ baseUrl }) =>
      run({ baseUrl, key: await benchAccount(baseUrl, ADMIN_TOKEN), ...(smoke ? { requests: 5, admissions: 20 } : {}) }),
    );
  } finally {
    sink.close();
  }
}

if (sections.includes("webhooks") && existsSync(join(ROOT, "bench", "webhooks.mjs"))) {
  const { run } = await import("./webhooks.mjs");
  results.webhooks = await withService({}, async ({ baseUrl }) => run({ baseUrl, adminToken: ADMIN_TOKEN, smoke }));
}

if (sections.includes("load")) {
  const { run } = await import("./load.mjs");
  results.load = await withService({}, async ({ baseUrl, children }) =>
    // children: the GA worker first (startLocalService starts it before wrangler), then wrangler.
    run({ baseUrl, adminToken: ADMIN_TOKEN, pids: children.map((c) => c.pid), workerPid: children[0].pid, smoke }),
  );
}

if (sections.includes("engine") && existsSync(join(ROOT, "bench", "engine.py"))) {
  console.log("\n## Engine: stock PyGAD vs the accelerated engine\n");
  const res = spawnSync(VENV_PYTHON, [join(ROOT, "bench", "engine.py"), ...(smoke ? ["--quick"] : []), ...engineArgs], {
    cwd: ROOT,
    stdio: "inherit",
  });
  results.engine = { exit: res.status };
  if (res.status !== 0) process.exitCode = 1;
}

if (sections.includes("imports")) {
  // The scientific stack's imports (docs/performance.md): runs forked from the stack's fork server and from
  // the plain one side by side, TensorFlow's import, each server's memory (bench/imports.py).
  const res = spawnSync(VENV_PYTHON, [join(ROOT, "bench", "imports.py"), ...(smoke ? ["--smoke"] : [])], { cwd: ROOT, stdio: "inherit" });
  results.imports = { exit: res.status };
  if (res.status !== 0) process.exitCode = 1;
}

if (!smoke) {
  mkdirSync(join(ROOT, ".wrangler", "bench"), { recursive: true });
  writeFileSync(join(ROOT, ".wrangler", "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log("\nraw figures: .wrangler/bench/results.json");
}
