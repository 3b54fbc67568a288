// Dashboard sessions, one-time sign-in links and device authorizations (docs/dashboard.md): rows and
// the conditional updates that make each token usable exactly once.
import { and, eq, gt, isNull, lte, or, sql } from "drizzle-orm";
import type { Scope } from "../model/accounts";
import type { Db } from "./db";
import { accounts, apiKeys, deviceCodes, sessions, signInLinks } from "./schema";

export type SessionRow = typeof sessions.$inferSelect;
export type DeviceCodeRow = typeof deviceCodes.$inferSelect;

export async function insertSession(db: Db, row: typeof sessions.$inferInsert): Promise<void> {
  await db.insert(sessions).values(row);
}

/**
 * The live session with this token hash, its account, and the key it was signed in with (null for a
 * sign-in link): a revoked, expired or key-revoked session is not found.
 */
export async function findLiveSession(db: Db, tokenHash: string, now: string) {
  return db
    .select({ session: sessions, account: accounts, keyRevokedAt: apiKeys.revokedAt, keyExpiresAt: apiKeys.expiresAt })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .leftJoin(apiKeys, eq(apiKeys.id, sessions.keyId))
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .get();
}

/** Slides the session's idle expiry (at most once a minute: the caller checks `lastSeenAt`). */

export async function extendSession(db: Db, id: string, now: string, expiresAt: string): Promise<void> {
  await db
    .update(sessions)
    .set({ lastSeenAt: now, expiresAt })
    .where(and(eq(sessions.id, id), isNull(sessions.revokedAt)));
}

export async function revokeSession(db: Db, id: string, now: string): Promise<void> {
  await db
    .update(sessions)
    .set({ revokedAt: now })
    .where(and(eq(sessions.id, id), isNull(sessions.revokedAt)));
}

export async function insertSignInLink(db: Db, row: typeof signInLinks.$inferInsert): Promise<void> {
  await db.insert(signInLinks).values(row);
}

/** Marks the link used if it is unused and unexpired; its account id, or null (exactly one caller wins). */
export async function consumeSignInLink(db: Db, tokenHash: string, now: string): Promise<string | null> {
  const [row] = await db
    .update(signInLinks)
    .set({ usedAt: now })
    .where(and(eq(signInLinks.tokenHash, tokenHash), isNull(signInLinks.usedAt), gt(signInLinks.expiresAt, now)))
    .returning({ accountId: signInLinks.accountId });
  return row?.accountId ?? null;
}

export async function findSignInLink(db: Db, tokenHash: string) {
  return db.select().from(signInLinks).where(eq(signInLinks.tokenHash, tokenHash)).get();
}

export async function insertDeviceCode(db: Db, row: typeof deviceCodes.$inferInsert): Promise<void> {
  await db.insert(deviceCodes).values(row);
}

export async function findDeviceCode(db: Db, deviceCodeHash: string): Promise<DeviceCodeRow | undefined> {
  return db.select().from(deviceCodes).where(eq(deviceCodes.deviceCodeHash, deviceCodeHash)).get();
}

/** The pending, unexpired authorization with this user code. */
export async function findPendingUserCode(db: Db, userCode: string, now: string): Promise<DeviceCodeRow | undefined> {
  return db
    .select()
    .from(deviceCodes)
    .where(and(eq(deviceCodes.userCode, userCode), eq(deviceCodes.status, "pending"), gt(deviceCodes.expiresAt, now)))
    .get();
}

/**
 * Records a poll (every poll, early or not, is the previous poll of the next one); false means it came
 * sooner than the interval after the previous poll, and the interval is then `slowed` — a fixed value,
 * not one more step per early poll, so a client that adds its own 5 s at each slow_down catches up
 * (docs/dashboard.md#device-login).
 */
export async function recordPoll(db: Db, row: DeviceCodeRow, now: number, slowed: number): Promise<boolean> {
  const stamp = new Date(now).toISOString();
  const earliest = new Date(now - row.intervalSeconds * 1000).toISOString();
  const [polled] = await db
    .update(deviceCodes)
    .set({ lastPolledAt: stamp })
    .where(and(eq(deviceCodes.id, row.id), or(isNull(deviceCodes.lastPolledAt), lte(deviceCodes.lastPolledAt, earliest))))
    .returning({ id: deviceCodes.id });
  if (polled) return true;
  await db
    .update(deviceCodes)
    .set({ intervalSeconds: sql`max(${deviceCodes.intervalSeconds}, ${slowed})`, lastPolledAt: stamp })
    .where(eq(deviceCodes.id, row.id));
  return false;
}

/** A pending authorization approved (with the key's account, name and scopes) or denied; false if it was not pending. */
export async function decideDeviceCode(
  db: Db,
  id: string,
  decision:
    | { status: "approved"; accountId: string; keyName: string; scopes: Scope[]; parentKeyId: string | null }
    | { status: "denied"; accountId: string },
  now: string,
): Promise<boolean> {
  const res = await db
    .update(deviceCodes)
    .set({ ...decision, decidedAt: now })
    .where(and(eq(deviceCodes.id, id), eq(deviceCodes.status, "pending"), gt(deviceCodes.expiresAt, now)))
    .returning({ id: deviceCodes.id });
  return res.length === 1;
}

/** Moves an approved authorization to issued (exactly once) and records the key's prefix. */
export async function markIssued(db: Db, id: string, keyPrefix: string): Promise<boolean> {
  const res = await db
    .update(deviceCodes)
    .set({ status: "issued", keyPrefix })
    .where(and(eq(deviceCodes.id, id), eq(deviceCodes.status, "approved")))
    .returning({ id: deviceCodes.id });
  return res.length === 1;
}
