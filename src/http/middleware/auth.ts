// Who is calling, and the per-minute gate every request passes first (docs/api.md#limits): a valid bearer
// key counts against its key's and its user's rolling windows; a request without one against its IP's,
// before any 401. Every response carries the X-RateLimit-* headers of the window that applied.

import { createMiddleware } from "hono/factory";
import { type DeferredRate, rateHeaders, rateLimitedError } from "../../admission/rate-limit";
import { accountGate } from "../../do/account-gate/client";
import { ipWindow } from "../../do/ip-rate-limit/client";
import { type RateDecision, rateLimits } from "../../do/rate-window";
import { ApiError } from "../../errors";
import { nowIso } from "../../lib/ids";
import type { Scope } from "../../model/accounts";
import { getDb } from "../../storage/db";
import { touchKey } from "../../storage/keys";
import { authenticate, requireScope as checkScope, clientIp } from "../../surface/caller";
import type { AppEnv, RateCount } from "../context";
import { onError } from "../error-handler";
import { documented } from "../openapi/describe";

/**
 * How a route's per-minute count is taken, declared per route where the app is composed (app.ts):
 * `admission` — a write that passes the admission gates (create, reexecute, continue): its count rides
 * on the admission call (`withAdmission`), or is taken after its response when it was refused before;
 * `usage` — GET /account: the count returns the account's usage in the same Durable Object call.
 * Any other route is counted up front.
 */
export const countedBy = (how: RateCount) =>
  createMiddleware<AppEnv>(async (c, next) => {
    c.set("rateCount", how);
    await next();
  });

/**
 * Identifies the caller (if any) and applies the per-minute rate limit. A route declared
 * `countedBy("admission")` is counted by its admission call instead (admission/rate-limit.ts), or right
 * after its response when it was refused before getting there; over the limit, that response becomes the
 * 429. A route declared `countedBy("usage")` gets the account's usage from the same call as its count.
 */
export const identifyAndLimit = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const db = getDb(c.env.DB);
    const caller = await authenticate(c.req.header("Authorization"), db);
    const limits = rateLimits(c.env);
    // The route's declaration (countedBy, app.ts) decides which call counts a keyed request.
    const how = caller ? c.get("rateCount") : undefined;
    const deferred: DeferredRate | null = caller && how === "admission" ? { keyPrefix: caller.keyPrefix, limits, decision: null } : null;
    let decision: RateDecision | null = null;
    if (!deferred) {
      if (!caller) {
        decision = await ipWindow(c.env, clientIp(c)).rate(limits.ip);
      } else if (how === "usage") {
        // The count and the usage after it in one call (a refused request gets no usage).
        const counted = await accountGate(c.env, caller.accountId).rateWithUsage(caller.keyPrefix, limits);
        decision = counted.rate;
        if (counted.usage) c.set("usage", counted.usage);
      } else {
        decision = await accountGate(c.env, caller.accountId).rate(caller.keyPrefix, limits);
      }
      if (!decision.allowed) throw rateLimitedError(decision);
      c.set("rateHeaders", rateHeaders(decision));
    }
    if (caller) {
      c.set("caller", caller);
      if (caller.touch) c.executionCtx.waitUntil(touchKey(db, caller.keyId, nowIso()).catch(() => undefined));
    }
    if (deferred) c.set("deferredRate", deferred);
    try {
      await next();
    } finally {
      if (deferred) {
        if (!deferred.decision) {
          // Refused before its admission call: counted now, and over the limit the 429 answers instead.
          deferred.decision = await accountGate(c.env, caller!.accountId).rate(deferred.keyPrefix, limits);
          if (!deferred.decision.allowed) c.res = await onError(rateLimitedError(deferred.decision), c);
        }
        decision = deferred.decision;
      }
      for (const [name, value] of Object.entries(rateHeaders(decision!))) c.res.headers.set(name, value);
    }
  }),
  { "x-allele-rate-limited": true },
);

export const requireKey = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    if (!c.get("caller")) {
      throw new ApiError(
        "unauthorized",
        "A valid API key is required: send `Authorization: Bearer <key>`.",
        {},
        {
          "WWW-Authenticate": 'Bearer realm="allele"',
          ...c.get("rateHeaders"),
        },
      );
    }
    await next();
  }),
  { "x-allele-auth": "key", "x-allele-errors": ["unauthorized"] },
);

/** The scope check both adapters use (surface/caller.ts), telling the OpenAPI document its scope and 403. */
export const requireScope = (scope: Scope) =>
  documented(checkScope(scope), { "x-allele-scope": scope, "x-allele-errors": ["scope_required"] });
