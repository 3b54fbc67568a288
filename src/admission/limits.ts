// Plan limits, per-user overrides, and the limits that apply to a credit-paid API run (docs/api.md#limits).
import { DATA_FILE_LIMITS, type DataFileLimit, type OverridableLimit, type Overrides, type Plan } from "../model/accounts";

/**
 * Every limit of a plan: the overridable ones (model/accounts.ts OVERRIDABLE_LIMITS; there,
 * `negative_balance_cap` is the currency units below zero that the free + paid balance may reach before
 * credit runs are refused) and the run caps.
 */
export type Limits = Record<OverridableLimit, number> & {
  run_time_seconds: number;
  run_memory_mb: number;
};

const MIB = 1024 * 1024;

export const PLAN_LIMITS: Record<Plan, Limits> = {
  free: {
    concurrent_submissions: 2,
    inflight_api_runs: 5,
    daily_quota: 5,
    max_num_generations: 100,
    max_num_genes: 10,
    max_parallel_workers: 1,
    max_sweep_children: 20,
    negative_balance_cap: 1,
    run_time_seconds: 2 * 60,
    run_memory_mb: 512,
    max_data_file_bytes: 5 * MIB,
    max_data_files_per_submission: 5,
    data_storage_bytes: 50 * MIB,
  },
  trial: {
    concurrent_submissions: 5,
    inflight_api_runs: 5,
    daily_quota: 200,
    max_num_generations: 500,
    max_num_genes: 100,
    max_parallel_workers: 2,
    max_sweep_children: 50,
    negative_balance_cap: 1,
    run_time_seconds: 15 * 60,
    run_memory_mb: 1024,
    max_data_file_bytes: 25 * MIB,
    max_data_files_per_submission: 10,
    data_storage_bytes: 250 * MIB,
  },
  premium: {
    concurrent_submissions: 5,
    inflight_api_runs: 5,
    daily_quota: 200,
    max_num_generations: 10_000,
    max_num_genes: 1000,
    max_parallel_workers: 4,
    max_sweep_children: 200,
    negative_balance_cap: 1,
    run_time_seconds: 60 * 60,
    run_memory_mb: 2048,
    max_data_file_bytes: 100 * MIB,
    max_data_files_per_submission: 20,
    data_storage_bytes: 1024 * MIB,
  },
};

/**
 * How a run is paid (docs/api.md#payment): `credits` — every API run, and a website run whose person
 * chose credits: Premium's limits or the plan's bigger ones, counted as in flight, charged; `plan` — a
 * website run on the account's plan: the plan's own limits, not in flight, no credits.
 */
export type Payment = "credits" | "plan";

/** The limits of a website run paid by the plan: the plan's own, then the account's overrides. */
export function planRunLimits(plan: Plan, overrides: Overrides, negativeBalanceCap: number): Limits {
  const merged: Limits = { ...PLAN_LIMITS[plan], negative_balance_cap: negativeBalanceCap };
  for (const [key, value] of Object.entries(overrides)) {
    if (typeof value === "number") merged[key as keyof Limits] = value;
  }
  return merged;
}

/**
 * The limits in force for an account's credit-paid API runs: the larger of its plan's and Premium's
 * (API runs are paid with credits and run with Premium limits unless the plan's are bigger), then the
 * account's overrides. `negativeBalanceCap` is the deployment's default (NEGATIVE_BALANCE_CAP).
 */
export function apiRunLimits(plan: Plan, overrides: Overrides, negativeBalanceCap: number): Limits {
  const own = PLAN_LIMITS[plan];
  const premium = PLAN_LIMITS.premium;
  const merged: Limits = { ...own };
  // The data file limits are the account's storage, not a run's: its plan's own, however a run is paid.
  for (const key of Object.keys(own) as (keyof Limits)[]) if (!isDataFileLimit(key)) merged[key] = Math.max(own[key], premium[key]);
  merged.negative_balance_cap = negativeBalanceCap;
  for (const [key, value] of Object.entries(overrides)) {
    if (typeof value === "number") merged[key as keyof Limits] = value;
  }
  return merged;
}

const isDataFileLimit = (key: string): key is DataFileLimit => (DATA_FILE_LIMITS as readonly string[]).includes(key);

/** The account's data file limits (docs/api.md#data-files): its plan's, then its overrides. */
export function dataFileLimits(plan: Plan, overrides: Overrides): Record<DataFileLimit, number> {
  const limits = Object.fromEntries(DATA_FILE_LIMITS.map((key) => [key, PLAN_LIMITS[plan][key]])) as Record<DataFileLimit, number>;
  for (const key of DATA_FILE_LIMITS) {
    const value = overrides[key];
    if (typeof value === "number") limits[key] = value;
  }
  return limits;
}

/** Resumes of one run before a lost worker fails it with `worker_lost` (docs/architecture.md#durable-runs-issue-28). */
export const MAX_RESUMES = 5;
/** The checkpoint interval's bounds (seconds of run time): the configured one is kept within them. */
export const CHECKPOINT_SECONDS = { min: 0.1, default: 30, max: 300 } as const;

/** A run's checkpoint plan: every `interval_seconds` (CHECKPOINT_SECONDS, kept within its bounds), each at most its memory cap. */
export function checkpointPlan(limits: Pick<Limits, "run_memory_mb">, seconds: number) {
  const interval = Math.min(CHECKPOINT_SECONDS.max, Math.max(CHECKPOINT_SECONDS.min, seconds));
  return { interval_seconds: interval, max_bytes: limits.run_memory_mb * 1024 * 1024 };
}
