// Who is calling, and the per-minute gate every request passes first (DECISIONS.md §6): a valid bearer
// key counts against its key's and its user's rolling windows; a request without one against its IP's,
// before any 401. Every response carries the X-RateLimit-* headers of the window that applied.
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv, Caller } from "../../env";
import { ApiError } from "../../errors";
import { constantTimeEqual, sha256Hex } from "../../domain/crypto";
import { nowIso } from "../../domain/ids";
import { keyPrefix, type Scope } from "../../domain/keys";
import { rateLimits, type RateDecision } from "../../do/rate-window";
import { getDb, type Db } from "../../storage/db";
import { findKeyWithAccount, keyNeedsTouch, touchKey } from "../../storage/keys";

/** The token of an `Authorization: Bearer <token>` header, or "" when there is none. */
export const bearerToken = (authorization: string | undefined): string => /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";

/** The caller of a request with a valid key, or null (no, malformed, unknown, revoked or expired key). */
export async function authenticate(authorization: string | undefined, db: Db): Promise<Caller | null> {
  const key = bearerToken(authorization);
  const prefix = key ? keyPrefix(key) : null;
  if (!key || !prefix) return null;
  const [found, hash] = await Promise.all([findKeyWithAccount(db, prefix), sha256Hex(key)]);
  if (!found || !constantTimeEqual(hash, found.key.keyHash)) return null;
  const row = found.key;
  if (row.revokedAt) return null;
  if (row.expiresAt && Date.parse(row.expiresAt) <= Date.now()) return null;
  return {
    accountId: row.accountId,
    keyId: row.id,
    keyPrefix: row.prefix,
    scopes: row.scopes,
    account: found.account,
    touch: keyNeedsTouch(row, Date.now()),
  };
}

export const clientIp = (c: Context) => c.req.header("CF-Connecting-IP") ?? "unknown";

function rateHeaders(decision: RateDecision): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(decision.window.limit),
    "X-RateLimit-Remaining": String(decision.window.remaining),
    "X-RateLimit-Reset": String(decision.window.reset),
  };
}

/** Identifies the caller (if any) and applies the per-minute rate limit. */
export const identifyAndLimit = createMiddleware<AppEnv>(async (c, next) => {
  const db = getDb(c.env.DB);
  const caller = await authenticate(c.req.header("Authorization"), db);
  const limits = rateLimits(c.env);
  const decision = caller
    ? await c.env.ACCOUNT_GATE.getByName(caller.accountId).rate(caller.keyPrefix, limits)
    : await c.env.IP_RATE_LIMIT.getByName(clientIp(c)).rate(limits.ip);
  const headers = rateHeaders(decision);
  if (!decision.allowed) {
    throw new ApiError(
      "rate_limited",
      `Too many requests for this ${decision.bucket}; retry after ${decision.retryAfter} s.`,
      { retry_after: decision.retryAfter, bucket: decision.bucket },
      { ...headers, "Retry-After": String(decision.retryAfter) },
    );
  }
  if (caller) {
    c.set("caller", caller);
    if (caller.touch) c.executionCtx.waitUntil(touchKey(db, caller.keyId, nowIso()).catch(() => undefined));
  }
  c.set("rateHeaders", headers);
  try {
    await next();
  } finally {
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  }
});

export const requireKey = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("caller")) {
    throw new ApiError("unauthorized", "A valid API key is required: send `Authorization: Bearer <key>`.", {}, {
      "WWW-Authenticate": 'Bearer realm="allele"',
      ...c.get("rateHeaders"),
    });
  }
  await next();
});

export function requireScope(scope: Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!c.get("caller").scopes.includes(scope)) {
      throw new ApiError("scope_required", `This key lacks the scope ${scope}.`, { required_scope: scope });
    }
    await next();
  });
}
