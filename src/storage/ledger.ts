// The credit ledger as the account page lists it: one row per charge or grant, newest first, keyset-paged.
import { and, eq } from "drizzle-orm";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { creditLedger } from "./schema";

export type LedgerRow = typeof creditLedger.$inferSelect;

const NEWEST_FIRST: Ordering = {
  key: creditLedger.createdAt,
  id: creditLedger.id,
  descending: true,
  valueOf: (r) => r.createdAt as string,
};

export async function pageLedger(db: Db, accountId: string, pageSize: number, cursor?: string): Promise<Page<LedgerRow>> {
  const req = { orderingName: "ledger:-created_at", ordering: NEWEST_FIRST, cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(creditLedger)
    .where(and(eq(creditLedger.accountId, accountId), plan.where))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}
