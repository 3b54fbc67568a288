// The API fuzz run (docs/testing.md): schemathesis, driven by the OpenAPI document the service serves,
// against a local service (`wrangler dev` + the real GA worker on free ports, fresh state), with a valid
// all-scopes key, over every public operation. It must find no 5xx, no response outside its documented
// schema, status codes, content types and headers, and no invalid request accepted.
//
//   node scripts/fuzz.mjs                 the long run (`npm run fuzz`): 200 examples per operation
//   node scripts/fuzz.mjs --bounded       the run `npm test` makes (test/e2e/fuzz.test.ts): few examples, fixed seed
//   node scripts/fuzz.mjs --url URL --key KEY   against a service that is already running
//
// Prints `operations N, cases N, failures N` and exits non-zero on any failure.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { installExtras } from "./install.mjs";
import { freePort, ROOT, startLocalService } from "./lib.mjs";

export const FUZZ_PYTHON = join(ROOT, "container", "fuzz", ".venv", "bin", "python");
const ADMIN_TOKEN = "fuzz-admin-token-0123456789";
export const BOUNDED_EXAMPLES = 20;
export const BOUNDED_SEED = 20261125;

/** The operations of the committed public document: every one must be fuzzed. */
export const documentedOperations = () =>
  Object.values(JSON.parse(readFileSync(join(ROOT, "docs", "openapi.json"), "utf8")).paths).reduce(
    (n, item) => n + Object.keys(item).length,
    0,
  );

/** The checks: everything that judges a response against the document, and invalid input refused. */
export const CHECKS = [
  "not_a_server_error",
  "status_code_conformance",
  "content_type_conformance",
  "response_headers_conformance",
  "response_schema_conformance",
  "negative_data_rejection",
  "missing_required_header",
  "unsupported_method",
  "ignored_auth",
];

async function admin(baseUrl, adminToken, path, body, method = "POST") {
  const res = await fetch(`${baseUrl}/admin/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A fuzzing account: roomy gates, small tier caps (a generated job stays small), plenty of credits. */
export async function fuzzAccount(baseUrl, adminToken = ADMIN_TOKEN) {
  const { account, key } = await admin(baseUrl, adminToken, "/accounts", {
    email: `fuzz-${Date.now()}@example.com`,
    plan: "premium",
    credits: 100000,
  });
  await admin(
    baseUrl,
    adminToken,
    `/accounts/${account.id}`,
    {
      overrides: {
        concurrent_submissions: 10000,
        inflight_api_runs: 10000,
        daily_quota: 1000000,
        max_num_generations: 20,
        max_num_genes: 20,
      },
    },
    "PATCH",
  );
  return key;
}

async function api(baseUrl, key, path, body, method = body === undefined ? "GET" : "POST") {
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

/**
 * Real resources for the path parameters: a succeeded submission and its result, a webhook and its
 * deliveries (one failed for good, so re-send can succeed), a code upload, a sweep. The fuzzer draws `{id}` and
 * `{delivery_id}` from their ids most of the time (and generates one otherwise), so operations reach their
 * logic instead of answering 404 to made-up ids.
 */
export async function seedResources(baseUrl, key) {
  const job = {
    name: "fuzz seed",
    num_generations: 5,
    num_parents_mating: 2,
    sol_per_pop: 4,
    num_genes: 3,
    fitness_func: FITNESS,
    fitness_func_entry: "fitness",
  };
  /** A succeeded submission and its result. */
  const succeeded = async () => {
    const submission = await api(baseUrl, key, "/submissions", job);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const row = await api(baseUrl, key, `/submissions/${submission.id}`);
      if (row.status === "succeeded") break;
      if (Date.now() > deadline || row.status === "failed") throw new Error(`the seed run did not succeed: ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { id: submission.id, resultId: (await api(baseUrl, key, `/results?submission_id=${submission.id}`)).results[0].id };
  };
  const [kept, deleted] = [await succeeded(), await succeeded()];
  const upload = await api(baseUrl, key, "/code-uploads", { content: FITNESS });
  const { name: _name, ...base } = job;
  const sweepBody = { name: "fuzz sweep", base, grid: { sol_per_pop: [4, 6] }, seeds: 1 };
  const [sweep, deletedSweep] = [await api(baseUrl, key, "/sweeps", sweepBody), await api(baseUrl, key, "/sweeps", sweepBody)];
  // Nothing listens on port 9: a Test's delivery fails every attempt and, once its retries are spent
  // (1 s apart where the service is started with WEBHOOK_RETRY_DELAYS=1,…), is failed for good.
  const hook = await api(baseUrl, key, "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["submission.succeeded"] });
  const deletedHook = await api(baseUrl, key, "/webhooks", { url: "http://127.0.0.1:9/hook", events: ["submission.succeeded"] });
  const fired = await api(baseUrl, key, `/webhooks/${hook.id}/test`, {});
  const until = Date.now() + 30_000;
  while ((await api(baseUrl, key, `/webhooks/${hook.id}/deliveries/${fired.delivery_id}`)).status !== "failed" && Date.now() < until)
    await new Promise((r) => setTimeout(r, 250));
  return {
    // Each resource's path: the ids of its kind (an unknown id besides, so 404s are tried too).
    ids: {
      "/submissions/": [kept.id],
      "/results/": [kept.resultId],
      "/code-uploads/": [upload.code_id],
      "/webhooks/": [hook.id],
      "/sweeps/": [sweep.id],
    },
    // The DELETE operations get resources of their own: deleting the ones above would leave the
    // operations fuzzed after them (cancel, reexecute, continue, the webhook tools) only 404s.
    forDelete: {
      deleteSubmission: [deleted.id],
      deleteResult: [deleted.resultId],
      deleteWebhook: [deletedHook.id],
      deleteSweep: [deletedSweep.id],
    },
    deliveries: [fired.delivery_id],
    files: ["result.json", "fitness.svg", "fitness_history.csv", "population.json"],
  };
}

/** Cancels the account's live runs (the fuzzer leaves some queued), so they take no place from later work. */
export async function cancelLiveRuns(baseUrl, key) {
  const live = await api(baseUrl, key, "/submissions?status=queued,running&page_size=100");
  for (const s of live.results)
    await fetch(`${baseUrl}/api/v1/submissions/${s.id}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${key}` } });
  return live.results.length;
}

/** The run's schemathesis.toml: the seeded ids as dictionaries, and a 413 counted as refusing invalid data. */
function configFile(dir, seeded) {
  const list = (values) => `[${values.map((v) => JSON.stringify(v)).join(", ")}]`;
  const path = join(dir, "schemathesis.toml");
  writeFileSync(
    path,
    [
      // A body over the size limit is refused with 413 before it is parsed: a refusal like 400.
      "[checks.negative_data_rejection]",
      "expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]",
      "[dictionaries.files]",
      `values = ${list(seeded.files)}`,
      "[dictionaries.deliveries]",
      `values = ${list(seeded.deliveries)}`,
      ...Object.entries(seeded.ids).flatMap(([prefix, ids], i) => [
        `[dictionaries.ids${i}]`,
        `values = ${list(ids)}`,
        "[[operations]]",
        `include-path-regex = ${JSON.stringify(`^${prefix}`)}`,
        `exclude-operation-id = ${list(Object.keys(seeded.forDelete))}`,
        `parameters = { "path.id" = { dictionary = "ids${i}", probability = 0.8 }, "path.name" = { dictionary = "files", probability = 0.8 }, "path.delivery_id" = { dictionary = "deliveries", probability = 0.8 } }`,
      ]),
      ...Object.entries(seeded.forDelete).flatMap(([operationId, ids]) => [
        `[dictionaries.${operationId}]`,
        `values = ${list(ids)}`,
        "[[operations]]",
        `include-operation-id = ${JSON.stringify(operationId)}`,
        `parameters = { "path.id" = { dictionary = ${JSON.stringify(operationId)}, probability = 0.8 } }`,
      ]),
      "",
    ].join("\n"),
  );
  return path;
}

/** Runs schemathesis; returns its figures and whether it passed. */
export async function runSchemathesis({ baseUrl, key, seeded, maxExamples, seed, reportDir, maxTime, phases }) {
  mkdirSync(reportDir, { recursive: true });
  const junit = join(reportDir, "schemathesis.xml");
  rmSync(junit, { force: true });
  const dir = mkdtempSync(join(tmpdir(), "allele-st-"));
  const args = [
    // The committed document (what GET /api/v1/openapi.json serves: test/http/openapi.test.ts), so that
    // operation is fuzzed too (the CLI leaves out the URL it loads the document from).
    "-m",
    "schemathesis.cli",
    "--config-file",
    configFile(dir, seeded),
    "run",
    join(ROOT, "docs", "openapi.json"),
    "--url",
    `${baseUrl}/api/v1`,
    "--header",
    `Authorization: Bearer ${key}`,
    "--checks",
    CHECKS.join(","),
    "--phases",
    phases,
    "--max-examples",
    String(maxExamples),
    "--workers",
    "1", // hypothesis's lambda-source cache is not thread-safe: 2 workers crash it now and then
    "--generation-database",
    "none",
    "--request-timeout",
    "30",
    "--no-color",
    "--report",
    "junit",
    "--report-junit-path",
    junit,
    ...(seed !== undefined ? ["--seed", String(seed)] : []),
    ...(maxTime ? ["--max-time", String(maxTime)] : []),
  ];
  const started = Date.now();
  const st = await new Promise((resolve) => {
    const child = spawn(FUZZ_PYTHON, args, { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (d) => chunks.push(d));
    child.stderr.on("data", (d) => chunks.push(d));
    child.on("close", (status) => resolve({ status, output: Buffer.concat(chunks).toString("utf8") }));
  });
  rmSync(dir, { recursive: true, force: true });
  const seconds = (Date.now() - started) / 1000;
  const output = st.output;
  const xml = existsSync(junit) ? readFileSync(junit, "utf8") : "";
  const operations = (xml.match(/<testcase\b/g) ?? []).length;
  const failures = (xml.match(/<failure\b/g) ?? []).length + (xml.match(/<error\b/g) ?? []).length;
  const cases = Number(/(\d+)\s+generated/i.exec(output)?.[1] ?? /Test cases:\s*(\d+)/i.exec(output)?.[1] ?? NaN);
  return { ok: st.status === 0, status: st.status, operations, cases, failures, seconds, output };
}

/** Schemathesis prints each failing request whole; a body of megabytes is cut to its first 2,000 characters. */
export const shorten = (text) =>
  text
    .split("\n")
    .map((line) => (line.length > 2000 ? `${line.slice(0, 2000)}… (${line.length} characters)` : line))
    .join("\n");

async function main() {
  const argv = process.argv.slice(2);
  const opt = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const bounded = argv.includes("--bounded");
  const maxExamples = Number(opt("--max-examples") ?? (bounded ? BOUNDED_EXAMPLES : 200));
  // The coverage phase (every boundary of every schema, ~3,300 requests whatever the example count) runs
  // in the long run only; the bounded run generates `maxExamples` requests per operation.
  const phases = opt("--phases") ?? (bounded ? "fuzzing" : "examples,coverage,fuzzing");
  const seed = opt("--seed") ?? (bounded ? String(BOUNDED_SEED) : undefined);
  installExtras(["fuzz"]); // schemathesis, on first use

  let baseUrl = opt("--url");
  let key = opt("--key");
  let service;
  let state;
  if (!baseUrl) {
    state = mkdtempSync(join(tmpdir(), "allele-fuzz-"));
    service = await startLocalService({
      port: await freePort(),
      workerPort: await freePort(),
      persistTo: state,
      quiet: true,
      vars: {
        ADMIN_TOKEN,
        RUN_TOKEN_SECRET: "fuzz-run-token-secret",
        RATE_LIMIT_KEY: "1000000",
        RATE_LIMIT_IP: "1000000",
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_RETRY_DELAYS: "1,1,1,1,1",
      },
    });
    baseUrl = service.baseUrl;
  }
  try {
    key ??= await fuzzAccount(baseUrl);
    const seeded = await seedResources(baseUrl, key);
    const result = await runSchemathesis({
      baseUrl,
      key,
      seeded,
      maxExamples,
      phases,
      seed,
      reportDir: join(ROOT, ".wrangler", "test-reports"),
      maxTime: opt("--max-time"),
    });
    if (!result.ok || argv.includes("--verbose")) console.log(shorten(result.output));
    await cancelLiveRuns(baseUrl, key);
    console.log(
      `schemathesis: operations ${result.operations}, cases ${result.cases}, failures ${result.failures}, ${result.seconds.toFixed(0)} s (max ${maxExamples} examples per operation${seed ? `, seed ${seed}` : ""})`,
    );
    process.exitCode = result.ok ? 0 : 1;
  } finally {
    await service?.stop();
    if (state) rmSync(state, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main();
