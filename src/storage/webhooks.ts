// Webhook rows: the queries of the webhooks API, the dashboard and delivery (deliveries: deliveries.ts;
// events: events.ts).

import { and, eq, sql } from "drizzle-orm";
import { type Db, rowsChanged } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { webhooks } from "./schema";

export type WebhookRow = typeof webhooks.$inferSelect;

/** At most this many webhooks per account (docs/webhooks.md). */
export const MAX_WEBHOOKS_PER_ACCOUNT = 20;

const NEWEST_FIRST: Ordering = { key: webhooks.createdAt, id: webhooks.id, descending: true, valueOf: (r) => r.createdAt as string };

export async function listWebhooks(db: Db, accountId: string, pageSize: number, cursor?: string): Promise<Page<WebhookRow>> {
  const req = { orderingName: "webhooks:-created_at", ordering: NEWEST_FIRST, cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), plan.where))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

export async function getWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow | undefined> {
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .get();
}

export async function getWebhookById(db: Db, id: string): Promise<WebhookRow | undefined> {
  return db.select().from(webhooks).where(eq(webhooks.id, id)).get();
}

/**
 * Inserts the webhook unless the account already has the maximum; exact under concurrent creates,
 * since D1 runs one write at a time. Returns false when the limit refused it.
 */
export async function insertWebhookWithinLimit(db: Db, row: typeof webhooks.$inferInsert): Promise<boolean> {
  const res = await db.run(sql`
    INSERT INTO webhooks (id, account_id, url, events, is_active, description, secret, last_delivery_status, last_delivery_at, created_at, updated_at)
    SELECT ${row.id}, ${row.accountId}, ${row.url}, ${JSON.stringify(row.events)}, ${row.isActive ? 1 : 0}, ${row.description ?? ""},
      ${row.secret}, '', NULL, ${row.createdAt}, ${row.updatedAt}
    WHERE (SELECT count(*) FROM webhooks WHERE account_id = ${row.accountId}) < ${MAX_WEBHOOKS_PER_ACCOUNT}`);
  return rowsChanged(res) === 1;
}

export async function updateWebhook(
  db: Db,
  accountId: string,
  id: string,
  changes: Partial<Pick<WebhookRow, "url" | "events" | "isActive" | "description" | "secret">>,
  now: string,
): Promise<WebhookRow | undefined> {
  const [row] = await db
    .update(webhooks)
    .set({ ...changes, updatedAt: now })
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .returning();
  return row;
}

/** Deletes the webhook; its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteWebhook(db: Db, accountId: string, id: string): Promise<boolean> {
  const gone = await db
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.accountId, accountId)))
    .returning({ id: webhooks.id });
  return gone.length === 1;
}
