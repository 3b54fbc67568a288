// One Durable Object per account: the state that must be exact when requests race — the rate windows of
// its keys and of the user, concurrency slots and in-flight places, the rolling daily quota, and
// idempotency records. Every method runs to completion on SQLite without awaiting I/O, so two racing
// writes can never both take the last slot.
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../../env";
import { liveRunIds } from "../../storage/run-end";
import { type Bucket, ensureRateSchema, hit, peek, type RateDecision, type RateLimits, type WindowState } from "../rate-window";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Idempotency records live this long. */
export const IDEMPOTENCY_TTL_MS = DAY_MS;
/** A first request that has not finished after this long no longer blocks its key (it crashed). */
const IDEMPOTENCY_PENDING_MS = 60_000;
/** A slot is checked against D1 only once it is this old (its run row is written after admission). */
const RECONCILE_GRACE_MS = 60_000;
const RECONCILE_EVERY_MS = 5 * 60_000;

export interface GateError {
  code: "capacity_exceeded" | "too_many_active_api_requests" | "tier_limit_exceeded" | "insufficient_credits";
  message: string;
  details: Record<string, unknown>;
}

export interface AdmitRequest {
  runId: string;
  concurrentLimit: number;
  inflightLimit: number;
  /** Whether the run counts as an in-flight API run (paid with credits; docs/api.md#payment). */
  inFlight: boolean;
  dailyQuota: number;
  /** The first failing gate that comes after the quota (parameter caps, credits), computed by the caller. */
  laterFailure: GateError | null;
  /** The write's per-minute count, taken first in the same call (gates/rate-limit.ts). */
  rate?: { keyPrefix: string; limits: RateLimits } | null;
  /**
   * A sweep's child (docs/api.md#sweeps): its quota unit was taken with its sweep (`admitSweep`), and a
   * slot already held under its run id means an earlier admission of it got this far — it is admitted,
   * nothing more is taken (a pass that died before D1 recorded the admission is simply done again).
   */
  child?: boolean;
}

/** A sweep's creation (docs/api.md#sweep-gates): its children's quota units, taken at once. */
export interface SweepAdmitRequest {
  /** The children's run ids: each takes a quota unit under its id. */
  runIds: string[];
  dailyQuota: number;
  /** The first failing gate after the quota (parameter caps of any combination, credits), computed by the caller. */
  laterFailure: GateError | null;
  /** The sweep request's per-minute count: one request, taken first in the same call. */
  rate?: { keyPrefix: string; limits: RateLimits } | null;
}

export interface Admission {
  /** The per-minute decision when `rate` was asked for; a refused one takes nothing else. */
  rate: RateDecision | null;
  /** The first gate that failed, or null: admitted. */
  refusal: GateError | null;
}

export type IdempotencyBegin =
  | { state: "new" }
  | { state: "replay"; status: number; body: string }
  | { state: "mismatch" }
  | { state: "in_progress" };

export interface Usage {
  concurrent_submissions: number;
  inflight_api_runs: number;
  daily_quota_used: number;
  rate_window: WindowState;
}

const keyBucket = (prefix: string, limit: number): Bucket => ({ name: `key:${prefix}`, label: "key", limit });

export class AccountGate extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ensureRateSchema(this.sql);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS slots (run_id TEXT PRIMARY KEY, taken_at INTEGER NOT NULL, in_flight INTEGER NOT NULL DEFAULT 1)`,
    );
    // Objects made before website runs existed have slots without in_flight: every one of them was a credit run.
    try {
      this.sql.exec(`ALTER TABLE slots ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 1`);
    } catch {
      // the column is there already
    }
    this.sql.exec(`CREATE TABLE IF NOT EXISTS quota (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL)`);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
        status INTEGER, body TEXT, created_at INTEGER NOT NULL)`,
    );
  }

  /** Counts a request of the key against its window and the user's; no count when either is full. */
  rate(keyPrefix: string, limits: RateLimits): RateDecision {
    const user: Bucket = { name: "user", label: "user", limit: limits.user };
    return hit(this.sql, [keyBucket(keyPrefix, limits.key), user], Date.now());
  }

  /**
   * GET /account's count and the usage it shows, in one step so the usage's rate window includes this
   * request; a refused request takes nothing and gets no usage.
   */
  rateWithUsage(keyPrefix: string, limits: RateLimits): { rate: RateDecision; usage: Usage | null } {
    const rate = this.rate(keyPrefix, limits);
    return { rate, usage: rate.allowed ? this.usage(keyPrefix, limits) : null };
  }

  /**
   * The write's per-minute count (when asked for), then concurrent submissions, in-flight API runs and
   * the daily quota, checked and taken in one step, then the caller's later gates; the first that fails
   * is returned and nothing (but the per-minute count) is taken.
   */
  admit(req: AdmitRequest): Admission {
    const rate = req.rate ? this.rate(req.rate.keyPrefix, req.rate.limits) : null;
    if (rate && !rate.allowed) return { rate, refusal: null };
    return { rate, refusal: this.take(req) };
  }

  /**
   * A sweep's creation: its per-minute count (one request), then room in the daily quota for every child,
   * then the caller's later gates; when all pass, a quota unit per child is taken (its slot is taken when
   * it is admitted, `admit` with `child`). The first that fails is returned and nothing is taken.
   */
  admitSweep(req: SweepAdmitRequest): Admission {
    const rate = req.rate ? this.rate(req.rate.keyPrefix, req.rate.limits) : null;
    if (rate && !rate.allowed) return { rate, refusal: null };
    const now = Date.now();
    this.sql.exec(`DELETE FROM quota WHERE at <= ?`, now - DAY_MS);
    const used = this.count(`SELECT count(*) AS n FROM quota`);
    const wanted = req.runIds.length;
    if (used + wanted > req.dailyQuota) {
      // When enough units will have come back (never, for a sweep larger than the whole quota).
      const short = used + wanted - req.dailyQuota;
      const back =
        wanted <= req.dailyQuota
          ? this.sql.exec<{ at: number }>(`SELECT at FROM quota ORDER BY at LIMIT 1 OFFSET ?`, short - 1).toArray()[0]?.at
          : undefined;
      return {
        rate,
        refusal: fail(
          "capacity_exceeded",
          `A sweep of ${wanted} children needs ${wanted} of your daily submissions; ${Math.max(0, req.dailyQuota - used)} of your ${req.dailyQuota} are left for the last 24 hours.`,
          {
            reason: "daily_quota",
            limit: req.dailyQuota,
            used,
            requested: wanted,
            ...(back === undefined ? {} : { next_unit_at: new Date(back + DAY_MS).toISOString() }),
          },
        ),
      };
    }
    if (req.laterFailure) return { rate, refusal: req.laterFailure };
    for (const runId of req.runIds) this.sql.exec(`INSERT OR IGNORE INTO quota (run_id, at) VALUES (?, ?)`, runId, now);
    return { rate, refusal: null };
  }

  /** Gives back everything the admissions of these runs took (a sweep whose rows could not be written). */
  cancelMany(runIds: string[]): void {
    for (const runId of runIds) this.cancel(runId);
  }

  private take(req: AdmitRequest): GateError | null {
    const now = Date.now();
    this.sql.exec(`DELETE FROM quota WHERE at <= ?`, now - DAY_MS);
    if (req.child && this.sql.exec(`SELECT 1 FROM slots WHERE run_id = ?`, req.runId).toArray().length > 0) return null;
    const inUse = this.count(`SELECT count(*) AS n FROM slots`);
    // Every slot counts against the concurrency limit; only credit-paid runs count as in flight.
    if (inUse >= req.concurrentLimit) {
      return fail("capacity_exceeded", `You have ${inUse} submissions queued or running, your limit; wait for one to end.`, {
        reason: "concurrent_submissions",
        limit: req.concurrentLimit,
        in_use: inUse,
      });
    }
    const inFlight = req.inFlight ? this.count(`SELECT count(*) AS n FROM slots WHERE in_flight = 1`) : 0;
    if (req.inFlight && inFlight >= req.inflightLimit) {
      return fail("too_many_active_api_requests", `You have ${inFlight} API runs in flight, your limit; wait for one to end.`, {
        limit: req.inflightLimit,
        in_flight: inFlight,
      });
    }
    const used = req.child ? 0 : this.count(`SELECT count(*) AS n FROM quota`);
    if (!req.child && used >= req.dailyQuota) {
      const oldest = this.count(`SELECT min(at) AS n FROM quota`);
      return fail("capacity_exceeded", `You have used your ${req.dailyQuota} submissions of the last 24 hours.`, {
        reason: "daily_quota",
        limit: req.dailyQuota,
        used,
        next_unit_at: new Date(oldest + DAY_MS).toISOString(),
      });
    }
    if (req.laterFailure) return req.laterFailure;
    this.sql.exec(`INSERT INTO slots (run_id, taken_at, in_flight) VALUES (?, ?, ?)`, req.runId, now, req.inFlight ? 1 : 0);
    // A child's unit was taken with its sweep (and may have aged out of the window since: it is not taken twice).
    if (!req.child) this.sql.exec(`INSERT INTO quota (run_id, at) VALUES (?, ?)`, req.runId, now);
    void this.scheduleReconcile(now);
    return null;
  }

  /** Gives back everything an admission took (a later step rejected the request). */
  cancel(runId: string): void {
    this.sql.exec(`DELETE FROM slots WHERE run_id = ?`, runId);
    this.sql.exec(`DELETE FROM quota WHERE run_id = ?`, runId);
  }

  /** The run ended: its slot (and in-flight place) is free. Its quota unit stays. Idempotent. */
  release(runId: string): boolean {
    return this.sql.exec(`DELETE FROM slots WHERE run_id = ?`, runId).rowsWritten > 0;
  }

  usage(keyPrefix: string, limits: RateLimits): Usage {
    const now = Date.now();
    return {
      concurrent_submissions: this.count(`SELECT count(*) AS n FROM slots`),
      inflight_api_runs: this.count(`SELECT count(*) AS n FROM slots WHERE in_flight = 1`),
      daily_quota_used: this.count(`SELECT count(*) AS n FROM quota WHERE at > ${now - DAY_MS}`),
      rate_window: peek(this.sql, keyBucket(keyPrefix, limits.key), now),
    };
  }

  idempotencyBegin(key: string, fingerprint: string): IdempotencyBegin {
    const now = Date.now();
    this.sql.exec(`DELETE FROM idempotency WHERE created_at <= ?`, now - IDEMPOTENCY_TTL_MS);
    this.sql.exec(`DELETE FROM idempotency WHERE state = 'pending' AND created_at <= ?`, now - IDEMPOTENCY_PENDING_MS);
    const row = this.sql
      .exec<{ fingerprint: string; state: string; status: number | null; body: string | null }>(
        `SELECT fingerprint, state, status, body FROM idempotency WHERE key = ?`,
        key,
      )
      .toArray()[0];
    if (!row) {
      this.sql.exec(`INSERT INTO idempotency (key, fingerprint, state, created_at) VALUES (?, ?, 'pending', ?)`, key, fingerprint, now);
      return { state: "new" };
    }
    if (row.fingerprint !== fingerprint) return { state: "mismatch" };
    if (row.state === "pending") return { state: "in_progress" };
    return { state: "replay", status: row.status!, body: row.body! };
  }

  idempotencyFinish(key: string, status: number, body: string): void {
    this.sql.exec(`UPDATE idempotency SET state = 'done', status = ?, body = ? WHERE key = ? AND state = 'pending'`, status, body, key);
  }

  /** A rejected request is not stored: a retry with the same key is evaluated afresh. */
  idempotencyAbort(key: string): void {
    this.sql.exec(`DELETE FROM idempotency WHERE key = ? AND state = 'pending'`, key);
  }

  /** Frees slots whose run no longer lives (a terminal hook that never ran, a crash between steps). */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const held = this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM slots WHERE taken_at <= ?`, now - RECONCILE_GRACE_MS)
      .toArray()
      .map((r) => r.run_id);
    for (let i = 0; i < held.length; i += 50) {
      const chunk = held.slice(i, i + 50);
      const alive = await liveRunIds(this.env.DB, chunk);
      for (const runId of chunk) if (!alive.has(runId)) this.release(runId);
    }
    if (this.count(`SELECT count(*) AS n FROM slots`) > 0) await this.ctx.storage.setAlarm(Date.now() + RECONCILE_EVERY_MS);
  }

  private async scheduleReconcile(now: number): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(now + RECONCILE_EVERY_MS);
  }

  private count(query: string): number {
    return this.sql.exec<{ n: number | null }>(query).one().n ?? 0;
  }
}

function fail(code: GateError["code"], message: string, details: Record<string, unknown>): GateError {
  return { code, message, details };
}
