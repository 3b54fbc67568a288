// The webhook outbox. A run's end writes its events and one delivery row per active subscribed
// webhook in the same D1 batch as the end itself (domain/transitions.ts builds the facts), so an event exists exactly
// when the run ended, and nothing is lost between the write and the queue. The queue then only
// carries delivery ids: `enqueueRunDeliveries` right after the batch, and the cron handler
// (`requeueDueDeliveries`) for anything due that was never sent or whose message was lost.

import { and, eq, inArray, isNull, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { Bindings } from "../env";
import { deliveriesQueue } from "../env";
import { toHex } from "../lib/crypto";
import { nowIso } from "../lib/ids";
import type { EventData, EventOrigin } from "../model/events";
import { type Db, getDb } from "../storage/db";
import { deliveries } from "../storage/schema";
import { envelope, occurredAt, type RunEndFacts, runEndEvents } from "./payloads";

/** Delivery ids: 16 lowercase hex characters (made by SQL `randomblob` in the outbox, or here). */
export const newDeliveryId = () => toHex(crypto.getRandomValues(new Uint8Array(8)).buffer as ArrayBuffer);
const SQL_DELIVERY_ID = sql`lower(hex(randomblob(8)))`;

/** A message whose delivery has not moved this long after it was due is considered lost and re-sent. */
export const LOST_AFTER_MS = 5 * 60_000;

/** A run's end as its events tell it, with where it happened (the outbox rows' own columns). */
export interface RunEndEventFacts extends RunEndFacts {
  accountId: string;
  runId: string;
  endedAt: string;
}

/** One event of the outbox: what `events` stores (origin `run`, `test` or `replay`). */
export interface OutboxEvent {
  id: string;
  accountId: string;
  type: string;
  data: EventData;
  occurredAt: string;
  submissionId: string | null;
  runId: string | null;
  origin: EventOrigin;
  createdAt: string;
}

/** Who gets a delivery of the event: one given webhook, or every active webhook of the account subscribed to its type. */
export type DeliveryTargets = { webhookId: string; deliveryId: string; replayOf: string | null; isTest: boolean } | "subscribed";

/**
 * The two statements that put an event in the outbox: the event row, then its deliveries (pending, due
 * at once), each applying only WHERE `condition` holds — the run's end was won, or a tool is under its
 * limit. The one place events and deliveries are inserted.
 */
export function outboxStatements(db: Db, event: OutboxEvent, targets: DeliveryTargets, condition: SQL) {
  const body = envelope(event.id, event.type, event.occurredAt, event.data);
  const at = event.createdAt;
  const insertEvent = db.run(sql`
    INSERT INTO events (id, account_id, type, data, occurred_at, submission_id, run_id, origin, created_at)
    SELECT ${event.id}, ${event.accountId}, ${event.type}, ${JSON.stringify(event.data)}, ${event.occurredAt}, ${event.submissionId}, ${event.runId}, ${event.origin}, ${at}
    WHERE ${condition}`);
  const insertDeliveries =
    targets === "subscribed"
      ? db.run(sql`
          INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, body, status, attempt_count, next_attempt_at, is_test, created_at, updated_at)
          SELECT ${SQL_DELIVERY_ID}, w.account_id, w.id, ${event.id}, ${event.type}, ${body}, 'pending', 0, ${at}, 0, ${at}, ${at}
          FROM webhooks w
          WHERE w.account_id = ${event.accountId} AND w.is_active = 1
            AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ${event.type}) AND ${condition}`)
      : db.run(sql`
          INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, body, status, attempt_count, next_attempt_at, replay_of, is_test, created_at, updated_at)
          SELECT ${targets.deliveryId}, ${event.accountId}, ${targets.webhookId}, ${event.id}, ${event.type}, ${body}, 'pending', 0, ${at}, ${targets.replayOf}, ${targets.isTest ? 1 : 0}, ${at}, ${at}
          WHERE EXISTS (SELECT 1 FROM events WHERE id = ${event.id}) AND EXISTS (SELECT 1 FROM webhooks WHERE id = ${targets.webhookId})`);
  return [insertEvent, insertDeliveries] as const;
}

/** The outbox statements of a run's end, each applying only WHERE `won` holds (the caller that ended the run). */
export function runEndOutboxStatements(db: Db, facts: RunEndEventFacts, won: SQL) {
  const occurred = occurredAt(facts.endedAt);
  return runEndEvents(facts).flatMap(({ type, data }) =>
    outboxStatements(
      db,
      {
        id: crypto.randomUUID(),
        accountId: facts.accountId,
        type,
        data,
        occurredAt: occurred,
        submissionId: facts.submissionId,
        runId: facts.runId,
        origin: "run",
        createdAt: facts.endedAt,
      },
      "subscribed",
      won,
    ),
  );
}

/** Puts deliveries on the queue. Each is claimed first (enqueued_at set), so two callers never both send it. */
async function claimAndSend(env: Bindings, where: SQL): Promise<string[]> {
  const db = getDb(env.DB);
  const now = nowIso();
  const claimed = await db.update(deliveries).set({ enqueuedAt: now, updatedAt: now }).where(where).returning({ id: deliveries.id });
  const ids = claimed.map((r) => r.id);
  if (ids.length === 0) return [];
  try {
    for (let i = 0; i < ids.length; i += 100) {
      await deliveriesQueue(env).sendBatch(ids.slice(i, i + 100).map((id) => ({ body: { delivery_id: id } })));
    }
  } catch (err) {
    // Give them back to the cron handler, which sends anything due and never sent.
    await db
      .update(deliveries)
      .set({ enqueuedAt: null })
      .where(and(inArray(deliveries.id, ids), eq(deliveries.enqueuedAt, now)));
    throw err;
  }
  return ids;
}

/** Enqueues the deliveries of a run's events that were never sent. Idempotent. */
export async function enqueueRunDeliveries(env: Bindings, runId: string): Promise<string[]> {
  return claimAndSend(
    env,
    and(
      eq(deliveries.status, "pending"),
      isNull(deliveries.enqueuedAt),
      sql`${deliveries.eventId} IN (SELECT id FROM events WHERE run_id = ${runId})`,
    )!,
  );
}

/** Enqueues the given new deliveries (Test, Replay). Idempotent. */
export async function enqueueDeliveries(env: Bindings, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return claimAndSend(env, and(inArray(deliveries.id, ids), eq(deliveries.status, "pending"), isNull(deliveries.enqueuedAt))!);
}

/**
 * The cron handler's part: enqueue pending deliveries that are due and were never sent, and those whose
 * message was lost (due for a while, not moved since). A duplicate message is harmless (the consumer
 * claims each attempt number once).
 */
export async function requeueDueDeliveries(env: Bindings, now = Date.now()): Promise<number> {
  const due = new Date(now).toISOString();
  const stale = new Date(now - LOST_AFTER_MS).toISOString();
  const candidates = await getDb(env.DB)
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
    .limit(500)
    .all();
  let sent = 0;
  for (const c of candidates) {
    const same = c.enqueuedAt === null ? isNull(deliveries.enqueuedAt) : eq(deliveries.enqueuedAt, c.enqueuedAt);
    sent += (await claimAndSend(env, and(eq(deliveries.id, c.id), eq(deliveries.status, "pending"), same)!)).length;
  }
  return sent;
}
