// Routes for `npm run bench` only, enabled by BENCH_ROUTES=true (404 otherwise): a bare Hono route to
// compare the gated API against, and a loop of admissions straight into one account's Durable Object.

import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { config } from "../../config";
import { accountGate } from "../../do/account-gate/client";
import { rateLimits } from "../../do/rate-window";
import { notFound } from "../../errors";
import { newId } from "../../lib/ids";
import { probeDatabase } from "../../storage/db";
import type { AppEnv } from "../context";

const enabled = createMiddleware<AppEnv>(async (c, next) => {
  if (!config(c.env).benchRoutes) throw notFound("endpoint");
  await next();
});

export const benchRoutes = new Hono<AppEnv>()
  .use("*", enabled)
  .get("/bare", (c) => c.json({ ok: true }))
  // The same, for a request that carries a JSON body (the gated write's baseline: same bytes on the wire).
  .post("/bare", async (c) => c.json({ ok: true, fields: Object.keys(await c.req.json()).length }))
  // One binding call each, to show what a single D1 query or Durable Object call costs here.
  .get("/d1", async (c) => c.json(await probeDatabase(c.env.DB)))
  .get("/do", async (c) => c.json(await accountGate(c.env, "bench").usage("bench", rateLimits(c.env))))
  .get("/admissions", async (c) => {
    const n = Math.min(Number(c.req.query("n") ?? 1000), 100_000);
    const gate = accountGate(c.env, `bench-${newId()}`);
    const ids = Array.from({ length: n }, () => newId());
    const limits = { concurrentLimit: n, inflightLimit: n, inFlight: true, dailyQuota: n, laterFailure: null };
    const started = performance.now();
    for (const runId of ids) await gate.admit({ runId, ...limits });
    const elapsedMs = performance.now() - started;
    for (const runId of ids) await gate.cancel(runId);
    return c.json({ admissions: n, elapsed_ms: elapsedMs, per_second: (n / elapsedMs) * 1000 });
  });
