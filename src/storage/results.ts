// Result rows and their file records.
import { and, eq, gte, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { resultFiles, results } from "./schema";

export type ResultRow = typeof results.$inferSelect;
export type ResultFileRow = typeof resultFiles.$inferSelect;

// A run whose fitness was not finite stores NULL; it sorts as the lowest fitness.
const LOWEST = -1.7976931348623157e308;
const fitnessKey = sql<number>`ifnull(${results.bestSolutionFitness}, ${LOWEST})`;
const fitnessValue = (r: Record<string, unknown>) => (r.bestSolutionFitness as number | null) ?? LOWEST;

export const RESULT_ORDERINGS = {
  created_at: { key: results.createdAt, id: results.id, descending: false, valueOf: (r) => r.createdAt as string },
  "-created_at": { key: results.createdAt, id: results.id, descending: true, valueOf: (r) => r.createdAt as string },
  best_solution_fitness: { key: fitnessKey, id: results.id, descending: false, valueOf: fitnessValue },
  "-best_solution_fitness": { key: fitnessKey, id: results.id, descending: true, valueOf: fitnessValue },
} satisfies Record<string, Ordering>;
export type ResultOrdering = keyof typeof RESULT_ORDERINGS;

export interface ResultFilters {
  submissionId?: string;
  isShared?: boolean;
  minFitness?: number;
  maxFitness?: number;
  createdAfter?: string;
  createdBefore?: string;
}

export async function listResults(
  db: Db,
  accountId: string,
  filters: ResultFilters,
  ordering: ResultOrdering,
  pageSize: number,
  cursor?: string,
): Promise<Page<ResultRow>> {
  const req = { orderingName: `results:${ordering}`, ordering: RESULT_ORDERINGS[ordering], cursor, pageSize };
  const plan = planPage(req);
  const conditions: (SQL | undefined)[] = [
    eq(results.accountId, accountId),
    filters.submissionId !== undefined ? eq(results.submissionId, filters.submissionId) : undefined,
    filters.isShared !== undefined ? eq(results.isShared, filters.isShared) : undefined,
    filters.minFitness !== undefined ? gte(results.bestSolutionFitness, filters.minFitness) : undefined,
    filters.maxFitness !== undefined ? lte(results.bestSolutionFitness, filters.maxFitness) : undefined,
    filters.createdAfter ? gte(results.createdAt, filters.createdAfter) : undefined,
    filters.createdBefore ? lte(results.createdAt, filters.createdBefore) : undefined,
    plan.where,
  ];
  const rows = await db
    .select()
    .from(results)
    .where(and(...conditions))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

export async function getResult(db: Db, accountId: string, id: string): Promise<ResultRow | undefined> {
  return db
    .select()
    .from(results)
    .where(and(eq(results.id, id), eq(results.accountId, accountId)))
    .get();
}

export async function getResultFiles(db: Db, resultId: string): Promise<ResultFileRow[]> {
  return db.select().from(resultFiles).where(eq(resultFiles.resultId, resultId)).orderBy(resultFiles.name).all();
}

export async function getResultFile(db: Db, resultId: string, name: string): Promise<ResultFileRow | undefined> {
  return db
    .select()
    .from(resultFiles)
    .where(and(eq(resultFiles.resultId, resultId), eq(resultFiles.name, name)))
    .get();
}

export async function updateResult(db: Db, id: string, patch: { name?: string; isShared?: boolean }, now: string): Promise<void> {
  await db
    .update(results)
    .set({ ...patch, updatedAt: now })
    .where(eq(results.id, id));
}

/** Deletes the result row (its file rows cascade) and returns the R2 keys of its files. */
export async function deleteResult(db: Db, id: string): Promise<string[]> {
  const files = await getResultFiles(db, id);
  await db.delete(results).where(eq(results.id, id));
  return files.map((f) => f.r2Key);
}

/** A shared result by id, whoever owns it (the public page); undefined when it is not shared. */
export async function getSharedResult(db: Db, id: string): Promise<ResultRow | undefined> {
  return db
    .select()
    .from(results)
    .where(and(eq(results.id, id), eq(results.isShared, true)))
    .get();
}

/**
 * The account's results of a submission's runs, oldest first (by submission id, not a list of run ids:
 * a submission may have more runs than a D1 statement may bind parameters).
 */
export async function resultsOfSubmission(db: Db, accountId: string, submissionId: string): Promise<ResultRow[]> {
  return db
    .select()
    .from(results)
    .where(and(eq(results.accountId, accountId), eq(results.submissionId, submissionId)))
    .orderBy(results.createdAt, results.id)
    .all();
}

/** The account's results of these runs (at most 100 ids: a page or a comparison). */
export async function resultsOfRuns(db: Db, accountId: string, runIds: string[]): Promise<ResultRow[]> {
  if (!runIds.length) return [];
  return db
    .select()
    .from(results)
    .where(and(eq(results.accountId, accountId), inArray(results.runId, runIds)))
    .all();
}
