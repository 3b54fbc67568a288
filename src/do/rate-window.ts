// Rolling 60-second request windows over a Durable Object's SQLite storage. Exact: every counted
// request is a row; a window's count is the rows younger than 60 s. Called only from synchronous
// Durable Object code, so a check and the insert that follows it cannot interleave with another request.

import { config } from "../config";

export const WINDOW_MS = 60_000;

/** Requests per window: per key, per user (all of its keys), per IP without a valid credential. */
export interface RateLimits {
  key: number;
  user: number;
  ip: number;
}

/** docs/api.md#rate-limits: 60 per key, twice that per user, 60 per IP; RATE_LIMIT_* override them. */
export const rateLimits = (env: object): RateLimits => config(env).rateLimits;

export interface Bucket {
  name: string; // e.g. "key:alk_7Hq2xY9a", "user", "ip"
  label: "key" | "user" | "ip" | "sign_in";
  limit: number;
  /** The window's length; WINDOW_MS (60 s) unless given. */
  windowMs?: number;
}

export interface WindowState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window next frees a place (now + 60 s when empty). */
  reset: number;
}

export type RateDecision =
  | { allowed: true; window: WindowState }
  | { allowed: false; window: WindowState; bucket: Bucket["label"]; retryAfter: number };

export function ensureRateSchema(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS hits (bucket TEXT NOT NULL, at INTEGER NOT NULL)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS hits_bucket_at ON hits (bucket, at)`);
}

function stateOf(sql: SqlStorage, bucket: Bucket, now: number): WindowState & { oldest: number | null } {
  const row = sql
    .exec<{ n: number; oldest: number | null }>(
      `SELECT count(*) AS n, min(at) AS oldest FROM hits WHERE bucket = ? AND at > ?`,
      bucket.name,
      now - (bucket.windowMs ?? WINDOW_MS),
    )
    .one();
  const reset = Math.ceil(((row.oldest ?? now) + (bucket.windowMs ?? WINDOW_MS)) / 1000);
  return { limit: bucket.limit, remaining: Math.max(0, bucket.limit - row.n), reset, oldest: row.oldest };
}

/**
 * Counts one request against every bucket, or none when any bucket is full. The first bucket is the
 * one whose window the response headers describe.
 */
export function hit(sql: SqlStorage, buckets: Bucket[], now: number): RateDecision {
  sql.exec(`DELETE FROM hits WHERE at <= ? AND bucket NOT LIKE 'long:%'`, now - WINDOW_MS);
  const states = buckets.map((b) => stateOf(sql, b, now));
  const shown = states[0]!;
  const full = states.findIndex((s) => s.remaining === 0);
  if (full >= 0) {
    const blocking = states[full]!;
    const retryAfter = Math.max(1, Math.ceil(((blocking.oldest ?? now) + (buckets[full]!.windowMs ?? WINDOW_MS) - now) / 1000));
    return { allowed: false, window: windowOf(shown), bucket: buckets[full]!.label, retryAfter };
  }
  for (const b of buckets) sql.exec(`INSERT INTO hits (bucket, at) VALUES (?, ?)`, b.name, now);
  return {
    allowed: true,
    window: {
      ...windowOf(shown),
      remaining: shown.remaining - 1,
      reset: shown.oldest === null ? Math.ceil((now + (buckets[0]!.windowMs ?? WINDOW_MS)) / 1000) : shown.reset,
    },
  };
}

/** The window of one bucket without counting a request. */
export function peek(sql: SqlStorage, bucket: Bucket, now: number): WindowState {
  return windowOf(stateOf(sql, bucket, now));
}

const windowOf = (s: WindowState) => ({ limit: s.limit, remaining: s.remaining, reset: s.reset });
