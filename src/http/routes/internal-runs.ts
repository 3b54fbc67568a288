// /internal/v1/runs/{id}/progress|complete: the GA worker's reports (docs/runner-protocol.md).
// Authenticated per run by HMAC-SHA256(RUN_TOKEN_SECRET, run id), which the user's code never sees.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import type { AppEnv } from "../context";
import { bearerToken } from "../middleware/auth";
import { ApiError } from "../../errors";
import { constantTimeEqual } from "../../lib/crypto";
import { recordProgress, runToken, startPopulationFile } from "../../domain/runs";
import { stagedPopulationKey } from "../../domain/result-files";
import { getDb } from "../../storage/db";
import { getRun } from "../../storage/submissions";
import { endRun, type RunOutcome } from "../../domain/transitions";

// A fitness function that returns several objectives yields a list per value (see multiObjective).
const fitness = z.union([z.number(), z.array(z.number())]).nullable();
const single = (v: number | number[] | null) => (Array.isArray(v) ? (v[0] ?? null) : v);

const progressBody = z.object({ generations_completed: z.number().int().min(0), best_solution_fitness: fitness });

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
      best_solution_fitness: fitness,
      best_solution_generation: z.number().int().nullable(),
      best_solutions_fitness: z.array(fitness),
      generations_completed: z.number().int().min(0),
      population: z.array(z.array(z.number())).nullable().optional(),
      stopped_reason: z.enum(["completed", "stop_criteria", "callback_stop", "time_cap", "memory_cap"]),
    })
    .nullable(),
  error: z.object({ code: z.string().max(64), message: z.string().max(4000) }).nullable(),
  metrics,
  output: z.string().max(128 * 1024).nullable().optional(),
  engine: z.string().max(64).nullable().optional(),
});

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
  if (!run || run.status !== "running") throw notLive();
  return run;
}

export const internalRunsRoutes = new Hono<AppEnv>()
  .use("/:id/*", runAuth)
  .post("/:id/progress", async (c) => {
    const body = await parse(c.req.raw, progressBody);
    if (!body) throw unreadable();
    const progress = { generations_completed: body.generations_completed, best_solution_fitness: single(body.best_solution_fitness) };
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
  // The final population, streamed to R2 unparsed before the completion report; endRun() files it.
  .put("/:id/population", async (c) => {
    const runId = c.req.param("id");
    await liveRun(c.env, runId);
    // With a Content-Length the body streams straight to R2; without one it is read first.
    const body = c.req.header("Content-Length") && c.req.raw.body ? c.req.raw.body : await c.req.arrayBuffer();
    await c.env.FILES.put(stagedPopulationKey(runId), body, { httpMetadata: { contentType: "application/json" } });
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

const UNREADABLE = {
  status: "failed",
  error: { code: "internal_error", message: "The GA worker sent a completion report the service could not read." },
} as const;

/** Allele runs single-objective GAs: a fitness that returned several values fails the run, clearly. */
function completionOutcome(body: z.output<typeof completeBody>): RunOutcome {
  const base = { metrics: body.metrics, output: body.output ?? null, engine: body.engine ?? null };
  const r = body.result;
  if (r && (Array.isArray(r.best_solution_fitness) || r.best_solutions_fitness.some(Array.isArray))) {
    return {
      ...base,
      status: "failed",
      error: { code: "code_error", message: "fitness_func returned several values; Allele runs single-objective GAs, so return one number." },
    };
  }
  if (body.status === "failed" || !r) {
    return { ...base, status: "failed", error: body.error ?? { code: "internal_error", message: "The run failed." } };
  }
  return {
    ...base,
    status: "succeeded",
    result: { ...r, best_solution_fitness: single(r.best_solution_fitness), best_solutions_fitness: r.best_solutions_fitness.map(single) },
  };
}
