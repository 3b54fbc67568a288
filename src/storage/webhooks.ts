// Webhook, event, delivery and delivery-attempt rows: the queries of the webhooks API and of delivery.

import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { DeliveryStatus } from "../model/events";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { deliveries, deliveryAttempts, events, webhooks } from "./schema";

export type WebhookRow = typeof webhooks.$inferSelect;
export type EventRow = typeof events.$inferSelect;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type DeliveryAttemptRow = typeof deliveryAttempts.$inferSelect;

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
  return (res as unknown as D1Result).meta.changes === 1;
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

export async function getDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db.select().from(deliveries).where(eq(deliveries.id, id)).get();
}

export async function getAccountDelivery(db: Db, accountId: string, id: string): Promise<DeliveryRow | undefined> {
  return db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.id, id), eq(deliveries.accountId, accountId)))
    .get();
}

export async function listAttempts(db: Db, deliveryId: string): Promise<DeliveryAttemptRow[]> {
  return db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, deliveryId))
    .orderBy(asc(deliveryAttempts.attemptNo))
    .all();
}

/** The delivery log of a webhook, newest first. */
export async function listDeliveries(db: Db, webhookId: string, limit = 50): Promise<DeliveryRow[]> {
  return db
    .select()
    .from(deliveries)
    .where(eq(deliveries.webhookId, webhookId))
    .orderBy(desc(deliveries.createdAt), desc(deliveries.id))
    .limit(limit)
    .all();
}

const DELIVERIES_NEWEST_FIRST: Ordering = {
  key: deliveries.createdAt,
  id: deliveries.id,
  descending: true,
  valueOf: (r) => r.createdAt as string,
};

/** A page of a webhook's delivery log, newest first, optionally only the given statuses. */
export async function pageDeliveries(
  db: Db,
  webhookId: string,
  statuses: DeliveryStatus[] | undefined,
  pageSize: number,
  cursor?: string,
): Promise<Page<DeliveryRow>> {
  const req = { orderingName: "deliveries:-created_at", ordering: DELIVERIES_NEWEST_FIRST, cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.webhookId, webhookId), statuses?.length ? inArray(deliveries.status, statuses) : undefined, plan.where))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

/**
 * Starts a new series of attempts of a failed delivery (the dashboard's re-send): pending, due now, the
 * retry schedule and the 24-hour limit counted afresh. False when the delivery is not failed (any more).
 */
export async function restartDelivery(db: Db, id: string, now: string): Promise<boolean> {
  const res = await db
    .update(deliveries)
    .set({
      status: "pending",
      nextAttemptAt: now,
      // Not enqueued yet: enqueueDeliveries claims it (or the cron does, if the send is lost).
      enqueuedAt: null,
      seriesStartedAt: now,
      seriesBase: sql`${deliveries.attemptCount}`,
      resendCount: sql`${deliveries.resendCount} + 1`,
      updatedAt: now,
    })
    .where(and(eq(deliveries.id, id), eq(deliveries.status, "failed")))
    .returning({ id: deliveries.id });
  return res.length === 1;
}

export async function getEvent(db: Db, id: string): Promise<EventRow | undefined> {
  return db.select().from(events).where(eq(events.id, id)).get();
}
