// One Durable Object per client IP: the rolling window of requests that carry no valid credential
// (counted before the 401).
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";
import { ensureRateSchema, hit, type RateDecision } from "./rate-window";

export class IpRateLimit extends DurableObject<Bindings> {
  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    ensureRateSchema(ctx.storage.sql);
  }

  rate(limit: number): RateDecision {
    return hit(this.ctx.storage.sql, [{ name: "ip", label: "ip", limit }], Date.now());
  }
}
