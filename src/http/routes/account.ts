// GET /api/v1/account (any valid key): plan, balances, limits in force and current usage — what a
// user needs to see why a request was refused.
import { Hono } from "hono";
import type { z } from "zod";
import { rateLimits } from "../../do/rate-window";
import { dataStorageUsed } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import type { AppEnv } from "../context";
import { describe } from "../openapi/describe";
import { Account } from "../validation/responses";
import { accountView } from "../views";

export const accountRoutes = new Hono<AppEnv>().get(
  "/",
  describe({
    operationId: "getAccount",
    tag: "Account",
    summary: "Your plan, balances, the limits in force and your usage now (any valid key)",
    success: { 200: Account },
  }),
  async (c) => {
    const caller = c.get("caller");
    const limits = rateLimits(c.env);
    // Taken by the rate middleware in the call that counted this request (countedBy("usage"), app.ts): one Durable Object call.
    const usage = c.get("usage");
    const { id, email, plan, overrides, balances, limits: inForce } = accountView(c.env, caller.account);
    return c.json({
      id,
      email,
      plan,
      overrides,
      balances,
      limits: { ...inForce, rate_limit_per_key: limits.key, rate_limit_per_user: limits.user },
      usage: { ...usage, data_storage_bytes: await dataStorageUsed(getDb(c.env.DB), id) },
      key: { prefix: caller.keyPrefix, scopes: caller.scopes },
    } satisfies z.input<typeof Account>);
  },
);
