// The writes that start a run — create, reexecute, continue — as one operation each, shared by the
// REST API (http/routes) and the dashboard (dashboard/): the same entry-symbol checks, the same admission
// (every gate, in order) and the same domain calls, whoever presses the button (docs/dashboard.md).

import { withAdmission } from "../admission/admission";
import type { Payment } from "../admission/limits";
import type { DeferredRate } from "../admission/rate-limit";
import { resolveCodeUploads } from "../domain/code-uploads";
import { type RunDataFile, resolveDataFiles } from "../domain/data-files";
import { POPULATION_FILE } from "../domain/result-files";
import { enqueueRun } from "../domain/run-queue";
import { addRun, assertNoLiveRun, createSubmission } from "../domain/submissions";
import type { Bindings } from "../env";
import { ApiError, validationError } from "../errors";
import { checkEntrySymbols } from "../model/entry-symbols";
import { mergeParameters } from "../model/parameter-rules";
import { CODE_FIELDS, type GaParameters } from "../model/parameters";
import { isQuickType, QUICK_FIXED_FIELDS } from "../model/quick-types";
import type { AccountRow } from "../storage/accounts";
import { isForeignKeyFailure, submissionDataFilesOf } from "../storage/data-files";
import { getDb } from "../storage/db";
import { getResultFile, type ResultRow } from "../storage/results";
import { getSubmission, type SubmissionRow } from "../storage/submissions";
import { type CreationBody, creationParameters, refuseUnsupported } from "./submissions";

/** Who starts the run and how: the account (as read at the start of the request), where it comes from and how it is paid. */
export interface Starter {
  account: AccountRow;
  /** The per-minute count an API write leaves to its admission call (null: already counted). */
  deferredRate: DeferredRate | null;
  source: "api" | "web";
  /** API runs are always paid with credits; a website run with credits or by the plan (docs/api.md#payment). */
  payment: Payment;
  /** Where the queue send goes without delaying the answer (the request's `waitUntil`). */
  waitUntil: (p: Promise<unknown>) => void;
}

/** Creates a submission and its first run (queued). */
export async function startSubmission(
  env: Bindings,
  who: Starter,
  validated: CreationBody,
): Promise<{ id: string; runId: string; createdAt: string; generated: Record<string, unknown> }> {
  const accountId = who.account.id;
  const body = await resolveCodeUploads(getDb(env.DB), accountId, validated, CODE_FIELDS);
  refuseUnsupported(body);
  const { name, description } = body;
  const { parameters, initialPopulation } = creationParameters(body);
  checkEntrySymbols(parameters);
  const dataFiles = await resolveDataFiles(env, who.account, parameters.data_files);
  const created = await withAdmission(
    env,
    who.account,
    parameters,
    who.deferredRate,
    (runId) =>
      whileFilesKept(
        createSubmission(env, accountId, runId, {
          name,
          description,
          submissionType: body.quick?.type ?? "new",
          parameters,
          source: who.source,
          paidWithCredits: who.payment === "credits",
          initialPopulation: initialPopulation ?? null,
          dataFiles,
        }),
      ),
    who.payment,
  );
  who.waitUntil(enqueueRun(env, { id: created.runId, accountId, parameters }));
  return { ...created, generated: body.quick?.generated ?? {} };
}

/**
 * A submission's or run's rows written with the records of its data files: when a file's bytes went
 * between their resolution and the write (its listing deleted and its bytes collected meanwhile), the write fails
 * whole on the records' foreign key, and the request is 422 `data_file_not_found`.
 */
export async function whileFilesKept<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (!isForeignKeyFailure(err)) throw err;
    throw new ApiError("data_file_not_found", "A data file this job names was deleted while the request was being made.", {
      field: "data_files",
    });
  }
}

/** Admits and adds a run of `kind` to an idle submission, then puts it on the queue. */
async function admitRun(
  env: Bindings,
  who: Starter,
  submission: SubmissionRow,
  kind: "reexecute" | "continue",
  parameters: GaParameters,
  parentResultId: string | null,
) {
  // The run's data files: those its submission recorded for earlier runs (their listings may be gone), or new ones.
  const recorded = parameters.data_files?.length ? await submissionDataFilesOf(getDb(env.DB), submission.id) : [];
  const dataFiles: RunDataFile[] = await resolveDataFiles(env, who.account, parameters.data_files, recorded);
  const added = await withAdmission(
    env,
    who.account,
    parameters,
    who.deferredRate,
    (runId) => whileFilesKept(addRun(env, submission, kind, parameters, parentResultId, runId, who.payment === "credits", dataFiles)),
    who.payment,
  );
  who.waitUntil(enqueueRun(env, { id: added.runId, accountId: who.account.id, parameters }));
  return { ...added, submission };
}

/** What a start population given at creation fixes: a reexecute cannot change them (they are its shape and types). */
const FIXED_BY_POPULATION = ["sol_per_pop", "num_genes", "gene_type"] as const;

/**
 * 400 for overrides of what a quick submission's type sets (its built-in fitness function, its genes):
 * they cannot be edited (docs/api.md#quick-submission-types).
 */
function refuseQuickEdits(submission: Pick<SubmissionRow, "submissionType">, overrides: Partial<GaParameters>): void {
  if (!isQuickType(submission.submissionType)) return;
  const type = submission.submissionType;
  const edited = QUICK_FIXED_FIELDS.filter((field) => overrides[field] !== undefined);
  if (edited.length)
    throw validationError(
      edited.map((field) => ({ field, message: `is set by the submission's quick type (${type}): it cannot be edited` })),
    );
}

/** Runs a submission again with its creation parameters and `overrides` (from its start population, if it has one). */
export async function reexecuteSubmission(env: Bindings, who: Starter, submission: SubmissionRow, overrides: Partial<GaParameters>) {
  assertNoLiveRun(submission);
  refuseQuickEdits(submission, overrides);
  const fixed = submission.initialPopulationKey ? FIXED_BY_POPULATION.filter((field) => overrides[field] !== undefined) : [];
  if (fixed.length)
    throw validationError(
      fixed.map((field) => ({ field, message: "is fixed by the submission's start population (initial_population): it cannot change" })),
    );
  return admitRun(env, who, submission, "reexecute", mergeParameters(submission.parameters, overrides), null);
}

/** Continues a result from its final population with `overrides` (its submission must exist and be idle). */
export async function continueResult(env: Bindings, who: Starter, result: ResultRow, overrides: Partial<GaParameters>) {
  const db = getDb(env.DB);
  const submission = await getSubmission(db, who.account.id, result.submissionId);
  if (!submission) throw new ApiError("invalid_state", "The submission of this result was deleted; it cannot be continued.");
  assertNoLiveRun(submission);
  refuseQuickEdits(submission, overrides);
  if (!(await getResultFile(db, result.id, POPULATION_FILE))) {
    throw new ApiError("invalid_state", "This result has no stored population to continue from.");
  }
  return admitRun(env, who, submission, "continue", mergeParameters(result.parameters, overrides), result.id);
}
