// The gates a write (create, reexecute, continue) passes after the per-minute limit, in the order of
// docs/api.md#gates: concurrent submissions, in-flight API runs, daily quota, parameter caps, credits,
// platform queue. The first that fails answers; a rejected write takes nothing (docs/api.md#limits).

import { toMicro } from "../billing/prices";
import { config } from "../config";
import { accountGate } from "../do/account-gate/client";
import type { Admission, GateError } from "../do/account-gate/object";
import type { Bindings } from "../env";
import { ApiError, type ErrorCode } from "../errors";
import { newId } from "../lib/ids";
import { type GaParameters, parallelWorkers } from "../model/parameters";
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

/** 403 tier_limit_exceeded when num_generations, num_genes or the parallel workers are over the caps in force. */
export function parameterCapFailure(limits: Limits, params: GaParameters): GateError | null {
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

/**
 * Admits one new run of `accountId` (counting the write's per-minute window first when it is
 * `deferred` to this call) and calls `create(runId)`; if the run cannot be created after all, every
 * place the admission took is given back. A run paid by the plan (a website run, docs/api.md#payment)
 * passes the plan's limits, takes no in-flight place and skips the credit gate.
 */
/** The error codes `withAdmission` answers besides the per-minute limit (docs/api.md#gates). */
export const ADMISSION_ERRORS = [
  "capacity_exceeded",
  "too_many_active_api_requests",
  "tier_limit_exceeded",
  "insufficient_credits",
] as const satisfies ErrorCode[];

/**
 * A refusal whose end is known — the daily quota's next unit — says when to retry, as `rate_limited`
 * does (`Retry-After`, whole seconds; the Vilvik SDK reads it into `RateLimitError.retry_after`).
 */
function retryAfterHeader(details: Record<string, unknown>): Record<string, string> {
  if (typeof details.next_unit_at !== "string") return {};
  return { "Retry-After": String(Math.max(1, Math.ceil((Date.parse(details.next_unit_at) - Date.now()) / 1000))) };
}

export async function withAdmission<T>(
  env: Bindings,
  account: AccountRow,
  params: GaParameters,
  deferred: DeferredRate | null,
  create: (runId: string) => Promise<T>,
  payment: Payment = "credits",
): Promise<T> {
  const accountId = account.id;
  const limits = limitsFor(env, account, payment);
  const credits = payment === "credits";
  const runId = newId();
  const gate = accountGate(env, accountId);
  const { rate, refusal }: Admission = await gate.admit({
    runId,
    concurrentLimit: limits.concurrent_submissions,
    inflightLimit: limits.inflight_api_runs,
    inFlight: credits,
    dailyQuota: limits.daily_quota,
    laterFailure: parameterCapFailure(limits, params) ?? (credits ? creditFailure(limits, account) : null),
    rate: deferred && { keyPrefix: deferred.keyPrefix, limits: deferred.limits },
  });
  if (deferred && rate) deferred.decision = rate;
  if (rate && !rate.allowed) throw rateLimitedError(rate);
  if (refusal) throw new ApiError(refusal.code, refusal.message, refusal.details, retryAfterHeader(refusal.details));

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
