// /internal/v1/runs/{id}/progress|complete: the GA worker's reports (docs/runner-protocol.md).
// Authenticated per run by HMAC-SHA256(RUN_TOKEN_SECRET, run id), which the user's code never sees.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import type { AppEnv } from "../../env";
import { ApiError } from "../../errors";
import { constantTimeEqual } from "../../domain/crypto";
import { recordProgress, runToken } from "../../domain/runs";
import { endRun } from "../../domain/transitions";

const num = z.number().nullable();

const progressBody = z.object({ generations_completed: z.number().int().min(0), best_solution_fitness: num });

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
      best_solution_fitness: num,
      best_solution_generation: z.number().int().nullable(),
      best_solutions_fitness: z.array(num),
      generations_completed: z.number().int().min(0),
      population: z.array(z.array(z.number())),
      stopped_reason: z.enum(["completed", "stop_criteria", "callback_stop", "time_cap", "memory_cap"]),
    })
    .nullable(),
  error: z.object({ code: z.string().max(64), message: z.string().max(4000) }).nullable(),
  metrics,
  output: z.string().max(128 * 1024).nullable().optional(),
  engine: z.string().max(64).nullable().optional(),
});

const runAuth = createMiddleware<AppEnv>(async (c, next) => {
  const presented = /^Bearer\s+(\S+)$/.exec(c.req.header("Authorization") ?? "")?.[1] ?? "";
  const expected = await runToken(c.env, c.req.param("id")!);
  if (!constantTimeEqual(presented, expected)) throw new ApiError("unauthorized", "Bad run token.");
  await next();
});

async function parse<T extends z.ZodType>(req: Request, schema: T): Promise<z.output<T>> {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    throw new ApiError("malformed_json", "The report is not valid JSON.");
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ApiError("validation_failed", "The report does not match the protocol.", { issues: parsed.error.issues.slice(0, 5) });
  return parsed.data;
}

const notLive = () => new ApiError("invalid_state", "The run is not live any more.");

export const internalRunsRoutes = new Hono<AppEnv>()
  .use("/:id/*", runAuth)
  .post("/:id/progress", async (c) => {
    const body = await parse(c.req.raw, progressBody);
    if (!(await recordProgress(c.env, c.req.param("id"), body))) throw notLive();
    return c.body(null, 204);
  })
  .post("/:id/complete", async (c) => {
    const body = await parse(c.req.raw, completeBody);
    const ended = await endRun(c.env, c.req.param("id"), {
      status: body.status,
      result: body.result,
      error: body.status === "failed" ? body.error ?? { code: "internal_error", message: "The run failed." } : null,
      metrics: body.metrics,
      output: body.output ?? null,
      engine: body.engine ?? null,
    });
    if (!ended) throw notLive();
    return c.body(null, 204);
  });
