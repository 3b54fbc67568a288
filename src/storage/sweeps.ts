// A parameter sweep's statements (docs/api.md#sweeps): its creation with every child (one submission and
// its initial run each, the runs awaiting a slot), the list and the children's rows its statistics are
// made of, the children waiting for a slot and their admission, the cancellation of the children that
// never started, and the one statement that ends a sweep (its event is written only where it won).
import { and, eq, inArray, isNotNull, ne, type SQL, sql } from "drizzle-orm";
import { LIVE_STATUSES, type RunStatus } from "../model/runs";
import type { Combination, SweepStatus } from "../model/sweeps";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { platformCapStatement } from "./platform-queue";
import { runs, submissions, sweeps } from "./schema";
import type { RunRow, SubmissionRow } from "./submissions";

export type SweepRow = typeof sweeps.$inferSelect;

export const SWEEP_ORDERINGS = {
  created_at: { key: sweeps.createdAt, id: sweeps.id, descending: false, valueOf: (r) => r.createdAt as string },
  "-created_at": { key: sweeps.createdAt, id: sweeps.id, descending: true, valueOf: (r) => r.createdAt as string },
} satisfies Record<string, Ordering>;
export type SweepOrdering = keyof typeof SWEEP_ORDERINGS;

const LIVE = sql.raw(LIVE_STATUSES.map((s) => `'${s}'`).join(", "));

/** Whether a live initial run of one of the sweep's children exists (the sweep has not ended). */
const liveChildOf = (sweepId: SQL | string) => sql`EXISTS (
  SELECT 1 FROM submissions s JOIN runs r ON r.submission_id = s.id AND r.kind = 'initial'
  WHERE s.sweep_id = ${sweepId} AND r.status IN (${LIVE}))`;

// ---- Creation ----

/** A child as the creation's JSON carries it to SQL (one object per child, in `json_each`). */
export interface NewChild {
  id: string;
  run_id: string;
  index: number;
  name: string;
  /** Its random_seed. */
  seed: number;
  /** Its combination's values (the grid's parameters). */
  o: Combination;
}

export type NewSweep = typeof sweeps.$inferInsert & { base: Record<string, unknown> };

/**
 * The sweep, its children's submissions and their initial runs (queued, awaiting a slot: not on the
 * platform queue), in three statements whatever the number of children. A child's parameters are the
 * sweep's `base` with its combination's values and its random_seed set in SQL (json_set, each value as
 * JSON: a null stays a null), so the base and its code cross to D1 once.
 */
export function insertSweepStatements(db: Db, sweep: NewSweep, children: NewChild[], gridKeys: string[]) {
  const now = sweep.createdAt;
  const list = JSON.stringify(children);
  const sets = gridKeys.map((key) => sql`, ${`$.${key}`}, json(j.value -> ${`$.o.${key}`})`);
  const parameters = sql`json_set(w.base, '$.random_seed', j.value ->> '$.seed'${sql.join(sets, sql``)})`;
  const paid = sweep.paidWithCredits === false ? 0 : 1;
  return [
    db.insert(sweeps).values(sweep),
    db.run(sql`
      INSERT INTO submissions (id, account_id, name, name_lower, source, submission_type, description, status, parameters,
        latest_run_id, run_count, credits_charged_micro, sweep_id, sweep_index, created_at, updated_at)
      SELECT j.value ->> '$.id', w.account_id, j.value ->> '$.name', lower(j.value ->> '$.name'), w.source, 'new', w.description,
        'queued', ${parameters}, j.value ->> '$.run_id', 1, 0, w.id, j.value ->> '$.index', ${now}, ${now}
      FROM json_each(${list}) j JOIN sweeps w ON w.id = ${sweep.id}`),
    db.run(sql`
      INSERT INTO runs (id, submission_id, account_id, kind, parent_result_id, status, parameters, paid_with_credits, attempts,
        awaiting_slot, queued_at, enqueued_at, hit_time_cap, hit_memory_cap, created_at, updated_at)
      SELECT s.latest_run_id, s.id, s.account_id, 'initial', NULL, 'queued', s.parameters, ${paid}, 0, 1, ${now}, ${now}, 0, 0,
        ${now}, ${now}
      FROM submissions s WHERE s.sweep_id = ${sweep.id}`),
  ] as const;
}

// ---- Reading ----

/** The account's sweep (not one being deleted), or undefined. */
export async function getSweep(db: Db, accountId: string, id: string): Promise<SweepRow | undefined> {
  return db
    .select()
    .from(sweeps)
    .where(and(eq(sweeps.id, id), eq(sweeps.accountId, accountId), ne(sweeps.status, "deleting")))
    .get();
}

/** Any sweep by id, whatever its state (the progress steps: sweep-progress.ts). */
export async function getSweepById(db: Db, id: string): Promise<SweepRow | undefined> {
  return db.select().from(sweeps).where(eq(sweeps.id, id)).get();
}

export async function listSweeps(
  db: Db,
  accountId: string,
  filters: { status?: SweepStatus[] },
  ordering: SweepOrdering,
  pageSize: number,
  cursor?: string,
): Promise<Page<SweepRow>> {
  const req = { orderingName: `sweeps:${ordering}`, ordering: SWEEP_ORDERINGS[ordering], cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(sweeps)
    .where(
      and(
        eq(sweeps.accountId, accountId),
        filters.status ? inArray(sweeps.status, filters.status) : ne(sweeps.status, "deleting"),
        plan.where,
      ),
    )
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

/** A child of a sweep as its statistics read it: the submission, its initial run and that run's result. */
export interface ChildRow {
  submissionId: string;
  index: number;
  name: string;
  runId: string;
  status: RunStatus;
  awaitingSlot: boolean;
  randomSeed: number | null;
  generationsCompleted: number | null;
  executionDurationMs: number | null;
  creditsChargedMicro: number | null;
  resultId: string | null;
  /** The result's best fitness (null: not finite, several objectives, or no result). */
  bestSolutionFitness: number | null;
  numObjectives: number | null;
}

/** Every child of the sweep that still exists, in its order. */
export async function sweepChildren(db: Db, sweepId: string): Promise<ChildRow[]> {
  const rows = await db.all<{
    submission_id: string;
    sweep_index: number;
    name: string;
    run_id: string;
    status: RunStatus;
    awaiting_slot: number;
    random_seed: number | null;
    generations_completed: number | null;
    execution_duration_ms: number | null;
    credits_charged_micro: number | null;
    result_id: string | null;
    best_solution_fitness: number | null;
    num_objectives: number | null;
  }>(sql`
    SELECT s.id AS submission_id, s.sweep_index, s.name, r.id AS run_id, r.status, r.awaiting_slot,
      json_extract(r.parameters, '$.random_seed') AS random_seed, r.generations_completed, r.execution_duration_ms,
      r.credits_charged_micro, res.id AS result_id, res.best_solution_fitness, res.num_objectives
    FROM submissions s JOIN runs r ON r.submission_id = s.id AND r.kind = 'initial'
    LEFT JOIN results res ON res.run_id = r.id
    WHERE s.sweep_id = ${sweepId}
    ORDER BY s.sweep_index`);
  return rows.map((r) => ({
    submissionId: r.submission_id,
    index: r.sweep_index,
    name: r.name,
    runId: r.run_id,
    status: r.status,
    awaitingSlot: r.awaiting_slot === 1,
    randomSeed: r.random_seed,
    generationsCompleted: r.generations_completed,
    executionDurationMs: r.execution_duration_ms,
    creditsChargedMicro: r.credits_charged_micro,
    resultId: r.result_id,
    bestSolutionFitness: r.best_solution_fitness,
    numObjectives: r.num_objectives,
  }));
}

/** How many children of each sweep are in each status (waiting ones counted apart, also as queued). */
export interface ChildCounts {
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Of the queued, those waiting for one of the account's slots. */
  waiting: number;
}

export const noChildren = (): ChildCounts => ({ queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0, waiting: 0 });

/** The counts of these sweeps' children (a page of a list: at most 100 ids). */
export async function childCounts(db: Db, sweepIds: string[]): Promise<Map<string, ChildCounts>> {
  const counts = new Map(sweepIds.map((id) => [id, noChildren()]));
  if (!sweepIds.length) return counts;
  const rows = await db.all<{ sweep_id: string; status: RunStatus; awaiting_slot: number; n: number }>(sql`
    SELECT s.sweep_id, r.status, r.awaiting_slot, count(*) AS n
    FROM submissions s JOIN runs r ON r.submission_id = s.id AND r.kind = 'initial'
    WHERE s.sweep_id IN (${sql.join(
      sweepIds.map((id) => sql`${id}`),
      sql`, `,
    )})
    GROUP BY s.sweep_id, r.status, r.awaiting_slot`);
  for (const row of rows) {
    const c = counts.get(row.sweep_id);
    if (!c) continue;
    c[row.status] += row.n;
    if (row.status === "queued" && row.awaiting_slot === 1) c.waiting += row.n;
  }
  return counts;
}

// ---- Children waiting for a slot ----

/** A child waiting for a slot, as its admission needs it. */
export interface WaitingChild {
  runId: string;
  sweepId: string;
  parameters: RunRow["parameters"];
  paidWithCredits: boolean;
}

/** The account's children waiting for a slot, in the order they are admitted: oldest sweep first, then its children's order. */
export async function waitingChildren(db: Db, accountId: string, limit: number): Promise<WaitingChild[]> {
  return db
    .select({ runId: runs.id, sweepId: sweeps.id, parameters: runs.parameters, paidWithCredits: runs.paidWithCredits })
    .from(runs)
    .innerJoin(submissions, eq(submissions.id, runs.submissionId))
    .innerJoin(sweeps, eq(sweeps.id, submissions.sweepId))
    .where(
      and(
        eq(runs.accountId, accountId),
        eq(runs.awaitingSlot, true),
        eq(runs.status, "queued"),
        eq(sweeps.status, "running"),
        sql`${sweeps.cancelRequestedAt} IS NULL`,
      ),
    )
    .orderBy(sweeps.createdAt, sweeps.id, submissions.sweepIndex)
    .limit(limit)
    .all();
}

/** Whether the account has a child waiting for a slot. */
export async function hasWaitingChildren(db: Db, accountId: string): Promise<boolean> {
  const row = await db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.awaitingSlot, true), eq(runs.status, "queued"), eq(runs.accountId, accountId)))
    .limit(1)
    .get();
  return row !== undefined;
}

/** Accounts with children waiting for a slot (the cron's pass). */
export async function accountsWithWaitingChildren(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectDistinct({ accountId: runs.accountId })
    .from(runs)
    .where(and(eq(runs.awaitingSlot, true), eq(runs.status, "queued")))
    .limit(limit)
    .all();
  return rows.map((r) => r.accountId);
}

/**
 * A waiting child admitted (its slot taken in the account's gate): it joins the platform queue (whose
 * cap its trigger checks: `platform_at_capacity` aborts the statement) and may be put on the runs queue.
 * Only while it still waits and its sweep is running and not being cancelled: false otherwise.
 */
export async function markChildAdmitted(db: Db, runId: string, now: string, platformCap: number): Promise<boolean> {
  const admit = db
    .update(runs)
    .set({ awaitingSlot: false, enqueuedAt: now, updatedAt: now })
    .where(
      and(
        eq(runs.id, runId),
        eq(runs.status, "queued"),
        eq(runs.awaitingSlot, true),
        sql`EXISTS (SELECT 1 FROM submissions s JOIN sweeps w ON w.id = s.sweep_id
          WHERE s.id = ${runs.submissionId} AND w.status = 'running' AND w.cancel_requested_at IS NULL)`,
      ),
    )
    .returning({ id: runs.id });
  const [, moved] = await db.batch([platformCapStatement(db, platformCap), admit]);
  return moved.length === 1;
}

/** Records why the sweep's next child waits (null: it does not, or the reason is gone). */
export async function recordWaitingOn(db: Db, sweepId: string, on: { code: string; message: string } | null): Promise<void> {
  await db
    .update(sweeps)
    .set({ waitingOn: on })
    .where(and(eq(sweeps.id, sweepId), on === null ? isNotNull(sweeps.waitingOn) : undefined));
}

// ---- Cancel, delete and the end ----

/**
 * The children of the sweep that never started — queued and awaiting a slot — ended as cancelled runs
 * are ended (charge 0, a zero ledger row for a credit run, the submission's status), in three statements
 * whatever their number; stamped with `token` as a run's end is. No event: the sweep's own says it.
 */
export function cancelWaitingStatements(db: Db, sweepId: string, token: string, now: string) {
  const ended = sql`SELECT r.id FROM runs r JOIN submissions s ON s.id = r.submission_id
    WHERE s.sweep_id = ${sweepId} AND r.terminal_token = ${token}`;
  return [
    db.run(sql`
      UPDATE runs SET status = 'cancelled', terminal_token = ${token}, finished_at = ${now}, updated_at = ${now},
        execution_duration_ms = 0, cpu_seconds_used = 0, peak_memory_mb = 0, credits_charged_micro = 0
      WHERE status = 'queued' AND awaiting_slot = 1 AND submission_id IN (SELECT id FROM submissions WHERE sweep_id = ${sweepId})`),
    db.run(sql`
      INSERT INTO credit_ledger (id, account_id, kind, run_id, submission_id, amount_micro, free_delta_micro, paid_delta_micro,
        cpu_seconds, gb_seconds, created_at)
      SELECT lower(hex(randomblob(6))), r.account_id, 'run_charge', r.id, r.submission_id, 0, 0, 0, 0, 0, ${now}
      FROM runs r WHERE r.paid_with_credits = 1 AND r.id IN (${ended})`),
    db.run(sql`
      UPDATE submissions SET status = 'cancelled', updated_at = ${now}
      WHERE sweep_id = ${sweepId} AND latest_run_id IN (${ended})`),
  ] as const;
}

/** Asks the running sweep to be cancelled: no waiting child of it is admitted from now on. */
export const requestCancelStatement = (db: Db, sweepId: string, now: string) =>
  db.run(sql`
    UPDATE sweeps SET cancel_requested_at = coalesce(cancel_requested_at, ${now}), waiting_on = NULL, updated_at = ${now}
    WHERE id = ${sweepId} AND status = 'running'`);

/** The sweep's deletion has begun: readers no longer see it, and it never ends (no event). */
export const markDeletingStatement = (db: Db, sweepId: string, now: string) =>
  db.run(sql`UPDATE sweeps SET status = 'deleting', updated_at = ${now} WHERE id = ${sweepId}`);

/** The children's initial runs that are live and admitted (the ones a cancel must stop one by one). */
export async function liveAdmittedChildRuns(db: Db, sweepId: string): Promise<RunRow[]> {
  const rows = await db
    .select({ run: runs })
    .from(runs)
    .innerJoin(submissions, eq(submissions.id, runs.submissionId))
    .where(
      and(
        eq(submissions.sweepId, sweepId),
        eq(runs.kind, "initial"),
        inArray(runs.status, [...LIVE_STATUSES]),
        eq(runs.awaitingSlot, false),
      ),
    )
    .all();
  return rows.map((r) => r.run);
}

/** The sweep's children whose latest run is live (a deletion stops and bills them first). */
export async function childrenWithLiveRun(db: Db, sweepId: string): Promise<SubmissionRow[]> {
  const rows = await db
    .select({ submission: submissions })
    .from(submissions)
    .innerJoin(runs, eq(runs.id, submissions.latestRunId))
    .where(and(eq(submissions.sweepId, sweepId), inArray(runs.status, [...LIVE_STATUSES])))
    .all();
  return rows.map((r) => r.submission);
}

/** The sweep's remaining children and the sweep itself (their runs go by cascade; results stay). */
export async function deleteSweepRows(db: Db, sweepId: string): Promise<void> {
  await db.batch([db.delete(submissions).where(eq(submissions.sweepId, sweepId)), db.delete(sweeps).where(eq(sweeps.id, sweepId))]);
}

/**
 * Ends the running sweep once no child is live: `completed`, or `cancelled` when a cancel was asked,
 * stamped with `token` (RETURNING its id: one row exactly when this caller ended it). Racing callers — the
 * ends of its last children, a cancel, the cron — end it once: D1 runs a batch as one transaction.
 */
export const endSweepStatement = (db: Db, sweepId: string, token: string, now: string) =>
  db.run(sql`
    UPDATE sweeps SET status = CASE WHEN cancel_requested_at IS NULL THEN 'completed' ELSE 'cancelled' END,
      end_token = ${token}, ended_at = ${now}, updated_at = ${now}, waiting_on = NULL
    WHERE id = ${sweepId} AND status = 'running' AND NOT ${liveChildOf(sweepId)} RETURNING id, status`);

/** `EXISTS` the sweep with this end token: the condition of the statements that follow its end. */
export const sweepEndedBy = (sweepId: string, token: string): SQL =>
  sql`EXISTS (SELECT 1 FROM sweeps WHERE id = ${sweepId} AND end_token = ${token})`;

/** Whether a child of the sweep is still live (one indexed lookup: a child's end asks it before reading them all). */
export async function hasLiveChild(db: Db, sweepId: string): Promise<boolean> {
  const rows = await db.all<{ one: number }>(sql`SELECT 1 AS one WHERE ${liveChildOf(sweepId)}`);
  return rows.length > 0;
}

/** Running sweeps none of whose children is live any more (an end that was not written: the cron's pass). */
export async function unendedSweeps(db: Db, limit: number): Promise<string[]> {
  const rows = await db.all<{ id: string }>(sql`
    SELECT w.id FROM sweeps w WHERE w.status = 'running' AND NOT ${liveChildOf(sql`w.id`)} LIMIT ${limit}`);
  return rows.map((r) => r.id);
}

/** Sweeps whose deletion began before `before` and did not finish (the cron's pass). */
export async function stalledDeletions(db: Db, before: string, limit: number): Promise<SweepRow[]> {
  return db
    .select()
    .from(sweeps)
    .where(and(eq(sweeps.status, "deleting"), sql`${sweeps.updatedAt} < ${before}`))
    .limit(limit)
    .all();
}

/** The statuses a sweep shows (a stored `deleting` is never shown). */
export const shownStatus = (row: Pick<SweepRow, "status">): SweepStatus => (row.status === "deleting" ? "cancelled" : row.status);
