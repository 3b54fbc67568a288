// The one place where a run ends: succeeded, failed, cancelled, or deleted with its submission.
//
// Everything a run's end changes is written in one D1 batch (one transaction): the run, the
// submission, the result and its file rows, the credit charge and the account balance, the webhook
// events and their deliveries (the statements: storage/run-end.ts, storage/ledger.ts, storage/events.ts).
// The first statement moves the run out of a live state and stamps it with a fresh token; every later
// statement only applies WHERE that token is on the run, so when two callers race (a completion
// report and a cancel, or a queue message delivered twice) exactly one batch changes anything.
// After the batch, the winner alone gives the run's admission places back and sends its events.

import { chargeMicro, prices } from "../billing/prices";
import { accountGate } from "../do/account-gate/client";
import { releasePlace } from "../do/dispatcher/client";
import type { Bindings } from "../env";
import { enqueueRunDeliveries, type RunEndEventFacts, runEndOutboxStatements } from "../events/outbox";
import { newId, nowIso } from "../lib/ids";
import { type EndedStatus, isLive, type RunWarning, type SubmissionSource } from "../model/runs";
import type { RunMetrics } from "../runner/runner";
import { getDb, rowsReturned } from "../storage/db";
import { runChargeStatements } from "../storage/ledger";
import {
  endRunStatement,
  endSubmissionStatement,
  findRunWithSource,
  insertResultFileStatement,
  insertResultStatement,
  wonBy,
} from "../storage/run-end";
import type { RunRow } from "../storage/submissions";
import {
  checkpointKey,
  type GaResult,
  POPULATION_FILE,
  reportFiles,
  rowFitness,
  STAGED_FILES,
  STAGED_NAMES,
  type StoredFile,
  stagedKey,
  storeResultFiles,
  summaryFile,
} from "./result-files";
import { admitWaiting, finishSweep } from "./sweep-progress";

/** How a run ended: one of the ended statuses, or deleted with its submission (stored as cancelled). */
export type TerminalStatus = EndedStatus | "deleted";

export interface RunOutcome {
  status: TerminalStatus;
  result?: GaResult | null;
  error?: { code: string; message: string } | null;
  /** The GA worker's word that the user's code did not compile (so none of it ran): charged 0. */
  compileFailed?: boolean;
  metrics?: RunMetrics | null;
  output?: string | null;
  engine?: string | null;
  warnings?: RunWarning[];
  /** How far a failed run got, as the GA worker last knew it. */
  progress?: { generations_completed: number; best_solution_fitness: number | null } | null;
  /** No webhook event for this end (a sweep's child ended by the sweep's cancel: the sweep's own event tells). */
  silent?: boolean;
}

/** Everything known about a run's end, for the statements and the steps that follow it. */
export interface EndedRun {
  run: RunRow;
  source: SubmissionSource;
  /** The sweep whose child the run is (its initial run), or null. */
  sweepId: string | null;
  silent: boolean;
  status: TerminalStatus;
  resultId: string | null;
  result: GaResult | null;
  error: { code: string; message: string } | null;
  metrics: RunMetrics | null;
  usage: { cpuSeconds: number; peakMemoryMb: number; wallMs: number };
  chargedMicro: number;
  endedAt: string;
}

/**
 * The run's usage: its last segment's (as measured, else its wall time so far) plus, for a resumed
 * run, its earlier segments' up to their last checkpoints (docs/architecture.md#durable-runs-issue-28):
 * every segment billed once, in this one charge.
 */
function usageOf(run: RunRow, metrics: RunMetrics | null | undefined, now: string) {
  const wallMs = metrics?.execution_duration_ms ?? (run.startedAt ? Math.max(0, Date.parse(now) - Date.parse(run.startedAt)) : 0);
  return {
    cpuSeconds: (metrics?.cpu_seconds_used ?? 0) + (run.priorCpuSeconds ?? 0),
    peakMemoryMb: Math.max(metrics?.peak_memory_mb ?? 0, run.priorPeakMb ?? 0),
    wallMs: wallMs + (run.priorWallMs ?? 0),
  };
}

/**
 * Ends a live run. Returns what ended, or null when the run was not live any more (unknown, already
 * ended, or another caller won the race) — then nothing was changed.
 */
export async function endRun(env: Bindings, runId: string, outcome: RunOutcome): Promise<EndedRun | null> {
  const db = getDb(env.DB);
  const result = outcome.status === "succeeded" ? (outcome.result ?? null) : null;
  const resultId = result ? newId() : null;
  // While the run is read: what the GA worker uploaded before its report (the final population when
  // it was too large to ride inline, a front's solutions, saved solutions) is looked up, and the files
  // built from the report alone are written (files first: a caller that finds the run ended, or loses
  // the race below, removes them again). result.json needs the run's row: it is written after.
  // (Not looked for: a population that rode inline, a front's files and history when the result has no front.)
  const stagedNames = result
    ? STAGED_NAMES.filter(
        (name) => !(name === POPULATION_FILE && result.population) && !(name.startsWith("pareto_") && !result.pareto_front),
      )
    : [];
  const fromReport = result ? reportFiles(result, outcome.output ?? null) : [];
  const nothingStored: StoredFile[] = [];
  const [found, staged, stored] = await Promise.all([
    findRunWithSource(db, runId),
    Promise.all(stagedNames.map((name) => env.FILES.head(stagedKey(runId, name)))),
    resultId ? storeResultFiles(env.FILES, resultId, fromReport) : nothingStored,
  ]);
  const run = found?.run;
  if (!run || !isLive(run.status)) {
    if (stored.length) await env.FILES.delete(stored.map((f) => f.key));
    return null;
  }

  const now = nowIso();
  const token = crypto.randomUUID();
  const usage = usageOf(run, outcome.metrics, now);
  // A run whose code did not compile ran none of it: charged 0 (docs/api.md#credits); a zero ledger row.
  const charge = run.paidWithCredits && !outcome.compileFailed ? chargeMicro(usage, prices(env)) : { amountMicro: 0, gbSeconds: 0 };
  const won = wonBy(runId, token);
  const storedStatus = outcome.status === "deleted" ? "cancelled" : outcome.status;

  const statements = [
    endRunStatement(db, runId, {
      status: storedStatus,
      token,
      now,
      usage,
      hitTimeCap: outcome.metrics?.hit_time_cap ?? false,
      hitMemoryCap: outcome.metrics?.hit_memory_cap ?? false,
      error: outcome.error ?? null,
      output: outcome.output ?? null,
      engine: outcome.engine ?? null,
      warnings: outcome.warnings ?? null,
      chargedMicro: charge.amountMicro,
      generationsCompleted: result?.generations_completed ?? outcome.progress?.generations_completed ?? null,
      bestSolutionFitness: result
        ? rowFitness(result.best_solution_fitness)
        : outcome.progress
          ? outcome.progress.best_solution_fitness
          : undefined,
    }),
  ];

  if (run.paidWithCredits) {
    statements.push(
      ...runChargeStatements(
        db,
        {
          ledgerId: newId(),
          accountId: run.accountId,
          runId,
          submissionId: run.submissionId,
          amountMicro: charge.amountMicro,
          cpuSeconds: usage.cpuSeconds,
          gbSeconds: charge.gbSeconds,
          resumes: run.resumes?.length ?? 0,
          now,
        },
        won,
      ),
    );
  }

  if (result && resultId) {
    // result.json needs the run's row: written now, before the batch (files first, as the others).
    const summary = summaryFile({ result_id: resultId, submission_id: run.submissionId, run_id: runId }, result, {
      engine: outcome.engine ?? null,
      warnings: outcome.warnings ?? [],
      metrics: { ...outcome.metrics, execution_duration_ms: usage.wallMs },
      parameters: run.parameters,
      created_at: now,
    });
    stored.unshift(...(await storeResultFiles(env.FILES, resultId, [summary])));
    const id = resultId;
    statements.push(
      insertResultStatement(
        db,
        run,
        {
          resultId: id,
          now,
          bestSolution: result.best_solution,
          bestSolutionFitness: rowFitness(result.best_solution_fitness),
          bestSolutionGeneration: result.best_solution_generation,
          bestSolutionsFitness: result.best_solutions_fitness.map((f) => (Array.isArray(f) ? f : rowFitness(f))),
          generationsCompleted: result.generations_completed,
          stoppedReason: result.stopped_reason,
          engine: outcome.engine ?? null,
          warnings: outcome.warnings ?? [],
          numObjectives: result.num_objectives,
          bestSolutionObjectives: result.best_solution_objectives,
          objectiveMaxima: result.objective_maxima,
          populationHistory: result.population_history ?? null,
          paretoFrontSize: result.pareto_front?.size ?? null,
          constraintViolations: result.constraint_violations,
        },
        won,
      ),
      ...stored.map((f) => insertResultFileStatement(db, id, f, now, won)),
    );
    // What the GA worker uploaded stays where it is and becomes the result's file.
    stagedNames.forEach((name, i) => {
      const object = staged[i];
      if (object)
        statements.push(
          insertResultFileStatement(db, id, { name, contentType: STAGED_FILES[name], size: object.size, key: object.key }, now, won),
        );
    });
  }

  const ended: EndedRun = {
    run,
    source: found.source ?? "api",
    sweepId: run.kind === "initial" ? (found.sweepId ?? null) : null,
    silent: outcome.silent ?? false,
    status: outcome.status,
    resultId,
    result,
    error: outcome.error ?? null,
    metrics: outcome.metrics ?? null,
    usage,
    chargedMicro: charge.amountMicro,
    endedAt: now,
  };

  // Webhook outbox: the events and their deliveries, in this same batch (only for the caller that won).
  const facts = runEndFacts(ended);
  if (facts) statements.push(...runEndOutboxStatements(db, facts, won));

  statements.push(
    endSubmissionStatement(
      db,
      run,
      { deleted: outcome.status === "deleted", status: storedStatus, chargedMicro: charge.amountMicro, now },
      won,
    ),
  );

  // The files were written first: if this caller loses the race, they are removed again.
  const [first] = await db.batch(statements as [(typeof statements)[0], ...typeof statements]);
  // Whether this caller's update moved the run (`meta.changes` would also count the platform
  // queue trigger's row).
  const applied = rowsReturned(first) === 1;
  if (!applied) {
    if (stored.length) await env.FILES.delete(stored.map((f) => f.key));
    return null;
  }
  // A run that ended without a result has no use for the files it may have uploaded; no ended run
  // has a use for its checkpoint.
  await env.FILES.delete([...(resultId ? [] : STAGED_NAMES.map((name) => stagedKey(runId, name))), checkpointKey(runId)]);
  await afterRunEnded(env, ended);
  return ended;
}

/** What the run's webhook events say; runs of `web` submissions, deletions and silent ends fire nothing. */
function runEndFacts(ended: EndedRun): RunEndEventFacts | null {
  if (ended.source === "web" || ended.status === "deleted" || ended.silent) return null;
  return {
    accountId: ended.run.accountId,
    submissionId: ended.run.submissionId,
    runId: ended.run.id,
    endedAt: ended.endedAt,
    status: ended.status,
    resultId: ended.resultId,
    bestSolutionFitness: ended.result ? rowFitness(ended.result.best_solution_fitness) : null,
    numObjectives: ended.result?.num_objectives ?? null,
    bestSolutionObjectives: ended.result?.best_solution_objectives ?? null,
    paretoFrontSize: ended.result?.pareto_front?.size ?? null,
    generationsCompleted: ended.result?.generations_completed ?? null,
    error: ended.error,
    executionDurationMs: ended.usage.wallMs,
    cpuSecondsUsed: ended.usage.cpuSeconds,
    peakMemoryMb: ended.usage.peakMemoryMb,
    hitMemoryCap: ended.metrics?.hit_memory_cap ?? false,
    hitTimeCap: ended.metrics?.hit_time_cap ?? false,
  };
}

/**
 * What else happens once the run's end is written (exactly once, by the caller that won): its slot and
 * in-flight place go back to the account's gate (its platform queue place went with its status), its
 * run place (or its turn in the line) to the Dispatcher, and the deliveries written in the batch are
 * sent. Then the slot it freed goes to the account's next sweep child waiting for one, and a sweep whose
 * last child this was ends (domain/sweep-progress.ts). All idempotent; the cron does anything left.
 */
export async function afterRunEnded(env: Bindings, ended: EndedRun): Promise<void> {
  const sends =
    ended.source === "api" && ended.status !== "deleted" && !ended.silent
      ? enqueueRunDeliveries(env, ended.run.id).catch((err) =>
          console.error("webhook dispatch failed; the cron will send", ended.run.id, err),
        )
      : Promise.resolve();
  await Promise.all([accountGate(env, ended.run.accountId).release(ended.run.id), releasePlace(env, ended.run.id), sends]);
  try {
    await admitWaiting(env, ended.run.accountId);
    if (ended.sweepId) await finishSweep(env, ended.sweepId);
  } catch (err) {
    console.error("sweep progress after a run's end failed; the cron will redo it", ended.run.id, err);
  }
}
