// The statements of a run's end (domain/transitions.ts batches them). The first moves the run out of a
// live state and stamps its terminal token; each later one applies only WHERE `won` holds — the token
// is on the run — so of two racing callers exactly one changes anything.
import { eq, inArray, type SQL, sql } from "drizzle-orm";
import { type ConstraintViolation, type EndedStatus, LIVE_STATUSES, type PopulationPoint, type RunWarning } from "../model/runs";
import type { Db } from "./db";
import { runs, submissions } from "./schema";
import type { RunRow } from "./submissions";

/** The run, its submission's source and the sweep it is a child of (if any), if the run exists. */
export function findRunWithSource(db: Db, runId: string) {
  return db
    .select({ run: runs, source: submissions.source, sweepId: submissions.sweepId })
    .from(runs)
    .leftJoin(submissions, eq(submissions.id, runs.submissionId))
    .where(eq(runs.id, runId))
    .get();
}

/** `EXISTS` the run with this terminal token: the condition of every statement after the first. */
export const wonBy = (runId: string, token: string): SQL =>
  sql`EXISTS (SELECT 1 FROM runs WHERE id = ${runId} AND terminal_token = ${token})`;

export interface RunEndFields {
  status: EndedStatus;
  token: string;
  now: string;
  usage: { cpuSeconds: number; peakMemoryMb: number; wallMs: number };
  hitTimeCap: boolean;
  hitMemoryCap: boolean;
  error: { code: string; message: string } | null;
  output: string | null;
  engine: string | null;
  warnings: RunWarning[] | null;
  chargedMicro: number;
  generationsCompleted: number | null;
  /** The best fitness of a result; undefined keeps the last progress report's. */
  bestSolutionFitness: number | null | undefined;
}

/** Moves a live run to its end (RETURNING its id: one row exactly when this caller won). */
export function endRunStatement(db: Db, runId: string, f: RunEndFields) {
  return db.run(sql`
    UPDATE runs SET status = ${f.status}, terminal_token = ${f.token}, finished_at = ${f.now}, updated_at = ${f.now},
      execution_duration_ms = ${f.usage.wallMs}, cpu_seconds_used = ${f.usage.cpuSeconds}, peak_memory_mb = ${f.usage.peakMemoryMb},
      hit_time_cap = ${f.hitTimeCap ? 1 : 0}, hit_memory_cap = ${f.hitMemoryCap ? 1 : 0},
      error_code = ${f.error?.code ?? null}, error_message = ${f.error?.message ?? null},
      output = ${f.output}, engine = ${f.engine}, warnings = ${f.warnings === null ? null : JSON.stringify(f.warnings)},
      credits_charged_micro = ${f.chargedMicro},
      generations_completed = coalesce(${f.generationsCompleted}, generations_completed),
      best_solution_fitness = ${f.bestSolutionFitness === undefined ? sql`best_solution_fitness` : f.bestSolutionFitness}
    WHERE id = ${runId} AND ${inArray(runs.status, [...LIVE_STATUSES])} RETURNING id`);
}

export interface ResultFields {
  resultId: string;
  now: string;
  bestSolution: number[];
  bestSolutionFitness: number | null;
  bestSolutionGeneration: number | null;
  bestSolutionsFitness: (number | null | number[])[];
  generationsCompleted: number;
  stoppedReason: string;
  engine: string | null;
  warnings: RunWarning[];
  numObjectives: number;
  bestSolutionObjectives: number[] | null;
  objectiveMaxima: number[][] | null;
  populationHistory: PopulationPoint[] | null;
  paretoFrontSize: number | null;
  constraintViolations: ConstraintViolation[] | null;
}

/** The result row of a successful run (named after its submission at this moment). */
export function insertResultStatement(db: Db, run: RunRow, r: ResultFields, won: SQL) {
  return db.run(sql`
    INSERT INTO results (id, account_id, submission_id, run_id, name, is_shared, best_solution, best_solution_fitness,
      best_solution_generation, best_solutions_fitness, generations_completed, stopped_reason, parameters, engine, warnings,
      num_objectives, best_solution_objectives, objective_maxima, population_history, pareto_front_size, constraint_violations,
      resumes, created_at, updated_at)
    SELECT ${r.resultId}, ${run.accountId}, ${run.submissionId}, ${run.id}, s.name, 0, ${JSON.stringify(r.bestSolution)},
      ${r.bestSolutionFitness}, ${r.bestSolutionGeneration}, ${JSON.stringify(r.bestSolutionsFitness)},
      ${r.generationsCompleted}, ${r.stoppedReason}, ${JSON.stringify(run.parameters)}, ${r.engine}, ${JSON.stringify(r.warnings)},
      ${r.numObjectives}, ${r.bestSolutionObjectives === null ? null : JSON.stringify(r.bestSolutionObjectives)},
      ${r.objectiveMaxima === null ? null : JSON.stringify(r.objectiveMaxima)},
      ${r.populationHistory === null ? null : JSON.stringify(r.populationHistory)}, ${r.paretoFrontSize},
      ${r.constraintViolations === null ? null : JSON.stringify(r.constraintViolations)},
      (SELECT resumes FROM runs WHERE id = ${run.id}), ${r.now}, ${r.now}
    FROM submissions s WHERE s.id = ${run.submissionId} AND ${won}`);
}

export function insertResultFileStatement(
  db: Db,
  resultId: string,
  file: { name: string; contentType: string; size: number; key: string },
  now: string,
  won: SQL,
) {
  return db.run(sql`
    INSERT INTO result_files (result_id, name, content_type, size_bytes, r2_key, created_at)
    SELECT ${resultId}, ${file.name}, ${file.contentType}, ${file.size}, ${file.key}, ${now} WHERE ${won}`);
}

/** The submission follows its latest run's end; a deletion removes it (its runs and results go by cascade). */
export function endSubmissionStatement(
  db: Db,
  run: RunRow,
  ended: { deleted: boolean; status: string; chargedMicro: number; now: string },
  won: SQL,
) {
  return ended.deleted
    ? db.run(sql`DELETE FROM submissions WHERE id = ${run.submissionId} AND ${won}`)
    : db.run(sql`
        UPDATE submissions SET updated_at = ${ended.now}, credits_charged_micro = credits_charged_micro + ${ended.chargedMicro},
          status = CASE WHEN latest_run_id = ${run.id} THEN ${ended.status} ELSE status END
        WHERE id = ${run.submissionId} AND ${won}`);
}

/**
 * Of these run ids, those still queued and admitted (the Dispatcher's reconciliation of its waiting line;
 * a sweep's child awaiting a slot waits for no place).
 */
export async function queuedRunIds(d1: D1Database, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const found = await d1
    .prepare(`SELECT id FROM runs WHERE id IN (${runIds.map(() => "?").join(",")}) AND status = 'queued' AND awaiting_slot = 0`)
    .bind(...runIds)
    .all<{ id: string }>();
  return new Set(found.results.map((r) => r.id));
}

/** Of these run ids, those still live (the account and Dispatcher Durable Objects' reconciliation). */
export async function liveRunIds(d1: D1Database, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const placeholders = runIds.map(() => "?").join(",");
  const statuses = LIVE_STATUSES.map((s) => `'${s}'`).join(", ");
  const live = await d1
    .prepare(`SELECT id FROM runs WHERE id IN (${placeholders}) AND status IN (${statuses})`)
    .bind(...runIds)
    .all<{ id: string }>();
  return new Set(live.results.map((r) => r.id));
}
