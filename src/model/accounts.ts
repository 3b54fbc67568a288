// The words of accounts, each stated once: the plans, the limits an operator may override, and the
// scopes of an API key with the one rule for a list of them (docs/api.md#limits, #admin-api, #identifiers).
import { z } from "zod";

export const PLANS = ["free", "trial", "premium"] as const;
export type Plan = (typeof PLANS)[number];

/**
 * The limits an operator may override per account (docs/api.md#admin-api), from which the stored
 * `overrides` type, the admin PATCH body and the limits in force derive. `money` is a currency amount
 * (may be fractional); `count` a whole number.
 */
export const OVERRIDABLE_LIMITS = {
  concurrent_submissions: "count",
  inflight_api_runs: "count",
  daily_quota: "count",
  max_num_generations: "count",
  max_num_genes: "count",
  max_parallel_workers: "count",
  max_sweep_children: "count",
  negative_balance_cap: "money",
} as const;
export type OverridableLimit = keyof typeof OVERRIDABLE_LIMITS;
export type Overrides = Partial<Record<OverridableLimit, number>>;

export const SCOPES = [
  "submissions:read",
  "submissions:write",
  "results:read",
  "results:write",
  "webhooks:read",
  "webhooks:write",
] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (text: string): text is Scope => (SCOPES as readonly string[]).includes(text);
/** Whether `scopes` hold every scope (a sign-in link's session, or a key with all of them). */
export const hasEveryScope = (scopes: readonly string[]) => SCOPES.every((s) => scopes.includes(s));

/**
 * A key's scopes as every input takes them — the admin API's key, the account page's key, a device
 * login's approval: at least one, each a scope, none repeated (a repeat is refused, not merged:
 * docs/decisions.md#scope-lists).
 */
export const scopeList = z
  .array(z.enum(SCOPES, `must be one of: ${SCOPES.join(", ")}`))
  .min(1, "choose at least one scope")
  .refine((s) => new Set(s).size === s.length, "must not repeat a scope");
