// Bearer API keys: found by prefix, compared by SHA-256 hash in constant time; scopes per route.
import { createMiddleware } from "hono/factory";
import type { AppEnv, Caller } from "../../env";
import { ApiError } from "../../errors";
import { constantTimeEqual, sha256Hex } from "../../domain/crypto";
import { nowIso } from "../../domain/ids";
import { keyPrefix, type Scope } from "../../domain/keys";
import { getDb } from "../../storage/db";
import { findKeyByPrefix, touchKey } from "../../storage/keys";

const unauthorized = (message: string) =>
  new ApiError("unauthorized", message, {}, { "WWW-Authenticate": 'Bearer realm="allele"' });

/** The caller of a request with a valid key, or null (no, malformed, unknown, revoked or expired key). */
export async function authenticate(authorization: string | undefined, db: ReturnType<typeof getDb>): Promise<Caller | null> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  const key = match?.[1];
  const prefix = key ? keyPrefix(key) : null;
  if (!key || !prefix) return null;
  const row = await findKeyByPrefix(db, prefix);
  const hash = await sha256Hex(key);
  if (!row || !constantTimeEqual(hash, row.keyHash)) return null;
  if (row.revokedAt) return null;
  if (row.expiresAt && Date.parse(row.expiresAt) <= Date.now()) return null;
  return { accountId: row.accountId, keyId: row.id, keyPrefix: row.prefix, scopes: row.scopes };
}

export const requireKey = createMiddleware<AppEnv>(async (c, next) => {
  const db = getDb(c.env.DB);
  const caller = await authenticate(c.req.header("Authorization"), db);
  if (!caller) throw unauthorized("A valid API key is required: send `Authorization: Bearer <key>`.");
  c.set("caller", caller);
  c.executionCtx.waitUntil(touchKey(db, caller.keyId, nowIso()).catch(() => undefined));
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
