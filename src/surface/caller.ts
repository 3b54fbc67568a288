// Who is calling, for both adapters: the caller of an API key (the API's every request, the dashboard's
// sign-in with a key), the IP of a caller without one, and the scope a route needs of its caller.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { keyPrefix } from "../domain/keys";
import { ApiError } from "../errors";
import { constantTimeEqual, sha256Hex } from "../lib/crypto";
import type { Scope } from "../model/accounts";
import type { Db } from "../storage/db";
import { findKeyWithAccount, keyNeedsTouch } from "../storage/keys";
import type { Caller, SurfaceEnv } from "./context";

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

/** 403 scope_required unless the caller has `scope` (the API documents it: http/middleware/auth.ts). */
export function requireScope(scope: Scope) {
  return createMiddleware<SurfaceEnv>(async (c, next) => {
    if (!c.get("caller").scopes.includes(scope)) {
      throw new ApiError("scope_required", `This key lacks the scope ${scope}.`, { required_scope: scope });
    }
    await next();
  });
}
