// /internal/v1/runs/{id}/progress|complete: the GA worker's reports (docs/runner-protocol.md).
// Authenticated per run by HMAC-SHA256(RUN_TOKEN_SECRET, run id), which the user's code never sees.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { limitsFor } from "../../admission/admission";
import { checkpointPlan } from "../../admission/limits";
import { config } from "../../config";
import { runDataFiles } from "../../domain/data-files";
import { checkpointKey, isStagedFile, POPULATION_FILE, STAGED_FILES, type StagedFile, stagedKey } from "../../domain/result-files";
import { runMessage } from "../../domain/run-queue";
import { recordCheckpoint, recordProgress, resumeRun, runToken, startPopulationFile, TRAIL_POINTS_PER_REPORT } from "../../domain/runs";
import { endRun, type RunOutcome } from "../../domain/transitions";
import { runsQueue } from "../../env";
import { ApiError } from "../../errors";
import { constantTimeEqual } from "../../lib/crypto";
import { getAccount } from "../../storage/accounts";
import { getBlob } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import { getRun, type RunRow } from "../../storage/submissions";
import { bearerToken } from "../../surface/caller";
import type { AppEnv } from "../context";

// One objective's fitness: JSON has no infinity, so the GA worker writes an infinite one as text.
const scalar = z.union([z.number(), z.literal("inf"), z.literal("-inf")]).nullable();
// Several objectives: one finite number per objective (docs/runner-protocol.md).
const vector = z.array(z.number()).min(1).max(1000);
/** What progress shows: one finite number, else null (an old worker's list: its only value). */
const single = (v: number | string | number[] | null) =>
  Array.isArray(v) ? (v.length === 1 ? v[0]! : null) : typeof v === "number" ? v : null;

const stats4 = z.tuple([z.number().nullable(), z.number().nullable(), z.number().nullable(), z.number().nullable()]);
const firstObjectives = z.array(z.number().nullable()).min(1).max(1000);
/** One trail point: [generation, best, maxima, best solution's objectives, population statistics]. */
const trailPoint = z.union([
  z.tuple([z.number().int().min(0), z.number().nullable()]),
  z.tuple([z.number().int().min(0), z.number().nullable(), firstObjectives.nullable()]),
  z.tuple([z.number().int().min(0), z.number().nullable(), firstObjectives.nullable(), firstObjectives.nullable()]),
  z.tuple([z.number().int().min(0), z.number().nullable(), firstObjectives.nullable(), firstObjectives.nullable(), stats4.nullable()]),
]);

const progressBody = z.object({
  generations_completed: z.number().int().min(0),
  best_solution_fitness: z.union([z.number(), z.string(), z.array(z.number())]).nullable(),
  // Several objectives, the dashboard's live chart: the best solution's objective values (PyGAD's
  // history) and each objective's maximum over the population.
  best_solution_objectives: vector.nullable().optional(),
  best_objectives: vector.nullable().optional(),
  // One objective: the population's [best, mean, median, worst] fitness (null where not finite).
  population: z.tuple([z.number().nullable(), z.number().nullable(), z.number().nullable(), z.number().nullable()]).nullable().optional(),
  // The generations since the previous report as trail points, the last this report's own (a worker
  // before issue 29's every-generation trail sends none; docs/runner-protocol.md).
  points: z.array(trailPoint).min(1).max(TRAIL_POINTS_PER_REPORT).optional(),
});

// One value of population_history: a number or null; several objectives, one per objective.
const stat = z.union([z.number().nullable(), z.array(z.number().nullable()).min(1).max(1000)]);

const metrics = z.object({
  cpu_seconds_used: z.number().min(0),
  peak_memory_mb: z.number().min(0).transform(Math.round),
  execution_duration_ms: z.number().min(0).transform(Math.round),
  hit_time_cap: z.boolean(),
  hit_memory_cap: z.boolean(),
});

const completeBody = z.object({
  status: z.enum(["succeeded", "failed"]),
  result: z
    .object({
      best_solution: z.array(z.number()),
      // One objective: a number (or its infinity as text); several: the best solution's objective values.
      best_solution_fitness: z.union([scalar, vector]),
      best_solution_objectives: vector.nullable().optional(),
      best_solution_generation: z.number().int().nullable(),
      best_solutions_fitness: z.array(z.union([scalar, vector])),
      // Several objectives: each one's maximum over the population, per generation.
      objective_maxima: z.array(vector).nullable().optional(),
      // The population's statistics per generation (docs/runner-protocol.md); absent from an older worker.
      population_history: z
        .array(z.object({ generation: z.number().int().min(0), best: stat, mean: stat, median: stat, worst: stat }))
        .max(2000)
        .nullable()
        .optional(),
      generations_completed: z.number().int().min(0),
      population: z.array(z.array(z.number())).nullable().optional(),
      stopped_reason: z.enum(["completed", "stop_criteria", "callback_stop", "time_cap", "memory_cap"]),
      num_objectives: z.number().int().min(1).max(1000).optional(),
      pareto_front: z
        .object({ size: z.number().int().min(0), objectives: z.array(vector) })
        .nullable()
        .optional(),
      constraint_violations: z
        .array(z.object({ gene: z.number().int().min(0), value: z.number().nullable() }))
        .nullable()
        .optional(),
    })
    .nullable(),
  // stage "compile": the user's code did not compile, none of it ran (docs/runner-protocol.md).
  error: z.object({ code: z.string().max(64), message: z.string().max(4000), stage: z.literal("compile").optional() }).nullable(),
  metrics,
  output: z
    .string()
    .max(128 * 1024)
    .nullable()
    .optional(),
  engine: z.string().max(64).nullable().optional(),
  warnings: z
    .array(z.object({ message: z.string().max(1000), count: z.number().int().min(1) }))
    .max(100)
    .optional(),
  // How far a failed run got (docs/runner-protocol.md).
  progress: z
    .object({ generations_completed: z.number().int().min(0), best_solution_fitness: z.number().nullable() })
    .nullable()
    .optional(),
});

const suspendBody = z.object({ metrics, checkpointed: z.boolean() });

const runAuth = createMiddleware<AppEnv>(async (c, next) => {
  const presented = bearerToken(c.req.header("Authorization"));
  const expected = await runToken(c.env, c.req.param("id")!);
  if (!constantTimeEqual(presented, expected)) throw new ApiError("unauthorized", "Bad run token.");
  await next();
});

/** The report's body, or null when it is not JSON of the protocol's shape. */
async function parse<T extends z.ZodType>(req: Request, schema: T): Promise<z.output<T> | null> {
  const parsed = schema.safeParse(await req.json().catch(() => undefined));
  if (!parsed.success) console.error("unreadable worker report", req.url, parsed.error.issues.slice(0, 5));
  return parsed.success ? parsed.data : null;
}

const unreadable = () => new ApiError("validation_failed", "The report does not match docs/runner-protocol.md.");

const notLive = () => new ApiError("invalid_state", "The run is not live any more.");

async function liveRun(env: AppEnv["Bindings"], runId: string) {
  const run = await getRun(getDb(env.DB), runId);
  if (run?.status !== "running") throw notLive();
  return run;
}

export const internalRunsRoutes = new Hono<AppEnv>()
  .use("/:id/*", runAuth)
  .post("/:id/progress", async (c) => {
    const body = await parse(c.req.raw, progressBody);
    if (!body) throw unreadable();
    const progress = {
      generations_completed: body.generations_completed,
      best_solution_fitness: single(body.best_solution_fitness),
      best_solution_objectives: body.best_solution_objectives ?? null,
      best_objectives: body.best_objectives ?? null,
      population: body.population ?? null,
      points: body.points ?? null,
    };
    if (!(await recordProgress(c.env, c.req.param("id"), progress))) throw notLive();
    return c.body(null, 204);
  })
  // The start population of a continue run, streamed from R2 (it can be far larger than a report).
  .get("/:id/initial-population", async (c) => {
    const file = await startPopulationFile(c.env, await liveRun(c.env, c.req.param("id")));
    const object = file ? await c.env.FILES.get(file.r2Key) : null;
    if (!object) throw new ApiError("not_found", "This run has no start population.");
    return new Response(object.body, { headers: { "Content-Type": "application/json", "Content-Length": String(object.size) } });
  })
  // A data file of the run (by its sha256: docs/runner-protocol.md), streamed from R2; only the run's own.
  .get("/:id/data-files/:sha256", async (c) => {
    const run = await liveRun(c.env, c.req.param("id"));
    const sha256 = c.req.param("sha256");
    const named = (await runDataFiles(c.env, run)).some((f) => f?.sha256 === sha256);
    const blob = named ? await getBlob(getDb(c.env.DB), run.accountId, sha256) : undefined;
    const object = blob ? await c.env.FILES.get(blob.r2Key) : null;
    if (!object) throw new ApiError("not_found", "This run has no such data file.");
    return new Response(object.body, {
      headers: { "Content-Type": "application/octet-stream", "Content-Length": String(object.size) },
    });
  })
  // The final population and the other files too large for a report, streamed to R2 unparsed before the
  // completion report; endRun() files them.
  .put("/:id/population", (c) => stage(c.env, c.req.raw, c.req.param("id"), POPULATION_FILE))
  .put("/:id/files/:name", (c) => {
    const name = c.req.param("name");
    if (!isStagedFile(name) || name === POPULATION_FILE) throw new ApiError("not_found", "The GA worker uploads no such file.");
    return stage(c.env, c.req.raw, c.req.param("id"), name);
  })
  // A durable run's checkpoint (docs/architecture.md#durable-runs-issue-28): streamed to R2 unread under
  // the one key the server chose for this run (the latest replaces the one before), then recorded with
  // its generation and what the worker had measured of the run's segment by then.
  .put("/:id/checkpoint", async (c) => {
    const runId = c.req.param("id");
    const run = await liveRun(c.env, runId);
    const generation = headerCount(c.req.header("X-Allele-Generation"));
    const length = headerCount(c.req.header("Content-Length"));
    const limits = checkpointPlan(await runLimits(c.env, run), config(c.env).checkpointSeconds);
    if (generation === null || length === null || length === 0 || !c.req.raw.body)
      throw new ApiError("validation_failed", "A checkpoint needs X-Allele-Generation and a Content-Length.");
    if (length > limits.max_bytes) throw new ApiError("validation_failed", "The checkpoint is past the run's cap.");
    // An older checkpoint arriving late (a retried upload) never replaces a newer one.
    if (run.checkpointGeneration !== null && generation < run.checkpointGeneration) throw notLive();
    await c.env.FILES.put(checkpointKey(runId), c.req.raw.body, { httpMetadata: { contentType: "application/octet-stream" } });
    const usage = {
      generation,
      cpuSeconds: headerNumber(c.req.header("X-Allele-Cpu-Seconds")) ?? 0,
      wallMs: Math.round(headerNumber(c.req.header("X-Allele-Wall-Ms")) ?? 0),
      peakMb: Math.round(headerNumber(c.req.header("X-Allele-Peak-Mb")) ?? 0),
    };
    if (!(await recordCheckpoint(c.env, runId, usage))) throw notLive();
    return c.body(null, 204);
  })
  // The checkpoint a resumed run goes on from, streamed from R2 to the GA worker (which hands it to the run unread).
  .get("/:id/checkpoint", async (c) => {
    await liveRun(c.env, c.req.param("id"));
    const object = await c.env.FILES.get(checkpointKey(c.req.param("id")));
    if (!object) throw new ApiError("not_found", "This run has no checkpoint.");
    return new Response(object.body, { headers: { "Content-Type": "application/octet-stream", "Content-Length": String(object.size) } });
  })
  // A drained GA worker hands the run back (SIGTERM: docs/architecture.md#durable-runs-issue-28): it goes
  // back in line at once to go on from its last checkpoint. `checkpointed`: one was stored at the drain,
  // so the segment's measured usage is billed whole; else only up to its last periodic checkpoint.
  .post("/:id/suspend", async (c) => {
    const body = await parse(c.req.raw, suspendBody);
    if (!body) throw unreadable();
    const run = await liveRun(c.env, c.req.param("id"));
    const segment = body.checkpointed
      ? { cpuSeconds: body.metrics.cpu_seconds_used, wallMs: body.metrics.execution_duration_ms, peakMb: body.metrics.peak_memory_mb }
      : undefined;
    if (!(await resumeRun(c.env, run, segment))) throw notLive();
    await runsQueue(c.env).send(runMessage(run));
    return c.body(null, 204);
  })
  .post("/:id/complete", async (c) => {
    const body = await parse(c.req.raw, completeBody);
    const runId = c.req.param("id");
    // A completion the Worker cannot read still ends the run, so it never hangs as running.
    const ended = await endRun(c.env, runId, body ? completionOutcome(body) : UNREADABLE);
    if (!ended) throw notLive();
    if (!body) throw unreadable();
    return c.body(null, 204);
  });

async function stage(env: AppEnv["Bindings"], req: Request, runId: string, name: StagedFile): Promise<Response> {
  await liveRun(env, runId);
  // With a Content-Length the body streams straight to R2; without one it is read first.
  const body = req.headers.get("Content-Length") && req.body ? req.body : await req.arrayBuffer();
  await env.FILES.put(stagedKey(runId, name), body, { httpMetadata: { contentType: STAGED_FILES[name] } });
  return new Response(null, { status: 204 });
}

/** A header holding a whole number ≥ 0, else null. */
function headerCount(value: string | undefined): number | null {
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : null;
}

/** A header holding a finite number ≥ 0, else null. */
function headerNumber(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,15}(\.\d{1,9})?$/.test(value)) return null;
  return Number(value);
}

/** The caps of the run as it was started (how it is paid: docs/api.md#payment). */
async function runLimits(env: AppEnv["Bindings"], run: RunRow) {
  const account = await getAccount(getDb(env.DB), run.accountId);
  if (!account) throw notLive();
  return limitsFor(env, account, run.paidWithCredits ? "credits" : "plan");
}

const UNREADABLE = {
  status: "failed",
  error: { code: "internal_error", message: "The GA worker sent a completion report the service could not read." },
} as const;

/** The run's end as the completion report says it (docs/runner-protocol.md). */
function completionOutcome(body: z.output<typeof completeBody>): RunOutcome {
  const base = { metrics: body.metrics, output: body.output ?? null, engine: body.engine ?? null, warnings: body.warnings ?? [] };
  const r = body.result;
  if (body.status === "failed" || !r) {
    return {
      ...base,
      status: "failed",
      error: body.error ? { code: body.error.code, message: body.error.message } : { code: "internal_error", message: "The run failed." },
      compileFailed: body.error?.code === "code_error" && body.error.stage === "compile",
      progress: body.progress ?? null,
    };
  }
  return {
    ...base,
    status: "succeeded",
    result: {
      ...r,
      best_solution_objectives: r.best_solution_objectives ?? (Array.isArray(r.best_solution_fitness) ? r.best_solution_fitness : null),
      objective_maxima: r.objective_maxima ?? null,
      population_history: r.population_history ?? null,
      num_objectives: r.num_objectives ?? 1,
      pareto_front: r.pareto_front ?? null,
      constraint_violations: r.constraint_violations ?? null,
    },
  };
}
