// A run's way from the queue to a worker: claim (queued → running), start, progress, give back.

import { limitsFor } from "../admission/admission";
import { checkpointPlan } from "../admission/limits";
import { config, runTokenSecret } from "../config";
import type { Bindings } from "../env";
import { enqueueRunDeliveries, eventStatements } from "../events/outbox";
import { occurredAt, resumedData } from "../events/payloads";
import { hmacSha256Hex } from "../lib/crypto";
import { nowIso } from "../lib/ids";
import type { PopulationStats, TrailPoint } from "../model/runs";
import { INTERNAL_HOST } from "../runner/container-runner";
import { getRunner, type StartRequest } from "../runner/runner";
import { getDb } from "../storage/db";
import { getResultFile } from "../storage/results";
import { findRunWithSource } from "../storage/run-end";
import {
  type ClaimedRun,
  claimQueuedRun,
  recordRunCheckpoint,
  recordRunProgress,
  resumeRunningRun,
  unclaimRunningRun,
} from "../storage/runs";
import type { RunRow } from "../storage/submissions";
import { runDataFiles } from "./data-files";
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

/**
 * queued → running, only if the run is still queued; the run's account is read in the same batch.
 * Null when a duplicate or late message finds the run taken.
 */
export function claimRun(env: Bindings, runId: string): Promise<ClaimedRun | null> {
  return claimQueuedRun(getDb(env.DB), runId, nowIso());
}

/**
 * running → queued after its worker was lost: it goes on from its last checkpoint (docs/architecture.md#durable-runs-issue-28),
 * and a `run.resumed` event goes to the webhooks subscribed to it (API submissions), in the same batch.
 */
export async function resumeRun(
  env: Bindings,
  run: RunRow,
  segment?: { cpuSeconds: number; wallMs: number; peakMb: number },
): Promise<boolean> {
  const db = getDb(env.DB);
  const now = nowIso();
  const found = await findRunWithSource(db, run.id);
  const fire = found?.source === "api";
  return resumeRunningRun(
    db,
    run,
    now,
    (resumed) =>
      fire
        ? [
            ...eventStatements(
              db,
              {
                id: crypto.randomUUID(),
                accountId: run.accountId,
                type: "run.resumed",
                data: resumedData({
                  submissionId: run.submissionId,
                  runId: run.id,
                  resumes: (run.resumes?.length ?? 0) + 1,
                  fromGeneration: run.checkpointGeneration,
                }),
                occurredAt: occurredAt(now),
                submissionId: run.submissionId,
                runId: run.id,
                origin: "run",
                createdAt: now,
              },
              "subscribed",
              resumed,
            ),
          ]
        : ([] as ReturnType<typeof eventStatements>[number][]),
    segment,
  ).then(async (moved) => {
    if (moved && fire)
      await enqueueRunDeliveries(env, run.id).catch((err) => console.error("run.resumed dispatch failed; the cron will send", err));
    return moved;
  });
}

/** running → queued after a failed start, so the queue's retry (or the cron) can hand it out again. */
export function unclaimRun(env: Bindings, run: RunRow): Promise<boolean> {
  return unclaimRunningRun(getDb(env.DB), run, nowIso());
}

/** A run whose start input is gone: it fails (`invalid_state`) rather than start. */
export class MissingInput extends Error {}
export class MissingPopulation extends MissingInput {}

/** Builds the worker's start request for a claimed run and hands it to the runner. */
export async function startRun(env: Bindings, { run, account }: ClaimedRun): Promise<"started" | "already"> {
  if (!account) throw new Error(`account ${run.accountId} of run ${run.id} is gone`);
  // Run caps follow how the run is paid (docs/api.md#payment).
  const limits = limitsFor(env, account, run.paidWithCredits ? "credits" : "plan");
  let initialPopulationUrl: string | null = null;
  if (run.kind === "continue" && run.parentResultId) {
    if (!(await startPopulationFile(env, run))) throw new MissingPopulation(`the population of result ${run.parentResultId} is gone`);
    initialPopulationUrl = `${reportUrl(env, run.id)}/initial-population`;
  } else if (run.startPopulationKey) {
    if (!(await env.FILES.head(run.startPopulationKey)))
      throw new MissingPopulation(`the start population of submission ${run.submissionId} is gone`);
    initialPopulationUrl = `${reportUrl(env, run.id)}/initial-population`;
  }
  const files = await runDataFiles(env, run);
  if (files.some((f) => f === null)) throw new MissingInput("a data file this run names is not recorded with its submission");
  const { data_files: _named, ...params } = run.parameters;
  const request: StartRequest = {
    run_id: run.id,
    submission_id: run.submissionId,
    params,
    data_files: files.map((f) => ({
      name: f!.name,
      sha256: f!.sha256,
      size_bytes: f!.sizeBytes,
      url: `${reportUrl(env, run.id)}/data-files/${f!.sha256}`,
    })),
    data_scope: run.accountId,
    initial_population: null,
    initial_population_url: initialPopulationUrl,
    caps: { time_seconds: limits.run_time_seconds, memory_mb: limits.run_memory_mb },
    report: { url: reportUrl(env, run.id), token: await runToken(env, run.id) },
    checkpoint: checkpointPlan(limits, config(env).checkpointSeconds),
    // A resumed run with a checkpoint goes on from it; without one it starts again from generation 0.
    checkpoint_url: run.checkpointGeneration !== null ? `${reportUrl(env, run.id)}/checkpoint` : null,
  };
  return getRunner(env).start(request, run.attempts);
}

/**
 * Where a run's start population is in R2: a continue's, its parent result's population.json; another
 * run's, the start population its submission was created with (undefined when it has none).
 */
export async function startPopulationFile(env: Bindings, run: RunRow): Promise<{ r2Key: string } | undefined> {
  if (run.parentResultId) return getResultFile(getDb(env.DB), run.parentResultId, POPULATION_FILE);
  return run.startPopulationKey ? { r2Key: run.startPopulationKey } : undefined;
}

/** A checkpoint the GA worker stored (R2 has its bytes): recorded on the running run; false when it is not running. */
export function recordCheckpoint(
  env: Bindings,
  runId: string,
  c: { generation: number; cpuSeconds: number; wallMs: number; peakMb: number },
): Promise<boolean> {
  return recordRunCheckpoint(getDb(env.DB), runId, c, nowIso());
}

/** Objectives a progress trail point keeps: as many as the charts draw (fitness.svg's panels). */
const TRAIL_OBJECTIVES = MAX_PANELS;
/** Trail points one progress report may carry (the GA worker's wire.TRAIL_POINTS_PER_REPORT). */
export const TRAIL_POINTS_PER_REPORT = 2000;

/** A trail point as the run row keeps it: the first TRAIL_OBJECTIVES objectives of each list. */
function keptPoint(p: TrailPoint): TrailPoint {
  const [generation, best, maxima, objectives, population] = p;
  const cut = (v: (number | null)[] | null | undefined) => (v ? v.slice(0, TRAIL_OBJECTIVES) : v);
  if (p.length <= 2) return [generation, best];
  if (p.length === 3) return [generation, best, cut(maxima)];
  if (p.length === 4) return [generation, best, cut(maxima), cut(objectives)];
  return [generation, best, cut(maxima), cut(objectives), population];
}

/** Live progress from the worker; also the run's heartbeat. False when the run is not running. */
export async function recordProgress(
  env: Bindings,
  runId: string,
  progress: {
    generations_completed: number;
    best_solution_fitness: number | null;
    best_solution_objectives?: number[] | null;
    best_objectives?: number[] | null;
    population?: PopulationStats | null;
    /** The generations since the previous report (docs/runner-protocol.md), appended to the trail as they are. */
    points?: TrailPoint[] | null;
  },
): Promise<boolean> {
  const { generations_completed: generation, best_solution_fitness: best, best_objectives: maxima } = progress;
  const objectives = progress.best_solution_objectives;
  const point: TrailPoint = maxima
    ? objectives
      ? [generation, best, maxima.slice(0, TRAIL_OBJECTIVES), objectives.slice(0, TRAIL_OBJECTIVES)]
      : [generation, best, maxima.slice(0, TRAIL_OBJECTIVES)]
    : progress.population
      ? [generation, best, null, null, progress.population]
      : [generation, best];
  const points = progress.points?.length ? progress.points.map(keptPoint) : null;
  return recordRunProgress(getDb(env.DB), runId, progress, points ?? point, nowIso());
}
