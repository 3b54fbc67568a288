// API key rows: lookup by prefix, creation, revocation.
import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Db } from "./db";
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

export async function insertKey(db: Db, row: typeof apiKeys.$inferInsert): Promise<void> {
  await db.insert(apiKeys).values(row);
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

export async function revokeKey(db: Db, prefix: string, now: string): Promise<boolean> {
  const row = await findKeyByPrefix(db, prefix);
  if (!row) return false;
  if (!row.revokedAt) await db.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, row.id));
  return true;
}

export async function listKeys(db: Db, accountId: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.accountId, accountId)).orderBy(apiKeys.createdAt).all();
}
