// A run's way from the queue to a worker: claim (queued → running), start, progress, give back.

import { and, eq, sql } from "drizzle-orm";
import { limitsFor } from "../admission/admission";
import { config, runTokenSecret } from "../config";
import type { Bindings } from "../env";
import { hmacSha256Hex } from "../lib/crypto";
import { nowIso } from "../lib/ids";
import { INTERNAL_HOST } from "../runner/container-runner";
import { getRunner, type StartRequest } from "../runner/runner";
import type { AccountRow } from "../storage/accounts";
import { getDb } from "../storage/db";
import { getResultFile } from "../storage/results";
import { accounts, runs, submissions } from "../storage/schema";
import type { RunRow } from "../storage/submissions";
import { MAX_PANELS } from "./plots";
import { POPULATION_FILE } from "./result-files";

/** The per-run token the GA worker presents on its reports; the user's code never sees it. */
export async function runToken(env: Bindings, runId: string): Promise<string> {
  return hmacSha256Hex(runTokenSecret(env), `run:${runId}`);
}

export function reportUrl(env: Bindings, runId: string): string {
  const base = config(env).reportBaseUrl ?? `http://${INTERNAL_HOST}`;
  return `${base.replace(/\/$/, "")}/internal/v1/runs/${runId}`;
}

export interface ClaimedRun {
  run: RunRow;
  /** The run's account as read in the claim (its limits decide the run's caps). */
  account: AccountRow | undefined;
}

/**
 * queued → running, only if the run is still queued; the run's account is read in the same batch.
 * Null when a duplicate or late message finds the run taken.
 */
export async function claimRun(env: Bindings, runId: string): Promise<ClaimedRun | null> {
  const db = getDb(env.DB);
  const now = nowIso();
  const [claimed, , account] = await db.batch([
    db
      .update(runs)
      .set({ status: "running", startedAt: now, heartbeatAt: now, attempts: sql`${runs.attempts} + 1`, updatedAt: now })
      .where(and(eq(runs.id, runId), eq(runs.status, "queued")))
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

/** running → queued after a failed start, so the queue's retry (or the cron) can hand it out again. */
export async function unclaimRun(env: Bindings, run: RunRow): Promise<boolean> {
  const db = getDb(env.DB);
  const now = nowIso();
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

export class MissingPopulation extends Error {}

/** Builds the worker's start request for a claimed run and hands it to the runner. */
export async function startRun(env: Bindings, { run, account }: ClaimedRun): Promise<"started" | "already"> {
  if (!account) throw new Error(`account ${run.accountId} of run ${run.id} is gone`);
  // Run caps follow how the run is paid (docs/api.md#payment).
  const limits = limitsFor(env, account, run.paidWithCredits ? "credits" : "plan");
  let initialPopulationUrl: string | null = null;
  if (run.kind === "continue" && run.parentResultId) {
    if (!(await startPopulationFile(env, run))) throw new MissingPopulation(`the population of result ${run.parentResultId} is gone`);
    initialPopulationUrl = `${reportUrl(env, run.id)}/initial-population`;
  }
  const request: StartRequest = {
    run_id: run.id,
    submission_id: run.submissionId,
    params: run.parameters,
    initial_population: null,
    initial_population_url: initialPopulationUrl,
    caps: { time_seconds: limits.run_time_seconds, memory_mb: limits.run_memory_mb },
    report: { url: reportUrl(env, run.id), token: await runToken(env, run.id) },
  };
  return getRunner(env).start(request);
}

/** The file row of a continue run's start population (its parent result's population.json). */
export async function startPopulationFile(env: Bindings, run: RunRow) {
  return run.parentResultId ? getResultFile(getDb(env.DB), run.parentResultId, POPULATION_FILE) : undefined;
}

/** Objectives a progress trail point keeps: as many as the charts draw (fitness.svg's panels). */
const TRAIL_OBJECTIVES = MAX_PANELS;

/** Live progress from the worker; also the run's heartbeat. False when the run is not running. */
export async function recordProgress(
  env: Bindings,
  runId: string,
  progress: { generations_completed: number; best_solution_fitness: number | null; best_objectives?: number[] | null },
): Promise<boolean> {
  const point = [
    progress.generations_completed,
    progress.best_solution_fitness,
    ...(progress.best_objectives ? [progress.best_objectives.slice(0, TRAIL_OBJECTIVES)] : []),
  ];
  const db = getDb(env.DB);
  const updated = await db
    .update(runs)
    .set({
      generationsCompleted: progress.generations_completed,
      bestSolutionFitness: progress.best_solution_fitness,
      heartbeatAt: nowIso(),
      // The trail of the live chart: a point per report that moved to a new generation (a heartbeat
      // that did not is not repeated), at most one per 1.5 s report, so bounded by the time cap:
      // [generation, best fitness] or, with several objectives, [generation, null, [best of each]].
      progressTrail: sql`CASE
        WHEN ${runs.generationsCompleted} IS ${progress.generations_completed} OR ${progress.generations_completed} = 0 THEN ${runs.progressTrail}
        ELSE json_insert(coalesce(${runs.progressTrail}, '[]'), '$[#]', json(${JSON.stringify(point)}))
      END`,
    })
    .where(and(eq(runs.id, runId), eq(runs.status, "running")))
    .returning({ id: runs.id });
  return updated.length === 1;
}
