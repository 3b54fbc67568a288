// The gates every write passes before it creates a run (interface.md "Gates", DECISIONS.md §6).
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { toMicro } from "../billing/prices";
import { getAccount, type AccountRow } from "../storage/accounts";
import { getDb } from "../storage/db";
import { apiRunLimits, type Limits } from "./limits";

export function limitsFor(env: Bindings, account: AccountRow): Limits {
  return apiRunLimits(account.plan, account.overrides, Number(env.NEGATIVE_BALANCE_CAP ?? "1"));
}

/** 403 tier_limit_exceeded when num_generations or num_genes is over the caps in force. */
export function checkParameterCaps(limits: Limits, params: { num_generations: number; num_genes: number }): void {
  const caps = [
    ["num_generations", params.num_generations, limits.max_num_generations],
    ["num_genes", params.num_genes, limits.max_num_genes],
  ] as const;
  for (const [parameter, requested, limit] of caps) {
    if (requested > limit) {
      throw new ApiError("tier_limit_exceeded", `${parameter} ${requested} is over your limit of ${limit}; reduce it or ask for a higher cap.`, {
        parameter,
        limit,
        requested,
      });
    }
  }
}

/** 402 insufficient_credits when free + paid balance is below the negative-balance cap. */
export function checkCredits(limits: Limits, account: AccountRow): void {
  const balance = account.freeCreditsMicro + account.paidCreditsMicro;
  if (balance < -toMicro(limits.negative_balance_cap)) {
    throw new ApiError("insufficient_credits", "Your credit balance is below the allowed negative balance; top up credits to start new runs.", {
      balance: balance / 1_000_000,
      negative_balance_cap: limits.negative_balance_cap,
    });
  }
}

/** Runs the gates in order for a write by `accountId` with GA parameters `params`. */
export async function admitWrite(env: Bindings, accountId: string, params: { num_generations: number; num_genes: number }): Promise<void> {
  const account = await getAccount(getDb(env.DB), accountId);
  if (!account) throw new ApiError("unauthorized", "The account of this key no longer exists.");
  const limits = limitsFor(env, account);
  checkParameterCaps(limits, params);
  checkCredits(limits, account);
}
