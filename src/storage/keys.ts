// API key rows: lookup by prefix, creation, revocation (with the keys made from a key: docs/dashboard.md#account).
import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { type Db, rowsChanged } from "./db";
import { accounts, apiKeys } from "./schema";

export type ApiKeyRow = typeof apiKeys.$inferSelect;

export async function findKeyByPrefix(db: Db, prefix: string): Promise<ApiKeyRow | undefined> {
  return db.select().from(apiKeys).where(eq(apiKeys.prefix, prefix)).get();
}

/** A key with its account, in one query (every authenticated request needs both). */
export async function findKeyWithAccount(db: Db, prefix: string) {
  return db
    .select({ key: apiKeys, account: accounts })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(eq(apiKeys.prefix, prefix))
    .get();
}

/**
 * Inserts a key. A key with a parent (made by a session signed in with that key) is inserted only while
 * its parent is live — not revoked, not expired — in the same statement, so a key made while its parent
 * is being revoked is never left behind; false when it was not inserted.
 */
export async function insertKey(db: Db, row: typeof apiKeys.$inferInsert): Promise<boolean> {
  if (!row.parentKeyId) {
    await db.insert(apiKeys).values(row);
    return true;
  }
  const inserted = await db.run(sql`
    INSERT INTO api_keys (id, account_id, prefix, key_hash, name, scopes, expires_at, created_at, parent_key_id)
    SELECT ${row.id}, ${row.accountId}, ${row.prefix}, ${row.keyHash}, ${row.name}, ${JSON.stringify(row.scopes)},
           ${row.expiresAt ?? null}, ${row.createdAt}, ${row.parentKeyId}
    FROM api_keys
    WHERE id = ${row.parentKeyId} AND account_id = ${row.accountId} AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > ${row.createdAt})`);
  return rowsChanged(inserted) === 1;
}

/** Records use at most once a minute per key, so a busy key does not write on every request. */
export function keyNeedsTouch(row: ApiKeyRow, now: number): boolean {
  return !row.lastUsedAt || Date.parse(row.lastUsedAt) < now - 60_000;
}

export async function touchKey(db: Db, id: string, now: string): Promise<void> {
  const minuteAgo = new Date(Date.parse(now) - 60_000).toISOString();
  await db
    .update(apiKeys)
    .set({ lastUsedAt: now })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, minuteAgo))));
}

/**
 * Revokes a key and, with it, every live key made from it and from those, down the line (one statement:
 * the line is followed by `parent_key_id`, indexed). The prefixes of the keys revoked with it (not the
 * key itself), or null when there is no such key. The check of a key on each request stays one lookup.
 */
export async function revokeKey(db: Db, prefix: string, now: string): Promise<{ dependents: string[] } | null> {
  const row = await findKeyByPrefix(db, prefix);
  if (!row) return null;
  const revoked = await db.all<{ prefix: string }>(sql`
    WITH RECURSIVE line(id) AS (
      SELECT ${row.id}
      UNION
      SELECT k.id FROM api_keys k JOIN line ON k.parent_key_id = line.id
    )
    UPDATE api_keys SET revoked_at = ${now}
    WHERE revoked_at IS NULL AND id IN (SELECT id FROM line)
    RETURNING prefix`);
  return { dependents: revoked.map((r) => r.prefix).filter((p) => p !== prefix) };
}

export async function listKeys(db: Db, accountId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.createdAt).all();
}
