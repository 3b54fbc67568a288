// One Durable Object for the whole platform: the set of admitted runs not yet taken by a worker, with
// its size kept in a counter row, so the PLATFORM_QUEUE_CAP check costs no table scan.
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";

export const PLATFORM_QUEUE = "platform";
const RECONCILE_GRACE_MS = 60_000;
const RECONCILE_EVERY_MS = 5 * 60_000;

export class PlatformQueue extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS queued (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)`);
    this.sql.exec(`INSERT OR IGNORE INTO counter (id, n) VALUES (1, 0)`);
  }

  size(): number {
    return this.sql.exec<{ n: number }>(`SELECT n FROM counter WHERE id = 1`).one().n;
  }

  /** Takes a place for a newly admitted run, unless `cap` runs are already queued. */
  reserve(runId: string, cap: number): boolean {
    if (this.size() >= cap) return false;
    this.add(runId);
    return true;
  }

  /** A run goes back to the queue (its start failed, its worker was lost): it takes a place, cap or not. */
  requeue(runId: string): void {
    this.add(runId);
  }

  /** The run left the queue (a worker took it, or it ended). Idempotent. */
  release(runId: string): void {
    if (this.sql.exec(`DELETE FROM queued WHERE run_id = ?`, runId).rowsWritten > 0) {
      this.sql.exec(`UPDATE counter SET n = n - 1 WHERE id = 1`);
    }
  }

  /** Drops places of runs that are no longer queued in D1 (a release that never arrived). */
  override async alarm(): Promise<void> {
    const old = this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM queued WHERE at <= ?`, Date.now() - RECONCILE_GRACE_MS)
      .toArray()
      .map((r) => r.run_id);
    for (let i = 0; i < old.length; i += 50) {
      const chunk = old.slice(i, i + 50);
      const queued = await this.env.DB.prepare(`SELECT id FROM runs WHERE id IN (${chunk.map(() => "?").join(",")}) AND status = 'queued'`)
        .bind(...chunk)
        .all<{ id: string }>();
      const still = new Set(queued.results.map((r) => r.id));
      for (const runId of chunk) if (!still.has(runId)) this.release(runId);
    }
    if (this.size() > 0) await this.ctx.storage.setAlarm(Date.now() + RECONCILE_EVERY_MS);
  }

  private add(runId: string): void {
    if (this.sql.exec(`INSERT OR IGNORE INTO queued (run_id, at) VALUES (?, ?)`, runId, Date.now()).rowsWritten > 0) {
      this.sql.exec(`UPDATE counter SET n = n + 1 WHERE id = 1`);
      void this.ctx.storage.getAlarm().then((at) => (at === null ? this.ctx.storage.setAlarm(Date.now() + RECONCILE_EVERY_MS) : undefined));
    }
  }
}
