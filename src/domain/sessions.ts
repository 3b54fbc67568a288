// Dashboard sessions and one-time sign-in links (docs/dashboard.md#sessions). A session's token lives
// only in the person's cookie; D1 keeps its SHA-256. A session signed in with an API key has that key's
// scopes and ends when the key is revoked or expires; a sign-in link's session has every scope.
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso, randomBase62 } from "../lib/ids";
import { SCOPES, type Scope } from "../model/accounts";
import type { AccountRow } from "../storage/accounts";
import type { Db } from "../storage/db";
import {
  consumeSignInLink,
  extendSession,
  findLiveSession,
  insertSession,
  insertSignInLink,
  revokeSession,
  type SessionRow,
} from "../storage/sessions";

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** …and in any case this long after sign-in. */
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
/** A sign-in link works once, within this time unless the operator asks for another (at most SIGN_IN_LINK_MAX_MS). */
export const SIGN_IN_LINK_TTL_MS = 60 * 60_000;
export const SIGN_IN_LINK_MAX_MS = 7 * 24 * 3_600_000;

export interface Session {
  row: SessionRow;
  account: AccountRow;
  /** When the key it was signed in with expires (null: a sign-in link's session, or a key without expiry). */
  keyExpiresAt: string | null;
}

/** Starts a session; its token (for the cookie, never stored) and its row. */
export async function startSession(
  db: Db,
  opts: { accountId: string; keyId: string | null; scopes: readonly Scope[]; keyExpiresAt?: string | null },
) {
  const token = randomBase62(43);
  const now = Date.now();
  const cap = Math.min(now + SESSION_IDLE_MS, opts.keyExpiresAt ? Date.parse(opts.keyExpiresAt) : Infinity);
  const row = {
    id: newId(),
    tokenHash: await sha256Hex(token),
    accountId: opts.accountId,
    keyId: opts.keyId,
    scopes: [...opts.scopes],
    csrfToken: randomBase62(32),
    createdAt: new Date(now).toISOString(),
    lastSeenAt: new Date(now).toISOString(),
    expiresAt: new Date(cap).toISOString(),
    revokedAt: null,
  };
  await insertSession(db, row);
  return { token, row };
}

/** The live session of a cookie token, its idle expiry slid forward (written at most once a minute). */
export async function resumeSession(db: Db, token: string): Promise<Session | null> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
  const now = Date.now();
  const found = await findLiveSession(db, await sha256Hex(token), new Date(now).toISOString());
  if (!found) return null;
  const { session, account, keyRevokedAt, keyExpiresAt } = found;
  if (session.keyId && (keyRevokedAt || (keyExpiresAt && Date.parse(keyExpiresAt) <= now))) return null;
  if (now - Date.parse(session.lastSeenAt) > 60_000) {
    const cap = Math.min(
      now + SESSION_IDLE_MS,
      Date.parse(session.createdAt) + SESSION_MAX_MS,
      keyExpiresAt ? Date.parse(keyExpiresAt) : Infinity,
    );
    await extendSession(db, session.id, new Date(now).toISOString(), new Date(cap).toISOString());
  }
  return { row: session, account, keyExpiresAt: session.keyId ? (keyExpiresAt ?? null) : null };
}

export const endSession = (db: Db, id: string) => revokeSession(db, id, nowIso());

/** A one-time sign-in link's token for the account (the URL is `<origin>/sign-in/link/<token>`). */
export async function createSignInLink(db: Db, accountId: string, ttlMs = SIGN_IN_LINK_TTL_MS) {
  const token = randomBase62(40);
  const now = Date.now();
  const expiresAt = new Date(now + Math.min(ttlMs, SIGN_IN_LINK_MAX_MS)).toISOString();
  await insertSignInLink(db, {
    id: newId(),
    tokenHash: await sha256Hex(token),
    accountId,
    createdAt: new Date(now).toISOString(),
    expiresAt,
    usedAt: null,
  });
  return { token, expiresAt };
}

/** Uses a sign-in link (once) and starts a session with every scope; null when it is unknown, used or expired. */
export async function signInWithLink(db: Db, token: string) {
  if (!/^[0-9A-Za-z]{40}$/.test(token)) return null;
  const accountId = await consumeSignInLink(db, await sha256Hex(token), nowIso());
  if (!accountId) return null;
  return startSession(db, { accountId, keyId: null, scopes: SCOPES });
}
