// API keys: `alk_` + 8 base62 (the public prefix) + `_` + 40 base62 of secret (docs/api.md#identifiers).
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso, randomBase62 } from "../lib/ids";
import type { Scope } from "../model/accounts";
import type { Db } from "../storage/db";
import { insertKey } from "../storage/keys";

const KEY_PATTERN = /^(alk_[0-9A-Za-z]{8})_[0-9A-Za-z]{40}$/;

export function generateKey(): { key: string; prefix: string } {
  const prefix = `alk_${randomBase62(8)}`;
  return { key: `${prefix}_${randomBase62(40)}`, prefix };
}

/** The key's public prefix, or null when the string is not a well-formed key. */
export function keyPrefix(key: string): string | null {
  return KEY_PATTERN.exec(key)?.[1] ?? null;
}

/** What a new key is: its account, name, scopes and expiry, and the key it is made from (if any). */
export interface NewKey {
  accountId: string;
  name: string;
  scopes: Scope[];
  expiresAt: string | null;
  /**
   * The key the dashboard session that makes it was signed in with (the account page, a device login it
   * approved): revoking that key revokes this one (docs/dashboard.md#account). Null for an operator's key
   * and for a key made by a session of a sign-in link.
   */
  parentKeyId: string | null;
}

/**
 * Issues a new key of the account (the secret is returned once; only its SHA-256 is stored), or null
 * when its parent is no longer live (revoked or expired meanwhile). `generated` is the key when the
 * caller needed its prefix first (a device login records it before the insert).
 */
export async function issueKey(db: Db, request: NewKey, generated = generateKey()) {
  const { key, prefix } = generated;
  const { accountId, name, scopes, expiresAt, parentKeyId } = request;
  const row = { id: newId(), accountId, prefix, keyHash: await sha256Hex(key), name, scopes, expiresAt, createdAt: nowIso(), parentKeyId };
  if (!(await insertKey(db, row))) return null;
  return { key, prefix, name, scopes, expires_at: expiresAt };
}
