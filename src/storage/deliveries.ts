// Deliveries of webhook events and their attempts (docs/webhooks.md): the log and Inspect, a re-send's
// new series, the claims that put deliveries on the queue exactly once (events/outbox.ts), and one
// attempt's claim and record (webhooks/deliver.ts).
import { and, asc, desc, eq, inArray, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { DeliveryStatus } from "../model/events";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { deliveries, deliveryAttempts, webhooks } from "./schema";

export type DeliveryRow = typeof deliveries.$inferSelect;
export type DeliveryAttemptRow = typeof deliveryAttempts.$inferSelect;

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

/** Marks the deliveries `where` names as sent to the queue at `now` (each once: the condition is re-checked); their ids. */
async function claim(db: Db, where: SQL | undefined, now: string): Promise<string[]> {
  const claimed = await db.update(deliveries).set({ enqueuedAt: now, updatedAt: now }).where(where).returning({ id: deliveries.id });
  return claimed.map((r) => r.id);
}

/** Claims the pending, never-sent deliveries of a run's events. */
export const claimRunDeliveries = (db: Db, runId: string, now: string) =>
  claim(
    db,
    and(
      eq(deliveries.status, "pending"),
      isNull(deliveries.enqueuedAt),
      sql`${deliveries.eventId} IN (SELECT id FROM events WHERE run_id = ${runId})`,
    ),
    now,
  );

/** Claims the pending, never-sent deliveries of one event (a sweep's end, which belongs to no run). */
export const claimEventDeliveries = (db: Db, eventId: string, now: string) =>
  claim(db, and(eq(deliveries.status, "pending"), isNull(deliveries.enqueuedAt), eq(deliveries.eventId, eventId)), now);

/** Claims the given deliveries, if still pending and never sent (Test, Replay, re-send). */
export const claimNewDeliveries = (db: Db, ids: string[], now: string) =>
  claim(db, and(inArray(deliveries.id, ids), eq(deliveries.status, "pending"), isNull(deliveries.enqueuedAt)), now);

/** Claims one pending delivery the cron found, if nobody sent it since (`enqueuedAt` as it was read). */
export function claimDueDelivery(db: Db, found: { id: string; enqueuedAt: string | null }, now: string) {
  const same = found.enqueuedAt === null ? isNull(deliveries.enqueuedAt) : eq(deliveries.enqueuedAt, found.enqueuedAt);
  return claim(db, and(eq(deliveries.id, found.id), eq(deliveries.status, "pending"), same), now);
}

/** Gives back the claims of `now` (the queue refused them): the cron sends them later. */
export async function releaseClaims(db: Db, ids: string[], now: string): Promise<void> {
  await db
    .update(deliveries)
    .set({ enqueuedAt: null })
    .where(and(inArray(deliveries.id, ids), eq(deliveries.enqueuedAt, now)));
}

/**
 * Pending deliveries due by `due` that were never sent, and those whose message was lost (due and sent
 * before `stale`, not moved since).
 */
export function dueDeliveries(db: Db, due: string, stale: string, limit: number) {
  return db
    .select({ id: deliveries.id, enqueuedAt: deliveries.enqueuedAt })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.status, "pending"),
        or(
          and(isNull(deliveries.enqueuedAt), lte(deliveries.nextAttemptAt, due)),
          and(lt(deliveries.nextAttemptAt, stale), lt(deliveries.enqueuedAt, stale)),
        ),
      ),
    )
    .limit(limit)
    .all();
}

/** A pending delivery that will not be attempted again (its webhook inactive, or past 24 hours) marked failed. */
export async function failPendingDelivery(db: Db, id: string, now: string): Promise<void> {
  await db
    .update(deliveries)
    .set({ status: "failed", nextAttemptAt: null, updatedAt: now })
    .where(and(eq(deliveries.id, id), eq(deliveries.status, "pending")));
}

/** Claims the next attempt of a pending delivery (of two messages for it, one gets it): its number, or null. */
export async function claimAttempt(db: Db, delivery: Pick<DeliveryRow, "id" | "attemptCount">, now: string): Promise<number | null> {
  const claimed = await db
    .update(deliveries)
    .set({ attemptCount: sql`${deliveries.attemptCount} + 1`, lastAttemptAt: now, updatedAt: now })
    .where(and(eq(deliveries.id, delivery.id), eq(deliveries.status, "pending"), eq(deliveries.attemptCount, delivery.attemptCount)))
    .returning({ attemptCount: deliveries.attemptCount });
  return claimed[0]?.attemptCount ?? null;
}

/** What an attempt changes in its delivery: a retry's due time, or its end (succeeded or failed). */
export type DeliveryChange =
  | { nextAttemptAt: string; enqueuedAt: string; updatedAt: string }
  | { status: "succeeded" | "failed"; nextAttemptAt: null; updatedAt: string };

/** Records attempt `attempt.attemptNo` of a delivery, what it changes in the delivery, and the webhook's last delivery. */
export async function recordAttempt(
  db: Db,
  attempt: typeof deliveryAttempts.$inferInsert,
  change: DeliveryChange,
  webhook: { id: string; lastDeliveryStatus: "succeeded" | "failed"; lastDeliveryAt: string },
): Promise<void> {
  await db.batch([
    db.insert(deliveryAttempts).values(attempt),
    db
      .update(deliveries)
      .set(change)
      .where(and(eq(deliveries.id, attempt.deliveryId), eq(deliveries.attemptCount, attempt.attemptNo))),
    db
      .update(webhooks)
      .set({ lastDeliveryStatus: webhook.lastDeliveryStatus, lastDeliveryAt: webhook.lastDeliveryAt })
      .where(eq(webhooks.id, webhook.id)),
  ]);
}
