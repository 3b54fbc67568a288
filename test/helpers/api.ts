// Harness for tests inside workerd: call the Worker as a client would, seed accounts through the admin API.
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";

export const BASE = "https://allele.test";

/** The Worker's default export (its fetch handler), as `cloudflare:workers` exposes it inside the test runtime. */
const worker = exports as unknown as { default: { fetch(request: Request): Promise<Response> } };
export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface CallOptions {
  method?: string;
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** The client address (CF-Connecting-IP), which keys the per-IP window of calls without a valid key. */
  ip?: string;
  /** "manual" to see a redirect rather than follow it (the dashboard's tests). */
  redirect?: "follow" | "manual";
}

export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.ip) headers["CF-Connecting-IP"] = opts.ip;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  return worker.default.fetch(
    new Request(`${BASE}${path}`, { method: opts.method ?? (body !== undefined ? "POST" : "GET"), headers, body, redirect: opts.redirect }),
  );
}

export async function json<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export const admin = (path: string, opts: Omit<CallOptions, "key"> = {}) => call(`/admin/v1${path}`, { ...opts, key: ADMIN_TOKEN });

let counter = 0;

export interface TestAccount {
  id: string;
  key: string;
}

export async function newAccount(plan: "free" | "trial" | "premium" = "premium", credits = 100): Promise<TestAccount> {
  const res = await admin("/accounts", { body: { email: `user${++counter}-${crypto.randomUUID()}@example.com`, plan, credits } });
  if (res.status !== 201) throw new Error(`seeding an account failed: ${res.status} ${await res.text()}`);
  const body = await json(res);
  return { id: body.account.id, key: body.key };
}

export async function newKey(account: TestAccount, scopes: string[], expiresAt?: string): Promise<string> {
  const res = await admin(`/accounts/${account.id}/keys`, { body: { name: "test", scopes, expires_at: expiresAt } });
  if (res.status !== 201) throw new Error(`issuing a key failed: ${res.status} ${await res.text()}`);
  return (await json(res)).key;
}

export const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

export function job(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "sphere",
    num_generations: 20,
    num_parents_mating: 4,
    sol_per_pop: 10,
    num_genes: 5,
    fitness_func: FITNESS,
    fitness_func_entry: "fitness",
    ...overrides,
  };
}

export async function createSubmission(key: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call("/api/v1/submissions/", { key, body: job(overrides) });
  if (res.status !== 202) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return (await json(res)).id;
}

export { env };

// ---- Additions for the HTTP suite (test/http) ----

/** A fresh account whose concurrency/quota overrides are roomy, so only the gate under test can refuse a write. */
export async function newRoomyAccount(plan: "free" | "trial" | "premium" = "premium", credits = 100): Promise<TestAccount> {
  const account = await newAccount(plan, credits);
  const res = await admin(`/accounts/${account.id}`, {
    method: "PATCH",
    body: { overrides: { concurrent_submissions: 1000, inflight_api_runs: 1000, daily_quota: 1000 } },
  });
  if (res.status !== 200) throw new Error(`raising the limits failed: ${res.status} ${await res.text()}`);
  return account;
}

/** The token the GA worker presents for a run: hex HMAC-SHA256(RUN_TOKEN_SECRET, `run:${runId}`). */
export async function runToken(runId: string, secret = "test-run-token-secret"): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = await crypto.subtle.sign("HMAC", key, enc.encode(`run:${runId}`));
  return [...new Uint8Array(sig)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface CompletionOverrides {
  status?: "succeeded" | "failed";
  fitness?: number | null;
  result?: Record<string, unknown> | null;
  error?: { code: string; message: string } | null;
  metrics?: Record<string, unknown>;
  /** The run's own stdout and stderr, as the GA worker kept them. */
  output?: string;
  engine?: string | null;
  warnings?: { message: string; count: number }[];
  /** How far a failed run got. */
  progress?: { generations_completed: number; best_solution_fitness: number | null } | null;
}

/** The result of a two-objective run as the GA worker reports it (5 genes, a front of 3). */
/** A two-objective run's report as the GA worker sends it (docs/runner-protocol.md): PyGAD's best solution and history, and the maxima. */
export const TWO_OBJECTIVES = {
  best_solution: [0.1, -0.2, 0.3, 0, 0.05],
  best_solution_fitness: [0.9, -0.1],
  best_solution_objectives: [0.9, -0.1],
  best_solution_generation: 3,
  best_solutions_fitness: [
    [0.5, -2],
    [0.7, -1],
    [0.9, -0.1],
    [0.95, -0.1],
  ],
  objective_maxima: [
    [0.6, -1.5],
    [0.8, -0.9],
    [0.95, -0.05],
    [0.97, -0.05],
  ],
  num_objectives: 2,
  pareto_front: {
    size: 3,
    objectives: [
      [0.9, -0.1],
      [0.95, -0.5],
      [0.2, -0.05],
    ],
  },
  constraint_violations: null,
};

/** The GA worker's completion report body (docs/runner-protocol.md). */
export function completionBody(o: CompletionOverrides = {}): Record<string, unknown> {
  const status = o.status ?? "succeeded";
  const fitness = o.fitness === undefined ? -0.5 : o.fitness;
  const result =
    status === "failed"
      ? null
      : {
          best_solution: [0.1, -0.2, 0.3, 0, 0.05],
          best_solution_fitness: fitness,
          best_solution_generation: 3,
          best_solutions_fitness: [-3, -1, fitness, fitness],
          generations_completed: 4,
          population: [
            [0.1, -0.2, 0.3, 0, 0.05],
            [1, 2, 3, 4, 5],
          ],
          stopped_reason: "completed",
          ...(o.result ?? {}),
        };
  return {
    status,
    result: o.result === null ? null : result,
    error: status === "failed" ? (o.error ?? { code: "code_error", message: "line 3: ZeroDivisionError" }) : null,
    metrics: {
      cpu_seconds_used: 0.5,
      peak_memory_mb: 60,
      execution_duration_ms: 700,
      hit_time_cap: false,
      hit_memory_cap: false,
      ...o.metrics,
    },
    output: o.output ?? "",
    engine: o.engine === undefined ? "pygad" : o.engine,
    ...(o.warnings ? { warnings: o.warnings } : {}),
    ...(o.progress !== undefined ? { progress: o.progress } : {}),
  };
}

/** A file the GA worker uploads before its completion report (PUT …/population or …/files/{name}). */
export async function stageFile(
  runId: string,
  name: string,
  body: string,
  contentType = "application/json",
  token?: string,
): Promise<Response> {
  const path = name === "population.json" ? "population" : `files/${name}`;
  return worker.default.fetch(
    new Request(`${BASE}/internal/v1/runs/${runId}/${path}`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token ?? (await runToken(runId))}`, "Content-Type": contentType },
      body,
    }),
  );
}

/** Reports a run's end through the Worker's internal endpoint, exactly as the GA worker does. */
export async function completeRun(runId: string, overrides: CompletionOverrides = {}, token?: string): Promise<Response> {
  return worker.default.fetch(
    new Request(`${BASE}/internal/v1/runs/${runId}/complete`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token ?? (await runToken(runId))}`, "Content-Type": "application/json" },
      body: JSON.stringify(completionBody(overrides)),
    }),
  );
}

/** A progress report of a run through the Worker's internal endpoint, exactly as the GA worker sends it. */
export async function reportProgress(runId: string, body: Record<string, unknown>): Promise<Response> {
  return worker.default.fetch(
    new Request(`${BASE}/internal/v1/runs/${runId}/progress`, {
      method: "POST",
      headers: { Authorization: `Bearer ${await runToken(runId)}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/** A created submission whose latest run is `running` (what a GA worker's reports and uploads require). */
export async function runningRun(key: string, overrides: Record<string, unknown> = {}) {
  const submissionId = await createSubmission(key, overrides);
  const runId = (await getSubmission(key, submissionId)).latest_run.id as string;
  await env.DB.batch([
    env.DB.prepare("UPDATE runs SET status = 'running', started_at = ? WHERE id = ?").bind(new Date().toISOString(), runId),
    env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(submissionId),
  ]);
  return { submissionId, runId };
}

/** GET /submissions/{id} (asserting 200). */
export async function getSubmission(key: string, id: string): Promise<any> {
  const res = await call(`/api/v1/submissions/${id}`, { key });
  if (res.status !== 200) throw new Error(`get submission failed: ${res.status} ${await res.text()}`);
  return json(res);
}

/** The run id of a submission's latest run. */
export async function latestRunId(key: string, submissionId: string): Promise<string> {
  return (await getSubmission(key, submissionId)).latest_run.id;
}

/** Ends a submission's latest run through the internal endpoint; for a success, returns the new result's id. */
export async function finishSubmission(key: string, submissionId: string, overrides: CompletionOverrides = {}): Promise<string | null> {
  const runId = await latestRunId(key, submissionId);
  const res = await completeRun(runId, overrides);
  if (res.status !== 204) throw new Error(`completing run ${runId} failed: ${res.status} ${await res.text()}`);
  const row = await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runId).first<{ id: string }>();
  return row?.id ?? null;
}

/** A submission with one succeeded run and its result. */
export async function newResult(key: string, overrides: Record<string, unknown> = {}, completion: CompletionOverrides = {}) {
  const submissionId = await createSubmission(key, overrides);
  const resultId = await finishSubmission(key, submissionId, completion);
  if (!resultId) throw new Error("the completed run produced no result");
  return { submissionId, resultId };
}

/**
 * Asserts the documented error envelope (docs/api.md#errors): status, code, message, details (an object),
 * request_id equal to the X-Request-Id header. Returns the `error` object.
 */
export async function expectError(res: Response, status: number, code: string): Promise<any> {
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`expected a JSON error body (${status} ${code}), got ${res.status}: ${text.slice(0, 300)}`);
  }
  if (res.status !== status || body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status}: ${text.slice(0, 500)}`);
  }
  const err = body.error;
  if (typeof err.message !== "string" || err.message.length === 0) throw new Error(`error.message missing: ${text}`);
  if (typeof err.details !== "object" || err.details === null || Array.isArray(err.details))
    throw new Error(`error.details is not an object: ${text}`);
  const requestId = res.headers.get("X-Request-Id");
  if (!requestId || err.request_id !== requestId) throw new Error(`request_id ${err.request_id} != X-Request-Id ${requestId}`);
  if (Object.keys(body).length !== 1 || Object.keys(err).sort().join() !== "code,details,message,request_id") {
    throw new Error(`unexpected error body keys: ${text}`);
  }
  return err;
}

/** Field names of a 400 validation_failed body. */
export const failedFields = (err: any): string[] => (err.details.fields as { field: string }[]).map((f) => f.field);

/** Submission rows of an account, straight from D1. */
export async function dbSubmissionCount(accountId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM submissions WHERE account_id = ?").bind(accountId).first<{ n: number }>();
  return row!.n;
}

/** A client address of its own (IPv6 documentation range), so anonymous calls of one test do not share another's per-IP window. */
export function freshIp(): string {
  const hex = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8::${hex()}:${hex()}:${hex()}`;
}

/**
 * The same object holds a fresh roomy account in every test of the file (set in a beforeEach), and
 * spies are restored after each test: `const a = accountPerTest(); … a.key`.
 */
export function accountPerTest(): TestAccount {
  const current = { id: "", key: "" };
  beforeEach(async () => {
    Object.assign(current, await newRoomyAccount());
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return current;
}

/**
 * A POST /imports body as the Vilvik SDK's `vilvik.push(ga)` sends it for a 4-gene, 8-solution pygad.GA
 * run of 10 generations (the shapes of vilvik/_extract.py and vilvik/push.py).
 */
export function importBody(
  overrides: {
    ga_parameters?: Record<string, unknown>;
    code?: Record<string, unknown>;
    result?: Record<string, unknown>;
    [k: string]: unknown;
  } = {},
) {
  const { ga_parameters, code, result, ...rest } = overrides;
  const population = Array.from({ length: 8 }, (_, i) => [0.1 * i, -0.2, 0.3, 0.05 * i]);
  return {
    ga_parameters: {
      num_generations: 10,
      sol_per_pop: 8,
      num_parents_mating: 4,
      num_genes: 4,
      gene_type: "float",
      init_range_low: -4,
      init_range_high: 4,
      parent_selection_type: "sss",
      K_tournament: 3,
      crossover_type: "single_point",
      mutation_type: "random",
      mutation_num_genes: 1,
      random_mutation_min_val: -1.0,
      random_mutation_max_val: 1.0,
      keep_parents: -1,
      keep_elitism: 1,
      allow_duplicate_genes: true,
      random_seed: 1,
      mutation_by_replacement: false,
      save_best_solutions: false,
      save_solutions: false,
      sbx_crossover_eta: 30,
      polynomial_mutation_eta: 20,
      sample_size: 100,
      ...ga_parameters,
    },
    code: { fitness_func: `import numpy\n\n${FITNESS}`, fitness_func_entry: "fitness", ...code },
    result: {
      best_solution: population[0],
      best_solution_idx: 0,
      best_solution_fitness: -0.1025,
      best_solutions_fitness: [-3.4, -3.4, -3.3, -2.7, -1.0, -1.0, -0.3, -0.3, -0.3, -0.1025, -0.1025],
      generations_completed: 10,
      best_solution_generation: 9,
      gene_type_single: true,
      last_generation_fitness: population.map((_, i) => -0.1 * (i + 1)),
      population,
      ...result,
    },
    origin: { client: "sdk", sdk_version: "0.5.7", python_version: "3.11.2" },
    ...rest,
  };
}

/**
 * What the SDK sends for a two-objective (nsga2) run (`twoObjectiveImport`): every fitness a list of 2
 * values. The final population's front is rows 0, 1, 3, 5 and 7 (2 and 4 are dominated by 1 and 0, 6 by
 * 3); row 5 repeats row 1's genes, so the distinct front is rows 0, 1, 3 and 7 (`front`).
 */
export const TWO_OBJECTIVE_IMPORT = {
  population: Array.from({ length: 8 }, (_, i) => [0.1 * (i === 5 ? 1 : i), -0.2, 0.3, 0.05 * (i === 5 ? 1 : i)]),
  objectives: [
    [-1, -5],
    [-2, -3],
    [-3, -4],
    [-4, -1],
    [-1, -6],
    [-2, -3],
    [-5, -1],
    [-0.5, -7],
  ],
  history: Array.from({ length: 11 }, (_, g) => [-3 + g * 0.2, -7 + g * 0.4]),
  front: [0, 1, 3, 7],
};

export function twoObjectiveImport(result: Record<string, unknown> = {}) {
  const { population, objectives, history } = TWO_OBJECTIVE_IMPORT;
  return importBody({
    ga_parameters: { parent_selection_type: "nsga2" },
    result: {
      best_solution: population[0],
      best_solution_fitness: [-1, -5],
      best_solutions_fitness: history,
      last_generation_fitness: objectives,
      population,
      ...result,
    },
  });
}

/** POST /api/v1/data-files: `content` as the multipart part `file` named `name` (docs/api.md#data-files). */
export async function uploadDataFile(
  key: string,
  name: string,
  content: string | Uint8Array,
  opts: { contentType?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const form = new FormData();
  form.append("file", new File([content], name, { type: opts.contentType ?? "text/csv" }));
  return worker.default.fetch(
    new Request(`${BASE}/api/v1/data-files`, { method: "POST", headers: { Authorization: `Bearer ${key}`, ...opts.headers }, body: form }),
  );
}

/** A data file uploaded (asserting 201): its listing. */
export async function newDataFile(key: string, name: string, content: string | Uint8Array): Promise<any> {
  const res = await uploadDataFile(key, name, content);
  if (res.status !== 201) throw new Error(`uploading a data file failed: ${res.status} ${await res.text()}`);
  return json(res);
}

/** GET {report.url}/data-files/{sha256}, as the GA worker fetches a run's data file with the run's token. */
export async function fetchRunDataFile(runId: string, sha256: string, token?: string): Promise<Response> {
  return worker.default.fetch(
    new Request(`${BASE}/internal/v1/runs/${runId}/data-files/${sha256}`, {
      headers: { Authorization: `Bearer ${token ?? (await runToken(runId))}` },
    }),
  );
}

/** The hex SHA-256 of `content`. */
export async function sha256Of(content: string | Uint8Array): Promise<string> {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
