// One Durable Object per client IP: the rolling window of requests that carry no valid credential
// (counted before the 401), and the window of failed dashboard sign-ins (docs/dashboard.md#sign-in).
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../../env";
import { type Bucket, ensureRateSchema, hit, peek, type RateDecision } from "../rate-window";

/** Failed sign-ins (a wrong key, a used or unknown link, an unknown device code) per IP: 10 per rolling 15 minutes. */
export const SIGN_IN_FAILURES = { limit: 10, windowMs: 15 * 60_000 };
// "long:" buckets are kept past the 60 s windows' cleanup (rate-window.ts) and trimmed here.
const signIn: Bucket = { name: "long:sign_in", label: "sign_in", ...SIGN_IN_FAILURES };

export class IpRateLimit extends DurableObject<Bindings> {
  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    ensureRateSchema(ctx.storage.sql);
  }

  rate(limit: number): RateDecision {
    return hit(this.ctx.storage.sql, [{ name: "ip", label: "ip", limit }], Date.now());
  }

  /** Seconds until this IP may try to sign in again, or 0 when it may now. */
  signInWait(): number {
    const now = Date.now();
    this.ctx.storage.sql.exec(`DELETE FROM hits WHERE bucket = ? AND at <= ?`, signIn.name, now - signIn.windowMs!);
    const state = peek(this.ctx.storage.sql, signIn, now);
    return state.remaining > 0 ? 0 : Math.max(1, state.reset - Math.floor(now / 1000));
  }

  /** Counts a failed sign-in from this IP. */
  signInFailed(): void {
    hit(this.ctx.storage.sql, [signIn], Date.now());
  }
}
