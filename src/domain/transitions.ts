// The one place where a run ends: succeeded, failed, cancelled, or deleted with its submission.
//
// Everything a run's end changes is written in one D1 batch (one transaction): the run, the
// submission, the result and its file rows, the credit charge and the account balance. The first
// statement moves the run out of a live state and stamps it with a fresh token; every later
// statement only applies WHERE that token is on the run, so when two callers race (a completion
// report and a cancel, or a queue message delivered twice) exactly one batch changes anything.
import { eq, sql } from "drizzle-orm";
import type { Bindings } from "../env";
import { chargeMicro, prices } from "../billing/prices";
import { getDb } from "../storage/db";
import { runs, submissions } from "../storage/schema";
import type { RunRow } from "../storage/submissions";
import { newId, nowIso } from "./ids";
import { buildResultFiles, POPULATION_FILE, r2Key, stagedPopulationKey, type GaResult } from "./result-files";
import type { RunMetrics } from "../runner/runner";
import { afterRunEnded } from "./run-hooks";
import { runEndOutboxStatements } from "../webhooks/outbox";

export type TerminalStatus = "succeeded" | "failed" | "cancelled" | "deleted";

export interface RunOutcome {
  status: TerminalStatus;
  result?: GaResult | null;
  error?: { code: string; message: string } | null;
  metrics?: RunMetrics | null;
  output?: string | null;
  engine?: string | null;
}

/** Everything known about a run's end, for the statements and hooks that react to it. */
export interface EndedRun {
  run: RunRow;
  source: "api" | "web";
  status: TerminalStatus;
  resultId: string | null;
  result: GaResult | null;
  error: { code: string; message: string } | null;
  metrics: RunMetrics | null;
  usage: { cpuSeconds: number; peakMemoryMb: number; wallMs: number };
  chargedMicro: number;
  endedAt: string;
}

const LIVE = sql`('queued', 'running')`;

function usageOf(run: RunRow, metrics: RunMetrics | null | undefined, now: string) {
  const wallMs = metrics?.execution_duration_ms ?? (run.startedAt ? Math.max(0, Date.parse(now) - Date.parse(run.startedAt)) : 0);
  return {
    cpuSeconds: metrics?.cpu_seconds_used ?? 0,
    peakMemoryMb: metrics?.peak_memory_mb ?? 0,
    wallMs,
  };
}

/**
 * Ends a live run. Returns what ended, or null when the run was not live any more (unknown, already
 * ended, or another caller won the race) — then nothing was changed.
 */
export async function endRun(env: Bindings, runId: string, outcome: RunOutcome): Promise<EndedRun | null> {
  const db = getDb(env.DB);
  const found = await db
    .select({ run: runs, source: submissions.source })
    .from(runs)
    .leftJoin(submissions, eq(submissions.id, runs.submissionId))
    .where(eq(runs.id, runId))
    .get();
  const run = found?.run;
  if (!run || (run.status !== "queued" && run.status !== "running")) return null;

  const now = nowIso();
  const token = crypto.randomUUID();
  const usage = usageOf(run, outcome.metrics, now);
  const charge = run.paidWithCredits ? chargeMicro(usage, prices(env)) : { amountMicro: 0, gbSeconds: 0 };
  const won = sql`EXISTS (SELECT 1 FROM runs WHERE id = ${runId} AND terminal_token = ${token})`;
  const storedStatus = outcome.status === "deleted" ? "cancelled" : outcome.status;
  const result = outcome.status === "succeeded" ? outcome.result ?? null : null;

  const statements = [
    db.run(sql`
      UPDATE runs SET status = ${storedStatus}, terminal_token = ${token}, finished_at = ${now}, updated_at = ${now},
        execution_duration_ms = ${usage.wallMs}, cpu_seconds_used = ${usage.cpuSeconds}, peak_memory_mb = ${usage.peakMemoryMb},
        hit_time_cap = ${outcome.metrics?.hit_time_cap ? 1 : 0}, hit_memory_cap = ${outcome.metrics?.hit_memory_cap ? 1 : 0},
        error_code = ${outcome.error?.code ?? null}, error_message = ${outcome.error?.message ?? null},
        output = ${outcome.output ?? null}, engine = ${outcome.engine ?? null}, credits_charged_micro = ${charge.amountMicro},
        generations_completed = coalesce(${result?.generations_completed ?? null}, generations_completed),
        best_solution_fitness = ${result ? result.best_solution_fitness : sql`best_solution_fitness`}
      WHERE id = ${runId} AND status IN ${LIVE} RETURNING id`),
  ];

  // The charge: one ledger row per run (also unique by run_id), free credits first, then paid.
  if (run.paidWithCredits) {
    statements.push(
      db.run(sql`
        INSERT INTO credit_ledger (id, account_id, kind, run_id, submission_id, amount_micro, free_delta_micro, paid_delta_micro, cpu_seconds, gb_seconds, created_at)
        SELECT ${newId()}, a.id, 'run_charge', ${runId}, ${run.submissionId}, ${-charge.amountMicro},
          -min(${charge.amountMicro}, max(a.free_credits_micro, 0)), -(${charge.amountMicro} - min(${charge.amountMicro}, max(a.free_credits_micro, 0))),
          ${usage.cpuSeconds}, ${charge.gbSeconds}, ${now}
        FROM accounts a WHERE a.id = ${run.accountId} AND ${won}`),
      db.run(sql`
        UPDATE accounts SET
          free_credits_micro = free_credits_micro - min(${charge.amountMicro}, max(free_credits_micro, 0)),
          paid_credits_micro = paid_credits_micro - (${charge.amountMicro} - min(${charge.amountMicro}, max(free_credits_micro, 0))),
          updated_at = ${now}
        WHERE id = ${run.accountId} AND ${won}`),
    );
  }

  let resultId: string | null = null;
  const files = [];
  const fileRow = (name: string, contentType: string, size: number, key: string) =>
    db.run(sql`
      INSERT INTO result_files (result_id, name, content_type, size_bytes, r2_key, created_at)
      SELECT ${resultId}, ${name}, ${contentType}, ${size}, ${key}, ${now} WHERE ${won}`);
  if (result) {
    resultId = newId();
    const summary = {
      result_id: resultId,
      submission_id: run.submissionId,
      run_id: runId,
      ...result,
      population: undefined,
      metrics: { ...outcome.metrics, execution_duration_ms: usage.wallMs },
      parameters: run.parameters,
      created_at: now,
    };
    files.push(...buildResultFiles(summary, result));
    statements.push(
      db.run(sql`
        INSERT INTO results (id, account_id, submission_id, run_id, name, is_shared, best_solution, best_solution_fitness,
          best_solution_generation, best_solutions_fitness, generations_completed, stopped_reason, parameters, created_at, updated_at)
        SELECT ${resultId}, ${run.accountId}, ${run.submissionId}, ${runId}, s.name, 0, ${JSON.stringify(result.best_solution)},
          ${result.best_solution_fitness}, ${result.best_solution_generation}, ${JSON.stringify(result.best_solutions_fitness)},
          ${result.generations_completed}, ${result.stopped_reason}, ${JSON.stringify(run.parameters)}, ${now}, ${now}
        FROM submissions s WHERE s.id = ${run.submissionId} AND ${won}`),
      ...files.map((f) => fileRow(f.name, f.contentType, new TextEncoder().encode(f.body).byteLength, r2Key(resultId!, f.name))),
    );
    // The final population, streamed to R2 by the GA worker before its report, stays where it is.
    const staged = result.population ? null : await env.FILES.head(stagedPopulationKey(runId));
    if (staged) statements.push(fileRow(POPULATION_FILE, "application/json", staged.size, staged.key));
  }

  const ended: EndedRun = {
    run,
    source: found.source ?? "api",
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
  statements.push(...runEndOutboxStatements(db, ended, won));

  statements.push(
    outcome.status === "deleted"
      ? db.run(sql`DELETE FROM submissions WHERE id = ${run.submissionId} AND ${won}`)
      : db.run(sql`
          UPDATE submissions SET updated_at = ${now}, credits_charged_micro = credits_charged_micro + ${charge.amountMicro},
            status = CASE WHEN latest_run_id = ${runId} THEN ${storedStatus} ELSE status END
          WHERE id = ${run.submissionId} AND ${won}`),
  );

  // Files first: if this caller then loses the race, they are removed again.
  if (resultId) {
    await Promise.all(files.map((f) => env.FILES.put(r2Key(resultId!, f.name), f.body, { httpMetadata: { contentType: f.contentType } })));
  }
  const [first] = await db.batch(statements as [(typeof statements)[0], ...typeof statements]);
  // Whether this caller's update moved the run (`meta.changes` would also count the platform
  // queue trigger's row).
  const applied = ((first as unknown as D1Result).results ?? []).length === 1;
  if (!applied) {
    if (resultId) await env.FILES.delete(files.map((f) => r2Key(resultId!, f.name)));
    return null;
  }
  // A run that ended without a result has no use for a population it may have uploaded.
  if (!resultId) await env.FILES.delete(stagedPopulationKey(runId));
  await afterRunEnded(env, ended);
  return ended;
}
