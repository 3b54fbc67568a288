// A run's statements on its way from the queue to a worker and back (domain/runs.ts, queues/scheduled.ts):
// the claim (queued → running) and its undoing, live progress, and what the cron looks for — silent
// runs, runs queued too long, runs that ended recently.
import { and, eq, gt, inArray, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { ENDED_STATUSES, type TrailPoint } from "../model/runs";
import type { AccountRow } from "./accounts";
import type { Db } from "./db";
import { accounts, runs, submissions } from "./schema";
import type { RunRow } from "./submissions";

export interface ClaimedRun {
  run: RunRow;
  /** The run's account as read in the claim (its limits decide the run's caps). */
  account: AccountRow | undefined;
}

/**
 * queued → running, only if the run is still queued; the run's account is read in the same batch.
 * Null when a duplicate or late message finds the run taken.
 */
export async function claimQueuedRun(db: Db, runId: string, now: string): Promise<ClaimedRun | null> {
  const [claimed, , account] = await db.batch([
    db
      .update(runs)
      .set({ status: "running", startedAt: now, heartbeatAt: now, attempts: sql`${runs.attempts} + 1`, updatedAt: now })
      // A sweep's child awaiting a slot is not admitted: it cannot be claimed (docs/api.md#states).
      .where(and(eq(runs.id, runId), eq(runs.status, "queued"), eq(runs.awaitingSlot, false)))
      .returning(),
    db
      .update(submissions)
      .set({ status: "running", updatedAt: now })
      .where(
        and(
          eq(submissions.latestRunId, runId),
          sql`EXISTS (SELECT 1 FROM runs WHERE id = ${runId} AND status = 'running' AND started_at = ${now})`,
        ),
      ),
    db
      .select()
      .from(accounts)
      .where(eq(accounts.id, sql`(SELECT account_id FROM runs WHERE id = ${runId})`)),
  ]);
  return claimed[0] ? { run: claimed[0], account: account[0] } : null;
}

/** running → queued after a failed start (only the attempt that claimed it); false when it was not that run's state any more. */
export async function unclaimRunningRun(db: Db, run: Pick<RunRow, "id" | "attempts">, now: string): Promise<boolean> {
  const [moved] = await db.batch([
    db
      .update(runs)
      .set({ status: "queued", startedAt: null, heartbeatAt: null, enqueuedAt: now, updatedAt: now })
      .where(and(eq(runs.id, run.id), eq(runs.status, "running"), eq(runs.attempts, run.attempts)))
      .returning({ id: runs.id }),
    db
      .update(submissions)
      .set({ status: "queued", updatedAt: now })
      .where(and(eq(submissions.latestRunId, run.id), sql`EXISTS (SELECT 1 FROM runs WHERE id = ${run.id} AND status = 'queued')`)),
  ]);
  return moved.length === 1;
}

/**
 * A durable run's checkpoint stored (R2 holds its bytes): its generation, and what its segment had
 * used by then. Only a running run's, and never an older checkpoint over a newer one. False otherwise.
 */
export async function recordRunCheckpoint(
  db: Db,
  runId: string,
  c: { generation: number; cpuSeconds: number; wallMs: number; peakMb: number },
  now: string,
): Promise<boolean> {
  const moved = await db
    .update(runs)
    .set({
      checkpointGeneration: c.generation,
      checkpointAt: now,
      checkpointCpuSeconds: c.cpuSeconds,
      checkpointWallMs: c.wallMs,
      checkpointPeakMb: c.peakMb,
      updatedAt: now,
    })
    .where(
      and(
        eq(runs.id, runId),
        eq(runs.status, "running"),
        or(isNull(runs.checkpointGeneration), lte(runs.checkpointGeneration, c.generation)),
      ),
    )
    .returning({ id: runs.id });
  return moved.length === 1;
}

/**
 * running → queued after its worker was lost, to go on from its last checkpoint (or from generation 0
 * without one): the lost segment's usage up to that checkpoint joins the run's earlier segments', and
 * the resume is recorded. Only if nobody else moved the run since it was read.
 */
export async function resumeRunningRun(
  db: Db,
  run: Pick<RunRow, "id" | "attempts" | "resumes">,
  now: string,
  after: (resumed: SQL) => BatchItem<"sqlite">[] = () => [],
  segment?: { cpuSeconds: number; wallMs: number; peakMb: number },
): Promise<boolean> {
  // The lost segment's usage: what its worker measured at the end (a drain), else up to its last checkpoint.
  const cpu = segment ? sql`${segment.cpuSeconds}` : sql`coalesce(${runs.checkpointCpuSeconds}, 0)`;
  const wall = segment ? sql`${segment.wallMs}` : sql`coalesce(${runs.checkpointWallMs}, 0)`;
  const peak = segment ? sql`${segment.peakMb}` : sql`coalesce(${runs.checkpointPeakMb}, 0)`;
  // The statements after the first apply only where the first moved the run (this resume, this time).
  const resumed = sql`EXISTS (SELECT 1 FROM runs WHERE id = ${run.id} AND status = 'queued' AND updated_at = ${now}
    AND json_array_length(resumes) = ${(run.resumes?.length ?? 0) + 1})`;
  const [moved] = await db.batch([
    db
      .update(runs)
      .set({
        status: "queued",
        startedAt: null,
        heartbeatAt: null,
        enqueuedAt: now,
        updatedAt: now,
        priorCpuSeconds: sql`${runs.priorCpuSeconds} + ${cpu}`,
        priorWallMs: sql`${runs.priorWallMs} + ${wall}`,
        priorPeakMb: sql`max(${runs.priorPeakMb}, ${peak})`,
        checkpointCpuSeconds: null,
        checkpointWallMs: null,
        checkpointPeakMb: null,
        resumes: sql`json_insert(coalesce(${runs.resumes}, '[]'), '$[#]', ${now})`,
      })
      .where(and(eq(runs.id, run.id), eq(runs.status, "running"), eq(runs.attempts, run.attempts)))
      .returning({ id: runs.id }),
    db
      .update(submissions)
      .set({ status: "queued", updatedAt: now })
      .where(and(eq(submissions.latestRunId, run.id), sql`EXISTS (SELECT 1 FROM runs WHERE id = ${run.id} AND status = 'queued')`)),
    ...after(resumed),
  ]);
  return moved.length === 1;
}

/**
 * The most points a run's progress trail keeps (docs/dashboard.md#live-progress): past it, the older
 * points (all but the newest TRAIL_KEEP_NEWEST) are thinned evenly, the first kept, so the trail is
 * TRAIL_THINNED_TO points again and the live chart still spans the whole run.
 */
export const TRAIL_POINTS = 2000;
const TRAIL_KEEP_NEWEST = 500;
const TRAIL_THINNED_TO = 1500;

/** `trail` within TRAIL_POINTS (see there). */
export function boundTrail(trail: TrailPoint[]): TrailPoint[] {
  if (trail.length <= TRAIL_POINTS) return trail;
  const newest = trail.slice(-TRAIL_KEEP_NEWEST);
  const older = trail.slice(0, -TRAIL_KEEP_NEWEST);
  const room = TRAIL_THINNED_TO - TRAIL_KEEP_NEWEST;
  const kept = Array.from({ length: room }, (_, i) => older[Math.floor((i * older.length) / room)]!);
  return [...kept, ...newest];
}

/**
 * A running run's progress report (also its heartbeat): how far it got, and `point` appended to its
 * trail when it moved to a new generation — or, from a GA worker that sends them, `point` is the list of
 * every generation's point since its previous report, appended as they are (the trail bounded:
 * boundTrail). False when the run is not running.
 */
export async function recordRunProgress(
  db: Db,
  runId: string,
  progress: { generations_completed: number; best_solution_fitness: number | null },
  point: TrailPoint | TrailPoint[],
  now: string,
): Promise<boolean> {
  if (isPointList(point)) {
    const report = {
      generationsCompleted: progress.generations_completed,
      bestSolutionFitness: progress.best_solution_fitness,
      heartbeatAt: now,
    };
    // Most reports fit: the points are appended in SQL, one statement (two JSON arrays' texts joined).
    const added = JSON.stringify(point);
    const appended = await db
      .update(runs)
      .set({
        ...report,
        progressTrail: sql`CASE
          WHEN coalesce(${runs.progressTrail}, '[]') = '[]' THEN json(${added})
          ELSE json(substr(${runs.progressTrail}, 1, length(${runs.progressTrail}) - 1) || ',' || substr(${added}, 2))
        END`,
      })
      .where(
        and(
          eq(runs.id, runId),
          eq(runs.status, "running"),
          sql`json_array_length(coalesce(${runs.progressTrail}, '[]')) + ${point.length} <= ${TRAIL_POINTS}`,
        ),
      )
      .returning({ id: runs.id });
    if (appended.length === 1) return true;
    // Past the bound (or not running): read, thin, write.
    const [row] = await db
      .select({ trail: runs.progressTrail })
      .from(runs)
      .where(and(eq(runs.id, runId), eq(runs.status, "running")));
    if (!row) return false;
    const moved = await db
      .update(runs)
      .set({ ...report, progressTrail: boundTrail([...(row.trail ?? []), ...point]) })
      .where(and(eq(runs.id, runId), eq(runs.status, "running")))
      .returning({ id: runs.id });
    return moved.length === 1;
  }
  const updated = await db
    .update(runs)
    .set({
      generationsCompleted: progress.generations_completed,
      bestSolutionFitness: progress.best_solution_fitness,
      heartbeatAt: now,
      // The trail of the live chart: a point per report that moved to a new generation (a heartbeat
      // that did not is not repeated), at most one per 1.5 s report, so bounded by the time cap:
      // [generation, best fitness] or, with several objectives, [generation, null, [best of each]].
      progressTrail: sql`CASE
        WHEN ${runs.generationsCompleted} IS ${progress.generations_completed} OR ${progress.generations_completed} = 0
          THEN ${runs.progressTrail}
        ELSE json_insert(coalesce(${runs.progressTrail}, '[]'), '$[#]', json(${JSON.stringify(point)}))
      END`,
    })
    .where(and(eq(runs.id, runId), eq(runs.status, "running")))
    .returning({ id: runs.id });
  return updated.length === 1;
}

const isPointList = (p: TrailPoint | TrailPoint[]): p is TrailPoint[] => Array.isArray(p[0]);

/** Running runs whose worker has not reported since `heartbeatBefore` (or never). */
export function silentRuns(db: Db, heartbeatBefore: string, limit: number): Promise<RunRow[]> {
  return db
    .select()
    .from(runs)
    .where(and(eq(runs.status, "running"), or(isNull(runs.heartbeatAt), lt(runs.heartbeatAt, heartbeatBefore))))
    .limit(limit)
    .all();
}

/**
 * Admitted runs queued since before `enqueuedBefore` (a sweep's child awaiting a slot is not on the queue
 * at all): what their queue message needs, and when they were put on the queue.
 */
export function staleQueuedRuns(db: Db, enqueuedBefore: string, limit: number) {
  return db
    .select({ id: runs.id, accountId: runs.accountId, parameters: runs.parameters, enqueuedAt: runs.enqueuedAt })
    .from(runs)
    .where(and(eq(runs.status, "queued"), eq(runs.awaitingSlot, false), lt(runs.enqueuedAt, enqueuedBefore)))
    .limit(limit)
    .all();
}

/** A queued run put on the queue again at `now`, if nobody else did since `enqueuedAt`; false otherwise. */
export async function restampQueuedRun(db: Db, run: { id: string; enqueuedAt: string }, now: string): Promise<boolean> {
  const again = await db
    .update(runs)
    .set({ enqueuedAt: now, updatedAt: now })
    .where(and(eq(runs.id, run.id), eq(runs.status, "queued"), eq(runs.awaitingSlot, false), eq(runs.enqueuedAt, run.enqueuedAt)))
    .returning({ id: runs.id });
  return again.length > 0;
}

/** Runs that ended after `finishedAfter`. */
export function recentlyEndedRuns(db: Db, finishedAfter: string, limit: number) {
  return db
    .select({ id: runs.id, accountId: runs.accountId })
    .from(runs)
    .where(and(inArray(runs.status, [...ENDED_STATUSES]), gt(runs.finishedAt, finishedAfter)))
    .limit(limit)
    .all();
}
