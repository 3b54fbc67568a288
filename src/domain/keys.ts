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

/**
 * Issues a new key of the account (the secret is returned once; only its SHA-256 is stored). `generated`
 * is the key when the caller needed its prefix first (a device login records it before the insert).
 */
export async function issueKey(
  db: Db,
  accountId: string,
  name: string,
  scopes: Scope[],
  expiresAt: string | null,
  generated = generateKey(),
) {
  const { key, prefix } = generated;
  await insertKey(db, { id: newId(), accountId, prefix, keyHash: await sha256Hex(key), name, scopes, expiresAt, createdAt: nowIso() });
  return { key, prefix, name, scopes, expires_at: expiresAt };
}
