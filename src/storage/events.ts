// The webhook outbox's rows: an event and its deliveries inserted together, each statement only WHERE a
// condition holds (the run's end was won, a tool is under its limit) — the one place events and
// deliveries are inserted (events/outbox.ts builds them) — and the count that limits Test and Replay.
import { and, eq, gt, type SQL, sql } from "drizzle-orm";
import type { EventData, EventOrigin } from "../model/events";
import type { Db } from "./db";
import { events } from "./schema";

export type EventRow = typeof events.$inferSelect;

export async function getEvent(db: Db, id: string): Promise<EventRow | undefined> {
  return db.select().from(events).where(eq(events.id, id)).get();
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

/** Delivery ids made in SQL: 16 lowercase hex characters, as events/outbox.ts makes them. */
const SQL_DELIVERY_ID = sql`lower(hex(randomblob(8)))`;

/**
 * The two statements that put an event in the outbox: the event row, then its deliveries (pending, due
 * at once, each carrying `body`, the exact bytes every attempt sends), each applying only WHERE `condition`.
 */
export function outboxStatements(db: Db, event: OutboxEvent, body: string, targets: DeliveryTargets, condition: SQL) {
  const at = event.createdAt;
  const insertEvent = db.run(sql`
    INSERT INTO events (id, account_id, type, data, occurred_at, submission_id, run_id, origin, created_at)
    SELECT ${event.id}, ${event.accountId}, ${event.type}, ${JSON.stringify(event.data)}, ${event.occurredAt}, ${event.submissionId},
      ${event.runId}, ${event.origin}, ${at}
    WHERE ${condition}`);
  const insertDeliveries =
    targets === "subscribed"
      ? db.run(sql`
          INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, body, status, attempt_count, next_attempt_at, is_test,
            created_at, updated_at)
          SELECT ${SQL_DELIVERY_ID}, w.account_id, w.id, ${event.id}, ${event.type}, ${body}, 'pending', 0, ${at}, 0, ${at}, ${at}
          FROM webhooks w
          WHERE w.account_id = ${event.accountId} AND w.is_active = 1
            AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE json_each.value = ${event.type}) AND ${condition}`)
      : db.run(sql`
          INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, body, status, attempt_count, next_attempt_at, replay_of,
            is_test, created_at, updated_at)
          SELECT ${targets.deliveryId}, ${event.accountId}, ${targets.webhookId}, ${event.id}, ${event.type}, ${body}, 'pending', 0, ${at},
            ${targets.replayOf}, ${targets.isTest ? 1 : 0}, ${at}, ${at}
          WHERE EXISTS (SELECT 1 FROM events WHERE id = ${event.id}) AND EXISTS (SELECT 1 FROM webhooks WHERE id = ${targets.webhookId})`);
  return [insertEvent, insertDeliveries] as const;
}

/** The condition of a tool's insert: fewer than `limit` events of `origin` by the account since `since`. */
export const toolEventsUnder = (accountId: string, origin: EventOrigin, since: string, limit: number): SQL =>
  sql`(SELECT count(*) FROM events WHERE account_id = ${accountId} AND origin = ${origin} AND created_at > ${since}) < ${limit}`;

/** When the oldest event of `origin` by the account since `since` was made, or null. */
export async function oldestToolEvent(db: Db, accountId: string, origin: EventOrigin, since: string): Promise<string | null> {
  const oldest = await db
    .select({ at: sql<string | null>`min(${events.createdAt})` })
    .from(events)
    .where(and(eq(events.accountId, accountId), eq(events.origin, origin), gt(events.createdAt, since)))
    .get();
  return oldest?.at ?? null;
}
