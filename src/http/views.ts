// Response shapes of submissions and results (docs/api.md#submissions-runs-results).

import type { Context } from "hono";
import { limitsFor } from "../admission/admission";
import { balancesOf } from "../billing/prices";
import type { Bindings } from "../env";
import { interpretation } from "../model/quick-types";
import type { AccountRow } from "../storage/accounts";
import type { ResultFileRow, ResultRow } from "../storage/results";
import type { RunRow, SubmissionRow } from "../storage/submissions";

/** The origin absolute URLs in responses are built on: the one the caller used. */
export const origin = (c: Context) => new URL(c.req.url).origin;

export function submissionUrls(origin: string, id: string) {
  return {
    status_url: `${origin}/api/v1/submissions/${id}`,
    result_url: `${origin}/api/v1/results/?submission_id=${id}`,
  };
}

/**
 * The 202 of a write that queued a run (create, reexecute, continue): what the Vilvik SDK's `Submission`
 * reads, with the request's id.
 */
export function submissionAccepted(
  origin: string,
  s: Pick<SubmissionRow, "id" | "name" | "description" | "submissionType" | "createdAt">,
  requestId: string,
  /** A quick type's creation: the inputs the server generated (`{}` when none); absent for any other answer. */
  generated?: Record<string, unknown>,
) {
  return {
    id: s.id,
    status: "queued" as const,
    name: s.name,
    description: s.description,
    submission_type: s.submissionType,
    ...(generated ? { generated } : {}),
    created_at: s.createdAt,
    ...submissionUrls(origin, s.id),
    request_id: requestId,
  };
}

export function submissionListItem(s: SubmissionRow) {
  return { id: s.id, name: s.name, status: s.status, source: s.source, created_at: s.createdAt };
}

/** The latest run's output as the submission row shows it: its last 8 KiB (the whole text is the result's logs.txt). */
export const LOGS_SHOWN_BYTES = 8 * 1024;
function runLogs(output: string | null) {
  const text = output ?? "";
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= LOGS_SHOWN_BYTES) return { logs: text, logs_truncated: false };
  // The last 8 KiB, cut at a character boundary (a continuation byte never starts the text).
  let start = bytes.byteLength - LOGS_SHOWN_BYTES;
  while (start < bytes.byteLength && (bytes[start]! & 0xc0) === 0x80) start++;
  return { logs: new TextDecoder().decode(bytes.subarray(start)), logs_truncated: true };
}

/** A run's resumes after lost workers: how many, and when (docs/api.md#durable-runs). */
export const resumesView = (resumes: string[] | null) => ({ count: resumes?.length ?? 0, at: resumes ?? [] });

/**
 * Why a queued run waits (docs/api.md#states): a sweep's child not admitted yet waits for one of its
 * account's concurrency slots; an admitted run for a place on the platform.
 */
export const queuedReason = (run: Pick<RunRow, "status" | "awaitingSlot">) =>
  run.status !== "queued" ? null : run.awaitingSlot ? ("account_slot" as const) : ("platform_place" as const);

export function submissionFull(origin: string, s: SubmissionRow, run: RunRow) {
  return {
    ...submissionListItem(s),
    submission_type: s.submissionType,
    description: s.description,
    sweep_id: s.sweepId,
    queued_reason: queuedReason(run),
    parameters: s.parameters,
    has_initial_population: s.initialPopulationKey !== null,
    queued_at: run.queuedAt,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    execution_duration_ms: run.executionDurationMs,
    generations_completed: run.generationsCompleted,
    best_solution_fitness: run.bestSolutionFitness,
    run_count: s.runCount,
    latest_run: {
      id: run.id,
      kind: run.kind,
      status: run.status,
      parent_result_id: run.parentResultId,
      resumes: resumesView(run.resumes),
      checkpoint: run.checkpointGeneration !== null ? { generation: run.checkpointGeneration, at: run.checkpointAt } : null,
    },
    error: run.errorCode ? { code: run.errorCode, message: run.errorMessage ?? "" } : null,
    cpu_seconds_used: run.cpuSecondsUsed,
    peak_memory_mb: run.peakMemoryMb,
    hit_time_cap: run.hitTimeCap,
    hit_memory_cap: run.hitMemoryCap,
    credits_charged: s.creditsChargedMicro / 1_000_000,
    ...runLogs(run.output),
    warnings: run.warnings ?? [],
    ...submissionUrls(origin, s.id),
    updated_at: s.updatedAt,
  };
}

/**
 * A result's best fitness as PyGAD's best_solution() gives it: a number for one objective, the best
 * solution's objective values for several (the row keeps NULL there, so the fitness orderings and
 * filters treat it as the lowest: docs/api.md#multi-objective).
 */
export const bestFitness = (r: Pick<ResultRow, "numObjectives" | "bestSolutionFitness" | "bestSolutionObjectives">) =>
  r.numObjectives > 1 && r.bestSolutionObjectives ? r.bestSolutionObjectives : r.bestSolutionFitness;

export function resultListItem(r: ResultRow) {
  return {
    id: r.id,
    submission_id: r.submissionId,
    name: r.name,
    is_shared: r.isShared,
    best_solution_fitness: bestFitness(r),
    num_objectives: r.numObjectives,
    generations_completed: r.generationsCompleted,
    created_at: r.createdAt,
  };
}

export const fileUrl = (origin: string, resultId: string, name: string) => `${origin}/api/v1/results/${resultId}/files/${name}`;

export function resultFull(origin: string, r: ResultRow, files: ResultFileRow[]) {
  return {
    ...resultListItem(r),
    run_id: r.runId,
    best_solution: r.bestSolution,
    best_solution_objectives: r.bestSolutionObjectives,
    pareto_front_size: r.paretoFrontSize,
    best_solution_generation: r.bestSolutionGeneration,
    best_solutions_fitness: r.bestSolutionsFitness,
    objective_maxima: r.objectiveMaxima,
    population_history: r.populationHistory ?? null,
    stopped_reason: r.stoppedReason,
    constraint_violations: r.constraintViolations,
    resumes: resumesView(r.resumes),
    warnings: r.warnings,
    engine: r.engine,
    parameters: r.parameters,
    interpretation: interpretation(r.parameters, r.bestSolution, r.numObjectives > 1 ? null : r.bestSolutionFitness),
    files: files.map((f) => ({
      name: f.name,
      content_type: f.contentType,
      size_bytes: f.sizeBytes,
      url: fileUrl(origin, r.id, f.name),
    })),
    updated_at: r.updatedAt,
  };
}

/** An account: plan, overrides, balances (currency units) and the limits in force for its API runs. */
export function accountView(env: Bindings, a: AccountRow) {
  return {
    id: a.id,
    email: a.email,
    plan: a.plan,
    overrides: a.overrides,
    balances: balancesOf(a),
    limits: limitsFor(env, a),
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}
