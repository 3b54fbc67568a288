// Event types, the `data` of each (docs/webhooks.md#events, #event-data, #envelope) and the envelope.
import { isoMicros } from "../lib/ids";
import type { EventData, EventType } from "../model/events";
import type { EndedStatus } from "../model/runs";

/** Facts about a run's end that events are built from (a subset of domain/transitions.ts's EndedRun). */
export interface RunEndFacts {
  submissionId: string;
  status: EndedStatus;
  resultId: string | null;
  bestSolutionFitness: number | null;
  /** With a result: its objectives (1 for a single objective), best objective vector and front size. */
  numObjectives: number | null;
  bestSolutionObjectives: number[] | null;
  paretoFrontSize: number | null;
  generationsCompleted: number | null;
  error: { code: string; message: string } | null;
  executionDurationMs: number;
  cpuSecondsUsed: number;
  peakMemoryMb: number;
  hitMemoryCap: boolean;
  hitTimeCap: boolean;
}

/**
 * A number as a plain decimal string, never in exponent notation: 1.5e-7 → "0.00000015".
 * Null (no fitness) stays null. The digits are JavaScript's shortest round-trip ones.
 */
export function decimalString(n: number | null): string | null {
  return n === null || !Number.isFinite(n) ? null : plainDecimal(n);
}

/** A finite number as a plain decimal string (see decimalString). */
function plainDecimal(n: number): string {
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, lead, frac = "", expText] = m;
  const exp = Number(expText);
  const digits = lead! + frac;
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intLen = 1 + exp;
  return digits.length <= intLen
    ? `${sign}${digits}${"0".repeat(intLen - digits.length)}`
    : `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

/** The fitness fields of a result's events: one objective's fitness, or the objectives of several. */
function fitnessData(f: RunEndFacts) {
  return {
    best_solution_fitness: decimalString(f.bestSolutionFitness),
    num_objectives: f.numObjectives ?? 1,
    // Objective values are finite (the worker's report is checked: docs/runner-protocol.md).
    best_solution_objectives: f.bestSolutionObjectives?.map(plainDecimal) ?? null,
    pareto_front_size: f.paretoFrontSize,
  };
}

export function succeededData(f: RunEndFacts) {
  return {
    submission_id: f.submissionId,
    result_id: f.resultId,
    status: "succeeded" as const,
    execution_duration_ms: Math.round(f.executionDurationMs),
    cpu_seconds_used: f.cpuSecondsUsed,
    peak_memory_mb: Math.round(f.peakMemoryMb),
    hit_memory_cap: f.hitMemoryCap,
    hit_time_cap: f.hitTimeCap,
    ...fitnessData(f),
  };
}

export function resultCompletedData(f: RunEndFacts) {
  return {
    submission_id: f.submissionId,
    result_id: f.resultId,
    ...fitnessData(f),
    generations_completed: f.generationsCompleted ?? 0,
  };
}

export function failedData(f: RunEndFacts) {
  return {
    submission_id: f.submissionId,
    status: "failed" as const,
    error: f.error ?? { code: "internal_error", message: "The run failed." },
    execution_duration_ms: Math.round(f.executionDurationMs),
    cpu_seconds_used: f.cpuSecondsUsed,
    peak_memory_mb: Math.round(f.peakMemoryMb),
    hit_memory_cap: f.hitMemoryCap,
    hit_time_cap: f.hitTimeCap,
  };
}

export function cancelledData(f: RunEndFacts) {
  return {
    submission_id: f.submissionId,
    status: "cancelled" as const,
    execution_duration_ms: Math.round(f.executionDurationMs),
    cpu_seconds_used: f.cpuSecondsUsed,
  };
}

/** The events a run's end fires: succeeded (+ result.completed when a result exists), failed or cancelled. */
export function runEndEvents(f: RunEndFacts): { type: EventType; data: EventData }[] {
  switch (f.status) {
    case "succeeded":
      return [
        { type: "submission.succeeded", data: succeededData(f) },
        ...(f.resultId ? [{ type: "result.completed" as const, data: resultCompletedData(f) }] : []),
      ];
    case "failed":
      return [{ type: "submission.failed", data: failedData(f) }];
    case "cancelled":
      return [{ type: "submission.cancelled", data: cancelledData(f) }];
  }
}

/** What a `run.resumed` event says: the run goes on from its last checkpoint (or from generation 0 without one). */
export interface RunResumedFacts {
  submissionId: string;
  runId: string;
  resumes: number;
  fromGeneration: number | null;
}

/** `data` of a `run.resumed` event. */
export function resumedData(f: RunResumedFacts) {
  return {
    submission_id: f.submissionId,
    run_id: f.runId,
    status: "queued" as const,
    resumes: f.resumes,
    from_generation: f.fromGeneration,
  };
}

/** Facts about a sweep's end (domain/sweep-progress.ts), for its `sweep.completed` event. */
export interface SweepEndFacts {
  sweepId: string;
  name: string;
  status: "completed" | "cancelled";
  /** Its children (those not deleted), and how many ended each way. */
  children: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** The index of the best combination (docs/api.md#sweep-statistics), or null. */
  bestCombination: number | null;
}

export function sweepCompletedData(f: SweepEndFacts) {
  return {
    sweep_id: f.sweepId,
    name: f.name,
    status: f.status,
    children: f.children,
    succeeded: f.succeeded,
    failed: f.failed,
    cancelled: f.cancelled,
    best_combination: f.bestCombination,
  };
}

/** The fixed `occurred_at` of synthetic test events. */
export const TEST_OCCURRED_AT = "2000-01-01T00:00:00.000000+00:00";

const SAMPLE: RunEndFacts = {
  submissionId: "sampleSub001",
  status: "succeeded",
  resultId: "sampleRes001",
  bestSolutionFitness: -0.0123,
  numObjectives: 1,
  bestSolutionObjectives: null,
  paretoFrontSize: null,
  generationsCompleted: 100,
  error: { code: "code_error", message: "fitness_func line 3: ZeroDivisionError: division by zero" },
  executionDurationMs: 1234,
  cpuSecondsUsed: 1.1,
  peakMemoryMb: 64,
  hitMemoryCap: false,
  hitTimeCap: false,
};

/** `data` of a `webhook.test` event: `{test: true, sample_of, ...that type's fields with sample ids}`. */
export function testData(sampleOf: EventType): EventData {
  const fields: Record<EventType, () => EventData> = {
    "submission.succeeded": () => succeededData(SAMPLE),
    "result.completed": () => resultCompletedData(SAMPLE),
    "submission.failed": () => failedData({ ...SAMPLE, status: "failed" }),
    "submission.cancelled": () => cancelledData({ ...SAMPLE, status: "cancelled" }),
    "run.resumed": () => resumedData({ submissionId: SAMPLE.submissionId, runId: "sampleRun001", resumes: 1, fromGeneration: 40 }),
    "sweep.completed": () =>
      sweepCompletedData({
        sweepId: "sampleSwp001",
        name: "sample sweep",
        status: "completed",
        children: 12,
        succeeded: 11,
        failed: 1,
        cancelled: 0,
        bestCombination: 2,
      }),
    "webhook.test": () => ({}),
  };
  return { test: true, sample_of: sampleOf, ...fields[sampleOf]() };
}

/** The exact body bytes of a delivery: the envelope, serialised once and stored. */
export function envelope(eventId: string, type: string, occurredAt: string, data: EventData): string {
  return JSON.stringify({ event_id: eventId, event_type: type, occurred_at: occurredAt, data });
}

export const occurredAt = (iso: string) => isoMicros(new Date(iso));
