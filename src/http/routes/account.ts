// GET /api/v1/account (any valid key): plan, balances, limits in force and current usage — what a
// user needs to see why a request was refused.
import { Hono } from "hono";
import type { AppEnv } from "../../env";
import { notFound } from "../../errors";
import type { Usage } from "../../do/account-gate";
import { rateLimits } from "../../do/rate-window";
import { accountGate } from "../../gates/admission";
import { getAccount } from "../../storage/accounts";
import { getDb } from "../../storage/db";
import { accountView } from "../views";

export const accountRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const caller = c.get("caller");
  const account = await getAccount(getDb(c.env.DB), caller.accountId);
  if (!account) throw notFound("account");
  const limits = rateLimits(c.env);
  const usage = (await accountGate(c.env, caller.accountId).usage(caller.keyPrefix, limits)) as Usage;
  const { id, email, plan, overrides, balances, limits: inForce } = accountView(c.env, account);
  return c.json({
    id,
    email,
    plan,
    overrides,
    balances,
    limits: { ...inForce, rate_limit_per_key: limits.key, rate_limit_per_user: limits.user },
    usage,
    key: { prefix: caller.keyPrefix, scopes: caller.scopes },
  });
});
