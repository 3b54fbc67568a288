// The gates a write (create, reexecute, continue) passes after the per-minute limit, in the order of
// docs/api.md#gates: concurrent submissions, in-flight API runs, daily quota, parameter caps, credits,
// platform queue. The first that fails answers; a rejected write takes nothing (docs/api.md#limits).

import { toMicro } from "../billing/prices";
import { config } from "../config";
import { accountGate } from "../do/account-gate/client";
import type { Admission, AdmitRequest, GateError } from "../do/account-gate/object";
import type { Bindings } from "../env";
import { ApiError, type ErrorCode } from "../errors";
import { newId } from "../lib/ids";
import { type GaParameters, parallelWorkers } from "../model/parameters";
import { quickMinMemoryMb, quickOf } from "../model/quick-types";
import type { AccountRow } from "../storage/accounts";
import { isPlatformAtCapacity } from "../storage/platform-queue";
import { apiRunLimits, type Limits, type Payment, planRunLimits } from "./limits";
import { type DeferredRate, rateLimitedError } from "./rate-limit";

/** The limits in force for the account's runs paid by `payment` (API runs: always credits). */
export function limitsFor(env: Bindings, account: AccountRow, payment: Payment = "credits"): Limits {
  return (payment === "plan" ? planRunLimits : apiRunLimits)(account.plan, account.overrides, config(env).negativeBalanceCap);
}

/** PLATFORM_QUEUE_CAP: queued runs on the whole platform before writes are refused. */
export const platformQueueCap = (env: Bindings) => config(env).platformQueueCap;

/**
 * 403 tier_limit_exceeded when num_generations, num_genes or the parallel workers are over the caps in
 * force, or when a quick type's code needs a larger run memory cap than the one in force (the XOR
 * network's TensorFlow: refused here rather than failing at its import).
 */
export function parameterCapFailure(limits: Limits, params: GaParameters): GateError | null {
  const memory = quickMinMemoryMb(params);
  if (memory !== null && limits.run_memory_mb < memory) {
    const type = quickOf(params)?.type;
    return {
      code: "tier_limit_exceeded",
      message: `${type} needs a run memory cap of at least ${memory} MB (TensorFlow); yours is ${limits.run_memory_mb} MB for runs paid this way: run it through the API paid with credits, or on a larger plan.`,
      details: { parameter: "run_memory_mb", limit: limits.run_memory_mb, requested: memory },
    };
  }
  const caps = [
    ["num_generations", params.num_generations, limits.max_num_generations],
    ["num_genes", params.num_genes, limits.max_num_genes],
    ["parallel_processing", parallelWorkers(params), limits.max_parallel_workers],
  ] as const;
  for (const [parameter, requested, limit] of caps) {
    if (requested > limit) {
      return {
        code: "tier_limit_exceeded",
        message: `${parameter} ${requested} is over your limit of ${limit}; reduce it or ask for a higher cap.`,
        details: { parameter, limit, requested },
      };
    }
  }
  return null;
}

/** 402 insufficient_credits when free + paid balance is below the negative-balance cap. */
export function creditFailure(limits: Limits, account: AccountRow): GateError | null {
  const balance = account.freeCreditsMicro + account.paidCreditsMicro;
  if (balance >= -toMicro(limits.negative_balance_cap)) return null;
  return {
    code: "insufficient_credits",
    message: "Your credit balance is below the allowed negative balance; top up credits to start new runs.",
    details: { balance: balance / 1_000_000, negative_balance_cap: limits.negative_balance_cap },
  };
}

/** The error codes `withAdmission` answers besides the per-minute limit (docs/api.md#gates). */
export const ADMISSION_ERRORS = [
  "capacity_exceeded",
  "too_many_active_api_requests",
  "tier_limit_exceeded",
  "insufficient_credits",
] as const satisfies ErrorCode[];
/** The error codes of a creation (a submission, a sweep): its code's checks, then the admission's. */
export const CREATION_ERRORS = [
  "entry_symbol_required",
  "entry_symbol_not_found",
  "unsupported_submission_type",
  "unsupported_field",
  "code_upload_not_found",
  "code_upload_expired",
  ...ADMISSION_ERRORS,
] as const satisfies ErrorCode[];

/**
 * A refusal whose end is known — the daily quota's next unit — says when to retry, as `rate_limited`
 * does (`Retry-After`, whole seconds; the Vilvik SDK reads it into `RateLimitError.retry_after`).
 */
function retryAfterHeader(details: Record<string, unknown>): Record<string, string> {
  if (typeof details.next_unit_at !== "string") return {};
  return { "Retry-After": String(Math.max(1, Math.ceil((Date.parse(details.next_unit_at) - Date.now()) / 1000))) };
}

/**
 * What the account's gate is asked to admit one run of `params` paid by `payment` with: the limits in
 * force and the gates it checks after the quota (parameter caps, then credits for a credit run). The same
 * for a write and for a sweep's child (`admitChild`), so a child passes the gates a submission passes.
 */
export function admissionRequest(
  env: Bindings,
  account: AccountRow,
  params: GaParameters,
  runId: string,
  payment: Payment,
): Omit<AdmitRequest, "rate"> {
  const limits = limitsFor(env, account, payment);
  const credits = payment === "credits";
  return {
    runId,
    concurrentLimit: limits.concurrent_submissions,
    inflightLimit: limits.inflight_api_runs,
    inFlight: credits,
    dailyQuota: limits.daily_quota,
    laterFailure: parameterCapFailure(limits, params) ?? (credits ? creditFailure(limits, account) : null),
  };
}

/** A refusal of the account's gate as the API's error (a known end says when: `Retry-After`). */
export const refusalError = (refusal: GateError) =>
  new ApiError(refusal.code, refusal.message, refusal.details, retryAfterHeader(refusal.details));

/**
 * Admits one new run of `accountId` (counting the write's per-minute window first when it is
 * `deferred` to this call) and calls `create(runId)`; if the run cannot be created after all, every
 * place the admission took is given back. A run paid by the plan (a website run, docs/api.md#payment)
 * passes the plan's limits, takes no in-flight place and skips the credit gate.
 */
export async function withAdmission<T>(
  env: Bindings,
  account: AccountRow,
  params: GaParameters,
  deferred: DeferredRate | null,
  create: (runId: string) => Promise<T>,
  payment: Payment = "credits",
): Promise<T> {
  const runId = newId();
  const gate = accountGate(env, account.id);
  const { rate, refusal }: Admission = await gate.admit({
    ...admissionRequest(env, account, params, runId, payment),
    rate: deferred && { keyPrefix: deferred.keyPrefix, limits: deferred.limits },
  });
  if (deferred && rate) deferred.decision = rate;
  if (rate && !rate.allowed) throw rateLimitedError(rate);
  if (refusal) throw refusalError(refusal);

  try {
    // The last gate, the platform queue, is the insert itself: its trigger refuses a run past the cap.
    return await create(runId);
  } catch (err) {
    await gate.cancel(runId);
    if (isPlatformAtCapacity(err)) {
      throw new ApiError("capacity_exceeded", "The platform's queue is full; try again in a few minutes.", {
        reason: "platform_at_capacity",
      });
    }
    throw err;
  }
}

/**
 * The gates of a sweep's creation (docs/api.md#sweep-gates), after its children cap: its per-minute count
 * (one request), the daily quota for every child at once, the parameter caps of every combination, the
 * credit gate (a credit sweep) — then a quota unit per child is taken and `create` runs; if it fails, the
 * units go back. The children's slots are taken one by one as they are admitted (`admitChild`).
 */
export async function withSweepAdmission<T>(
  env: Bindings,
  account: AccountRow,
  combinations: GaParameters[],
  runIds: string[],
  deferred: DeferredRate | null,
  create: () => Promise<T>,
  payment: Payment,
): Promise<T> {
  const limits = limitsFor(env, account, payment);
  let laterFailure: GateError | null = null;
  for (const params of combinations) {
    laterFailure = parameterCapFailure(limits, params);
    if (laterFailure) break;
  }
  laterFailure ??= payment === "credits" ? creditFailure(limits, account) : null;
  const gate = accountGate(env, account.id);
  const { rate, refusal }: Admission = await gate.admitSweep({
    runIds,
    dailyQuota: limits.daily_quota,
    laterFailure,
    rate: deferred && { keyPrefix: deferred.keyPrefix, limits: deferred.limits },
  });
  if (deferred && rate) deferred.decision = rate;
  if (rate && !rate.allowed) throw rateLimitedError(rate);
  if (refusal) throw refusalError(refusal);
  try {
    return await create();
  } catch (err) {
    await gate.cancelMany(runIds);
    throw err;
  }
}

/**
 * Admits a sweep's child waiting for a slot: the same call and gates as a write's admission (concurrent
 * submissions, in-flight API runs, parameter caps, credits, with the limits in force now), without a
 * per-minute count or a quota unit (its sweep took them). Idempotent for one run id. Null: admitted.
 */
export async function admitChild(
  env: Bindings,
  account: AccountRow,
  params: GaParameters,
  runId: string,
  payment: Payment,
): Promise<GateError | null> {
  const { refusal } = await accountGate(env, account.id).admit({ ...admissionRequest(env, account, params, runId, payment), child: true });
  return refusal;
}
