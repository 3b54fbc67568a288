// Who starts a run from the REST API: the calling key's account, paid with credits, source `api`.
import type { Context } from "hono";
import type { Starter } from "../../operations/runs";
import type { AppEnv } from "../context";

export const apiStarter = (c: Context<AppEnv>): Starter => ({
  account: c.get("caller").account,
  deferredRate: c.get("deferredRate"),
  source: "api",
  payment: "credits",
  waitUntil: (p) => c.executionCtx.waitUntil(p),
});
