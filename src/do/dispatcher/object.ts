// The Dispatcher: one Durable Object that owns the platform's run places and the line of runs waiting
// for one (docs/architecture.md "Capacity and fair share"). A run is started only when a place is free;
// until then it stays `queued` (its slot held, no wall-time cap running). Places go round-robin across
// the accounts that have runs waiting, FIFO within an account, so one account's many runs cannot starve
// another's single run. It only keeps the books: a granted run is started by the runs queue consumer
// (the grant travels as a `{run_id, granted: true}` message, or is answered to the offer itself).
// "Round-robin" precisely: the next place goes to the waiting account that holds the fewest places now,
// and among those to the one served longest ago (never served: first) — so accounts take turns, and an
// account that arrives late with a single run gets the very next free place.
// A run that evaluates its fitness in N workers (`parallel_processing`) takes N places, at most the
// whole capacity; the next run in turn waits until its places are free, and no run behind it jumps
// ahead (so a wide run is never starved by narrow ones).
// Every method runs to completion on SQLite, so two racing offers or releases can never both take the
// last place.

import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../../env";
import { runsQueue } from "../../env";
import { liveRunIds, queuedRunIds } from "../../storage/run-end";

/** How often the line is checked against D1 while anything waits or holds a place. */
const RECONCILE_EVERY_MS = 30_000;
/** A run given back by a full worker is offered its place again after this long. */
export const FULL_WORKER_PAUSE_MS = 2_000;

export interface Offer {
  runId: string;
  accountId: string;
  /** Places (CPUs) the run takes: its parallel fitness workers, 1 without. */
  places: number;
}

export interface DispatchState {
  capacity: number;
  /** Places taken (a run with parallel fitness workers takes one per worker). */
  in_use: number;
  placed: string[];
  /** The waiting line in the order places would go now. */
  waiting: string[];
}

export class Dispatcher extends DurableObject<Bindings> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS waiting (run_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, seq INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS waiting_account ON waiting (account_id, seq);
      CREATE TABLE IF NOT EXISTS placed (run_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS served (account_id TEXT PRIMARY KEY, turn INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
    if (this.meta("schema") !== "2") {
      // Version 2: a run's places (books written before it hold one-place runs).
      for (const table of ["waiting", "placed"]) {
        try {
          this.sql.exec(`ALTER TABLE ${table} ADD COLUMN places INTEGER NOT NULL DEFAULT 1`);
        } catch {
          // the column is there already
        }
      }
      this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', '2')`);
    }
  }

  /**
   * A run that wants a place (idempotent: a run already waiting or placed keeps its turn). Returns
   * whether this run may start now; other runs granted by the same call are sent to the runs queue.
   */
  async offer(offer: Offer, capacity: number): Promise<{ startNow: boolean }> {
    if (!this.has("placed", offer.runId)) {
      this.sql.exec(
        `INSERT OR IGNORE INTO waiting (run_id, account_id, places, seq) VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM waiting))`,
        offer.runId,
        offer.accountId,
        offer.places,
      );
    }
    const granted = this.grant(capacity);
    await this.send(granted.filter((id) => id !== offer.runId));
    await this.keepReconciling();
    // Holding a place (granted now, or earlier: its grant message was lost or its start failed) → start it.
    return { startNow: this.has("placed", offer.runId) };
  }

  /** A run left its place or the line (ended, cancelled, deleted, or never to start): the next get theirs. */
  async release(runId: string, capacity: number): Promise<string[]> {
    this.sql.exec(`DELETE FROM placed WHERE run_id = ?`, runId);
    this.sql.exec(`DELETE FROM waiting WHERE run_id = ?`, runId);
    const granted = this.grant(capacity);
    await this.send(granted);
    return granted;
  }

  /**
   * A granted run the worker refused for want of room (it has fewer places than the books say): it goes
   * back to the head of the line, and places are offered again after a short pause.
   */
  async giveBack(offer: Offer): Promise<void> {
    this.sql.exec(`DELETE FROM placed WHERE run_id = ?`, offer.runId);
    this.sql.exec(
      `INSERT OR IGNORE INTO waiting (run_id, account_id, places, seq) VALUES (?, ?, ?, (SELECT coalesce(min(seq), 1) - 1 FROM waiting))`,
      offer.runId,
      offer.accountId,
      offer.places,
    );
    this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('paused_until', ?)`, String(Date.now() + FULL_WORKER_PAUSE_MS));
    await this.ctx.storage.setAlarm(Date.now() + FULL_WORKER_PAUSE_MS);
  }

  /** The books, for tests and operators. */
  state(capacity: number): DispatchState {
    return {
      capacity,
      in_use: this.count(`SELECT coalesce(sum(places), 0) AS n FROM placed`),
      placed: this.sql
        .exec<{ run_id: string }>(`SELECT run_id FROM placed ORDER BY at, run_id`)
        .toArray()
        .map((r) => r.run_id),
      waiting: this.order(),
    };
  }

  /** Drops what no longer waits or runs in D1 (a release that never came), then hands out free places. */
  override async alarm(): Promise<void> {
    const placed = this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM placed`)
      .toArray()
      .map((r) => r.run_id);
    const waiting = this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM waiting`)
      .toArray()
      .map((r) => r.run_id);
    const [live, queued] = await Promise.all([liveRunIds(this.env.DB, placed), queuedRunIds(this.env.DB, waiting)]);
    for (const id of placed) if (!live.has(id)) this.sql.exec(`DELETE FROM placed WHERE run_id = ?`, id);
    for (const id of waiting) if (!queued.has(id)) this.sql.exec(`DELETE FROM waiting WHERE run_id = ?`, id);
    const capacity = Number(this.meta("capacity") ?? "0");
    if (capacity > 0) await this.send(this.grant(capacity));
    await this.keepReconciling(true);
  }

  // -- the books

  /**
   * Moves runs from the line to free places, round-robin across accounts; returns the granted run ids.
   * A run takes its places (at most the capacity); when the next in turn needs more than are free, it
   * waits for them and the line waits with it.
   */
  private grant(capacity: number): string[] {
    this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('capacity', ?)`, String(capacity));
    if (Number(this.meta("paused_until") ?? "0") > Date.now()) return [];
    const granted: string[] = [];
    let free = capacity - this.count(`SELECT coalesce(sum(places), 0) AS n FROM placed`);
    while (free > 0) {
      const next = this.next();
      if (!next) break;
      const places = Math.min(next.places, capacity);
      if (places > free) break;
      this.sql.exec(`DELETE FROM waiting WHERE run_id = ?`, next.run_id);
      this.sql.exec(
        `INSERT OR IGNORE INTO placed (run_id, account_id, places, at) VALUES (?, ?, ?, ?)`,
        next.run_id,
        next.account_id,
        places,
        Date.now(),
      );
      this.sql.exec(
        `INSERT OR REPLACE INTO served (account_id, turn) VALUES (?, (SELECT coalesce(max(turn), 0) + 1 FROM served))`,
        next.account_id,
      );
      granted.push(next.run_id);
      free -= places;
    }
    return granted;
  }

  /** The next run in turn: of the waiting accounts, the one holding fewest places, then served longest ago; its oldest run. */
  private next(): { run_id: string; account_id: string; places: number } | null {
    return (
      this.sql
        .exec<{ run_id: string; account_id: string; places: number }>(
          `SELECT w.run_id, w.account_id, w.places FROM waiting w
           LEFT JOIN served s ON s.account_id = w.account_id
           ORDER BY (SELECT coalesce(sum(places), 0) FROM placed p WHERE p.account_id = w.account_id), coalesce(s.turn, 0),
                    (SELECT min(seq) FROM waiting o WHERE o.account_id = w.account_id), w.seq
           LIMIT 1`,
        )
        .toArray()[0] ?? null
    );
  }

  /** The whole line in grant order, as places would go if every placed run stayed placed. */
  private order(): string[] {
    const waiting = this.sql
      .exec<{ run_id: string; account_id: string; places: number; seq: number }>(
        `SELECT run_id, account_id, places, seq FROM waiting ORDER BY seq`,
      )
      .toArray();
    const held = new Map<string, number>();
    for (const p of this.sql.exec<{ account_id: string; places: number }>(`SELECT account_id, places FROM placed`)) {
      held.set(p.account_id, (held.get(p.account_id) ?? 0) + p.places);
    }
    const turns = new Map(
      this.sql
        .exec<{ account_id: string; turn: number }>(`SELECT account_id, turn FROM served`)
        .toArray()
        .map((r) => [r.account_id, r.turn]),
    );
    let turn = Math.max(0, ...turns.values());
    const line: string[] = [];
    const rest = [...waiting];
    while (rest.length) {
      const firstSeq = (account: string) => Math.min(...rest.filter((r) => r.account_id === account).map((r) => r.seq));
      rest.sort(
        (x, y) =>
          (held.get(x.account_id) ?? 0) - (held.get(y.account_id) ?? 0) ||
          (turns.get(x.account_id) ?? 0) - (turns.get(y.account_id) ?? 0) ||
          firstSeq(x.account_id) - firstSeq(y.account_id) ||
          x.seq - y.seq,
      );
      const pick = rest.shift()!;
      line.push(pick.run_id);
      held.set(pick.account_id, (held.get(pick.account_id) ?? 0) + pick.places);
      turns.set(pick.account_id, ++turn);
    }
    return line;
  }

  private async send(runIds: string[]): Promise<void> {
    if (runIds.length) await runsQueue(this.env).sendBatch(runIds.map((run_id) => ({ body: { run_id, granted: true } })));
  }

  private async keepReconciling(force = false): Promise<void> {
    const busy = this.count(`SELECT (SELECT count(*) FROM waiting) + (SELECT count(*) FROM placed) AS n`) > 0;
    if (busy && (force || (await this.ctx.storage.getAlarm()) === null)) await this.ctx.storage.setAlarm(Date.now() + RECONCILE_EVERY_MS);
  }

  private has(table: "placed" | "waiting", runId: string): boolean {
    return this.count(`SELECT count(*) AS n FROM ${table} WHERE run_id = ?`, runId) > 0;
  }

  private meta(key: string): string | undefined {
    return this.sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key).toArray()[0]?.value;
  }

  private count(query: string, ...args: string[]): number {
    return this.sql.exec<{ n: number | null }>(query, ...args).one().n ?? 0;
  }
}
