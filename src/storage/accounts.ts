// Account rows and credit grants.
import { eq, sql } from "drizzle-orm";
import type { Overrides, Plan } from "../model/accounts";
import type { Db } from "./db";
import { accounts, creditLedger } from "./schema";

export type AccountRow = typeof accounts.$inferSelect;

export async function getAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.select().from(accounts).where(eq(accounts.id, id)).get();
}

export async function getAccountByEmail(db: Db, email: string): Promise<AccountRow | undefined> {
  return db.select().from(accounts).where(eq(accounts.email, email)).get();
}

export async function insertAccount(db: Db, row: typeof accounts.$inferInsert): Promise<void> {
  await db.insert(accounts).values(row);
}

export async function updateAccount(db: Db, id: string, patch: { plan?: Plan; overrides?: Overrides }, now: string): Promise<void> {
  await db
    .update(accounts)
    .set({ ...patch, updatedAt: now })
    .where(eq(accounts.id, id));
}

/** Adds (or, negative, removes) credits of one kind, with a ledger row, in one batch. */
export async function grantCredits(
  db: Db,
  accountId: string,
  amountMicro: number,
  kind: "free" | "paid",
  ledgerId: string,
  now: string,
): Promise<void> {
  const column = kind === "free" ? accounts.freeCreditsMicro : accounts.paidCreditsMicro;
  await db.batch([
    db
      .update(accounts)
      .set({ [kind === "free" ? "freeCreditsMicro" : "paidCreditsMicro"]: sql`${column} + ${amountMicro}`, updatedAt: now })
      .where(eq(accounts.id, accountId)),
    db.insert(creditLedger).values({
      id: ledgerId,
      accountId,
      kind: "grant",
      amountMicro,
      freeDeltaMicro: kind === "free" ? amountMicro : 0,
      paidDeltaMicro: kind === "paid" ? amountMicro : 0,
      createdAt: now,
    }),
  ]);
}
