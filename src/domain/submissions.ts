// Submissions and their runs: create, add a run (reexecute / continue), cancel, delete (docs/api.md#submissions-runs-results).

import { platformQueueCap } from "../admission/admission";
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { newId, nowIso } from "../lib/ids";
import type { GaParameters } from "../model/parameters";
import { isLive, type RunKind, type SubmissionSource } from "../model/runs";
import { getRunner, type RunMetrics } from "../runner/runner";
import { submissionDataFileStatements, submissionDataFilesOf } from "../storage/data-files";
import { getDb, rowsChanged } from "../storage/db";
import { platformCapStatement } from "../storage/platform-queue";
import {
  addRunStatements,
  deleteSubmissionRow,
  getRun,
  insertSubmissionStatements,
  type RunRow,
  type SubmissionRow,
} from "../storage/submissions";
import { type RunDataFile, recordsFor, releaseSubmissionFiles } from "./data-files";
import { type EndedRun, endRun } from "./transitions";

/** 409 for a reexecute or continue while a run of the submission is queued or running. */
export function assertNoLiveRun(submission: SubmissionRow): void {
  if (isLive(submission.status)) throw runInProgress();
}

const runInProgress = () => new ApiError("invalid_state", "A run of this submission is queued or running; wait for it to end.");

export interface CreateInput {
  name: string;
  description?: string;
  /** `new`, or the quick type it was made by (docs/api.md#quick-submission-types). */
  submissionType?: string;
  parameters: GaParameters;
  source?: SubmissionSource;
  /** Website runs may be paid by the plan (docs/api.md#payment); API runs are always paid with credits. */
  paidWithCredits?: boolean;
  /** A start population given at creation (checked against the parameters), stored in R2 for every run but a continue. */
  initialPopulation?: number[][] | null;
  /** What the run's `data_files` stand for (domain/data-files.ts resolveDataFiles): recorded with the submission. */
  dataFiles?: RunDataFile[];
}

/** Where a submission's start population waits in R2 (what its runs' start requests point the GA worker to). */
export const startPopulationKey = (submissionId: string) => `submissions/${submissionId}/initial_population.json`;

/**
 * Stores a submission with its first run, queued (the caller puts the run on the queue: `enqueueRun`);
 * its start population first, in R2, removed again if the rows cannot be written.
 */
export async function createSubmission(
  env: Bindings,
  accountId: string,
  runId: string,
  input: CreateInput,
): Promise<{ id: string; runId: string; createdAt: string }> {
  const db = getDb(env.DB);
  const now = nowIso();
  const id = newId();
  const populationKey = input.initialPopulation ? startPopulationKey(id) : null;
  if (populationKey)
    await env.FILES.put(populationKey, JSON.stringify(input.initialPopulation), { httpMetadata: { contentType: "application/json" } });
  try {
    await insertNewSubmission(db, platformQueueCap(env), { id, accountId, runId, now, input, populationKey });
  } catch (err) {
    if (populationKey) await env.FILES.delete(populationKey);
    throw err;
  }
  return { id, runId, createdAt: now };
}

async function insertNewSubmission(
  db: ReturnType<typeof getDb>,
  queueCap: number,
  r: { id: string; accountId: string; runId: string; now: string; input: CreateInput; populationKey: string | null },
): Promise<void> {
  const { id, accountId, runId, now, input, populationKey } = r;
  await db.batch([
    platformCapStatement(db, queueCap),
    ...insertSubmissionStatements(
      db,
      {
        id,
        accountId,
        name: input.name,
        nameLower: input.name.toLowerCase(),
        description: input.description ?? "",
        submissionType: input.submissionType ?? "new",
        source: input.source ?? "api",
        status: "queued",
        parameters: input.parameters,
        initialPopulationKey: populationKey,
        latestRunId: runId,
        createdAt: now,
        updatedAt: now,
      },
      {
        id: runId,
        submissionId: id,
        accountId,
        kind: "initial",
        status: "queued",
        parameters: input.parameters,
        startPopulationKey: populationKey,
        paidWithCredits: input.paidWithCredits ?? true,
        queuedAt: now,
        enqueuedAt: now,
        createdAt: now,
        updatedAt: now,
      },
    ),
    ...submissionDataFileStatements(db, recordsFor(id, accountId, input.dataFiles ?? [], now)),
  ]);
}

/**
 * Adds a run to a submission whose latest run has ended. The submission's latest run changes only if
 * it is still the one the caller saw and it is not live, so two racing writes cannot both add a run.
 */
export async function addRun(
  env: Bindings,
  submission: SubmissionRow,
  kind: Exclude<RunKind, "initial">,
  parameters: GaParameters,
  parentResultId: string | null,
  runId: string,
  paidWithCredits = true,
  dataFiles: RunDataFile[] = [],
): Promise<{ id: string; runId: string }> {
  const db = getDb(env.DB);
  const now = nowIso();
  const [, moved] = await db.batch([
    platformCapStatement(db, platformQueueCap(env)),
    ...addRunStatements(db, submission, { id: runId, kind, parentResultId, parameters, paidWithCredits }, now),
    ...submissionDataFileStatements(db, recordsFor(submission.id, submission.accountId, dataFiles, now)),
  ]);
  if (rowsChanged(moved) !== 1) {
    throw runInProgress();
  }
  return { id: submission.id, runId };
}

/** Stops a run's worker process if it has one; its usage so far, or null when it had none. */
async function stopWorker(env: Bindings, run: RunRow): Promise<RunMetrics | null> {
  if (run.status !== "running") return null;
  try {
    return await getRunner(env).cancel(run);
  } catch (err) {
    // The worker is unreachable: the run ends anyway; its usage is measured from the clock.
    console.error("stopping the worker failed", run.id, err);
    return null;
  }
}

/**
 * Cancels a live run: its worker stopped first, its usage so far billed. Null when it ended meanwhile.
 * `silent`: no webhook event (a sweep's child cancelled with its sweep).
 */
export async function cancelRun(env: Bindings, run: RunRow, silent = false): Promise<EndedRun | null> {
  const metrics = await stopWorker(env, run);
  return endRun(env, run.id, { status: "cancelled", metrics, error: null, silent });
}

/** Cancels the live run of a submission: worker stopped first, partial usage billed. */
export async function cancelSubmission(env: Bindings, submission: SubmissionRow): Promise<EndedRun> {
  const db = getDb(env.DB);
  const run = await getRun(db, submission.latestRunId);
  if (!run || !isLive(run.status))
    throw new ApiError("invalid_state", `The submission has already ${submission.status}; there is nothing to cancel.`);
  const ended = await cancelRun(env, run);
  if (!ended) throw new ApiError("invalid_state", "The run ended before it could be cancelled.");
  return ended;
}

/**
 * Deletes a submission and its runs; a live run is stopped and billed first. Its results stay. Its
 * records of data files go with it, and the bytes nothing else holds (docs/decisions.md#data-files).
 */
export async function deleteSubmission(env: Bindings, submission: SubmissionRow): Promise<EndedRun | null> {
  const db = getDb(env.DB);
  // Read first: the end of a live run deletes the submission itself (storage/run-end.ts).
  const files = await submissionDataFilesOf(db, submission.id);
  const run = await getRun(db, submission.latestRunId);
  let ended: EndedRun | null = null;
  if (run && isLive(run.status)) {
    ended = await endRun(env, run.id, { status: "deleted", metrics: await stopWorker(env, run) });
  }
  await deleteSubmissionRow(db, submission.id);
  // Its start population served only its runs, which went with it (its results keep their own files).
  if (submission.initialPopulationKey) await env.FILES.delete(submission.initialPopulationKey);
  await releaseSubmissionFiles(env, submission.accountId, files);
  return ended;
}
