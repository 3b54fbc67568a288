// The credit ledger: a run's charge with the balances it takes from, and the ledger as the account page
// lists it (one row per charge or grant, newest first, keyset-paged).
import { and, eq, type SQL, sql } from "drizzle-orm";
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

export interface RunCharge {
  ledgerId: string;
  accountId: string;
  runId: string;
  submissionId: string;
  amountMicro: number;
  cpuSeconds: number;
  gbSeconds: number;
  /** How many times the run was resumed: its segments are all in this one charge. */
  resumes?: number;
  now: string;
}

/**
 * A run's charge (domain/transitions.ts batches it with the run's end): one ledger row (also unique by
 * run_id) and the account's balances, free credits first, then paid — both only WHERE the run's end
 * `won` holds.
 */
export function runChargeStatements(db: Db, c: RunCharge, won: SQL) {
  const fromFree = sql`min(${c.amountMicro}, max(free_credits_micro, 0))`;
  return [
    db.run(sql`
      INSERT INTO credit_ledger (id, account_id, kind, run_id, submission_id, amount_micro, free_delta_micro, paid_delta_micro,
        cpu_seconds, gb_seconds, resumes, created_at)
      SELECT ${c.ledgerId}, a.id, 'run_charge', ${c.runId}, ${c.submissionId}, ${-c.amountMicro},
        -min(${c.amountMicro}, max(a.free_credits_micro, 0)), -(${c.amountMicro} - min(${c.amountMicro}, max(a.free_credits_micro, 0))),
        ${c.cpuSeconds}, ${c.gbSeconds}, ${c.resumes ?? 0}, ${c.now}
      FROM accounts a WHERE a.id = ${c.accountId} AND ${won}`),
    db.run(sql`
      UPDATE accounts SET
        free_credits_micro = free_credits_micro - ${fromFree},
        paid_credits_micro = paid_credits_micro - (${c.amountMicro} - ${fromFree}),
        updated_at = ${c.now}
      WHERE id = ${c.accountId} AND ${won}`),
  ];
}
