// Submission and run rows: the queries of the submissions API and of the run lifecycle.

import { and, eq, gte, inArray, lte, notInArray, type SQL, sql } from "drizzle-orm";
import type { GaParameters } from "../model/parameters";
import type { RunKind, RunStatus, SubmissionSource } from "../model/runs";
import { LIVE_STATUSES } from "../model/runs";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { results, runs, submissions } from "./schema";

export type SubmissionRow = typeof submissions.$inferSelect;
export type RunRow = typeof runs.$inferSelect;

export const SUBMISSION_ORDERINGS = {
  created_at: { key: submissions.createdAt, id: submissions.id, descending: false, valueOf: (r) => r.createdAt as string },
  "-created_at": { key: submissions.createdAt, id: submissions.id, descending: true, valueOf: (r) => r.createdAt as string },
  name: { key: submissions.name, id: submissions.id, descending: false, valueOf: (r) => r.name as string },
  "-name": { key: submissions.name, id: submissions.id, descending: true, valueOf: (r) => r.name as string },
  status: { key: submissions.status, id: submissions.id, descending: false, valueOf: (r) => r.status as string },
} satisfies Record<string, Ordering>;
export type SubmissionOrdering = keyof typeof SUBMISSION_ORDERINGS;

export interface SubmissionFilters {
  status?: RunStatus[];
  source?: SubmissionSource;
  createdAfter?: string;
  createdBefore?: string;
  nameContains?: string;
}

/**
 * Case-insensitive substring match on the name; `%`, `_` and `\` are literal. `instr`, not LIKE: D1 refuses
 * LIKE patterns over 50 bytes ("pattern too complex"), and name_contains may be 100 characters.
 */
function nameContains(needle: string): SQL {
  return sql`instr(${submissions.nameLower}, ${needle.toLowerCase()}) > 0`;
}

export async function listSubmissions(
  db: Db,
  accountId: string,
  filters: SubmissionFilters,
  ordering: SubmissionOrdering,
  pageSize: number,
  cursor?: string,
): Promise<Page<SubmissionRow>> {
  const req = { orderingName: `submissions:${ordering}`, ordering: SUBMISSION_ORDERINGS[ordering], cursor, pageSize };
  const plan = planPage(req);
  const conditions: (SQL | undefined)[] = [
    eq(submissions.accountId, accountId),
    filters.status ? inArray(submissions.status, filters.status) : undefined,
    filters.source ? eq(submissions.source, filters.source) : undefined,
    filters.createdAfter ? gte(submissions.createdAt, filters.createdAfter) : undefined,
    filters.createdBefore ? lte(submissions.createdAt, filters.createdBefore) : undefined,
    filters.nameContains ? nameContains(filters.nameContains) : undefined,
    plan.where,
  ];
  const rows = await db
    .select()
    .from(submissions)
    .where(and(...conditions))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

export async function getSubmission(db: Db, accountId: string, id: string): Promise<SubmissionRow | undefined> {
  return db
    .select()
    .from(submissions)
    .where(and(eq(submissions.id, id), eq(submissions.accountId, accountId)))
    .get();
}

export async function getRun(db: Db, runId: string): Promise<RunRow | undefined> {
  return db.select().from(runs).where(eq(runs.id, runId)).get();
}

/** A submission of the account with its latest run, or undefined (unknown or someone else's). */
export async function getSubmissionWithRun(db: Db, accountId: string, id: string) {
  const row = await db
    .select({ submission: submissions, run: runs })
    .from(submissions)
    .innerJoin(runs, eq(runs.id, submissions.latestRunId))
    .where(and(eq(submissions.id, id), eq(submissions.accountId, accountId)))
    .get();
  return row;
}

export function insertSubmissionStatements(db: Db, submission: typeof submissions.$inferInsert, run: typeof runs.$inferInsert) {
  return [db.insert(submissions).values(submission), db.insert(runs).values(run)] as const;
}

/**
 * A new run of a submission whose latest run has ended: the submission's latest run changes only if it
 * is still the one `submission` saw and it is not live (the first statement changes one row exactly
 * then), and the run is inserted only if it became the latest — so two racing writes cannot both add one.
 */
export function addRunStatements(
  db: Db,
  submission: Pick<SubmissionRow, "id" | "accountId" | "latestRunId">,
  run: { id: string; kind: Exclude<RunKind, "initial">; parentResultId: string | null; parameters: GaParameters; paidWithCredits: boolean },
  now: string,
) {
  return [
    db
      .update(submissions)
      .set({ latestRunId: run.id, runCount: sql`${submissions.runCount} + 1`, status: "queued", updatedAt: now })
      .where(
        and(
          eq(submissions.id, submission.id),
          eq(submissions.latestRunId, submission.latestRunId),
          notInArray(submissions.status, [...LIVE_STATUSES]),
        ),
      ),
    // A reexecute starts from the submission's start population, if it was created with one; a
    // continue from its parent result's population.
    db.run(sql`
      INSERT INTO runs (id, submission_id, account_id, kind, parent_result_id, start_population_key, status, parameters,
        paid_with_credits, attempts, queued_at, enqueued_at, hit_time_cap, hit_memory_cap, created_at, updated_at)
      SELECT ${run.id}, ${submission.id}, ${submission.accountId}, ${run.kind}, ${run.parentResultId},
        ${run.kind === "continue" ? null : sql`(SELECT initial_population_key FROM submissions WHERE id = ${submission.id})`}, 'queued',
        ${JSON.stringify(run.parameters)}, ${run.paidWithCredits ? 1 : 0}, 0, ${now}, ${now}, 0, 0, ${now}, ${now}
      WHERE EXISTS (SELECT 1 FROM submissions WHERE id = ${submission.id} AND latest_run_id = ${run.id})`),
  ] as const;
}

export async function deleteSubmissionRow(db: Db, id: string): Promise<void> {
  await db.delete(submissions).where(eq(submissions.id, id));
}

/** Every run of a submission, oldest first. */
export async function runsOfSubmission(db: Db, submissionId: string): Promise<RunRow[]> {
  return db.select().from(runs).where(eq(runs.submissionId, submissionId)).orderBy(runs.createdAt, runs.id).all();
}

/** What a list row shows of a submission's latest run: how far it got, its best fitness, its warnings. */
export interface RunSummary {
  runId: string;
  kind: RunKind;
  generationsCompleted: number | null;
  numGenerations: number | null;
  bestSolutionFitness: number | null;
  /** Warnings of the run, every repeat counted. */
  warnings: number;
  /** Objectives of the run's result; null while it has none. */
  numObjectives: number | null;
}

/** The summaries of these runs (a page of a list: at most 100, within D1's bound parameters). */
export async function runSummaries(db: Db, runIds: string[]): Promise<RunSummary[]> {
  if (!runIds.length) return [];
  return db
    .select({
      runId: runs.id,
      kind: runs.kind,
      generationsCompleted: runs.generationsCompleted,
      numGenerations: sql<number | null>`json_extract(${runs.parameters}, '$.num_generations')`,
      bestSolutionFitness: runs.bestSolutionFitness,
      warnings: sql<number>`coalesce((SELECT sum(json_extract(value, '$.count')) FROM json_each(${runs.warnings})), 0)`,
      numObjectives: results.numObjectives,
    })
    .from(runs)
    .leftJoin(results, eq(results.runId, runs.id))
    .where(inArray(runs.id, runIds))
    .all();
}

/** The account's runs of these ids with their submission's name (at most 100 ids: a comparison). */
export async function accountRunsByIds(db: Db, accountId: string, runIds: string[]): Promise<{ run: RunRow; name: string }[]> {
  if (!runIds.length) return [];
  return db
    .select({ run: runs, name: submissions.name })
    .from(runs)
    .innerJoin(submissions, eq(submissions.id, runs.submissionId))
    .where(and(eq(runs.accountId, accountId), inArray(runs.id, runIds)))
    .all();
}

/** The kind of each of these runs that still exists (a page of results: at most 100 ids). */
export async function runKinds(db: Db, runIds: string[]): Promise<Map<string, RunKind>> {
  if (!runIds.length) return new Map();
  const rows = await db.select({ id: runs.id, kind: runs.kind }).from(runs).where(inArray(runs.id, runIds)).all();
  return new Map(rows.map((r) => [r.id, r.kind]));
}
