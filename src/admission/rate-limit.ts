// The per-minute gate's answer as HTTP: the X-RateLimit-* headers every response carries, the 429, and
// the write whose count is taken by its admission call (one Durable Object call for both).

import type { RateDecision, RateLimits } from "../do/rate-window";
import { ApiError } from "../errors";

export function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(decision.window.limit),
    "X-RateLimit-Remaining": String(decision.window.remaining),
    "X-RateLimit-Reset": String(decision.window.reset),
  };
}

export function rateLimitedError(decision: Extract<RateDecision, { allowed: false }>): ApiError {
  return new ApiError(
    "rate_limited",
    `Too many requests for this ${decision.bucket}; retry after ${decision.retryAfter} s.`,
    { retry_after: decision.retryAfter, bucket: decision.bucket },
    { ...rateHeaders(decision), "Retry-After": String(decision.retryAfter) },
  );
}

/**
 * A write (create, reexecute, continue) by a valid key: its per-minute count is taken by the account
 * Durable Object in the same call as the admission, or — when the write is refused before it gets
 * there (invalid body, unknown submission, a replayed idempotent response) — right after it.
 */
export interface DeferredRate {
  keyPrefix: string;
  limits: RateLimits;
  /** Set once the request has been counted. */
  decision: RateDecision | null;
}
