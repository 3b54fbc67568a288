// The webhook outbox. A run's end writes its events and one delivery row per active subscribed
// webhook in the same D1 batch as the end itself (domain/transitions.ts builds the facts), so an event exists exactly
// when the run ended, and nothing is lost between the write and the queue. The queue then only
// carries delivery ids: `enqueueRunDeliveries` right after the batch, and the cron handler
// (`requeueDueDeliveries`) for anything due that was never sent or whose message was lost.

import type { SQL } from "drizzle-orm";
import type { Bindings } from "../env";
import { deliveriesQueue } from "../env";
import { toHex } from "../lib/crypto";
import { nowIso } from "../lib/ids";
import { type Db, getDb } from "../storage/db";
import {
  claimDueDelivery,
  claimEventDeliveries,
  claimNewDeliveries,
  claimRunDeliveries,
  dueDeliveries,
  releaseClaims,
} from "../storage/deliveries";
import { type DeliveryTargets, type OutboxEvent, outboxStatements } from "../storage/events";
import { envelope, occurredAt, type RunEndFacts, runEndEvents, type SweepEndFacts, sweepCompletedData } from "./payloads";

/** Delivery ids: 16 lowercase hex characters (made by SQL `randomblob` in the outbox, or here). */
export const newDeliveryId = () => toHex(crypto.getRandomValues(new Uint8Array(8)));

/** A message whose delivery has not moved this long after it was due is considered lost and re-sent. */
export const LOST_AFTER_MS = 5 * 60_000;

/** A run's end as its events tell it, with where it happened (the outbox rows' own columns). */
export interface RunEndEventFacts extends RunEndFacts {
  accountId: string;
  runId: string;
  endedAt: string;
}

/** An event's outbox statements (storage/events.ts), its deliveries carrying the event's envelope. */
export const eventStatements = (db: Db, event: OutboxEvent, targets: DeliveryTargets, condition: SQL) =>
  outboxStatements(db, event, envelope(event.id, event.type, event.occurredAt, event.data), targets, condition);

/** The outbox statements of a run's end, each applying only WHERE `won` holds (the caller that ended the run). */
export function runEndOutboxStatements(db: Db, facts: RunEndEventFacts, won: SQL) {
  const occurred = occurredAt(facts.endedAt);
  return runEndEvents(facts).flatMap(({ type, data }) =>
    eventStatements(
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

/**
 * The outbox statements of a sweep's end (its `sweep.completed` event, `eventId`), each applying only
 * WHERE `won` holds (the caller whose statement ended the sweep).
 */
export function sweepEndOutboxStatements(db: Db, eventId: string, accountId: string, endedAt: string, facts: SweepEndFacts, won: SQL) {
  return eventStatements(
    db,
    {
      id: eventId,
      accountId,
      type: "sweep.completed",
      data: sweepCompletedData(facts),
      occurredAt: occurredAt(endedAt),
      submissionId: null,
      runId: null,
      origin: "run",
      createdAt: endedAt,
    },
    "subscribed",
    won,
  );
}

/** Puts claimed deliveries on the queue; if the queue refuses them, their claims are given back (the cron sends them). */
async function send(env: Bindings, ids: string[], claimedAt: string): Promise<string[]> {
  if (ids.length === 0) return [];
  try {
    for (let i = 0; i < ids.length; i += 100) {
      await deliveriesQueue(env).sendBatch(ids.slice(i, i + 100).map((id) => ({ body: { delivery_id: id } })));
    }
  } catch (err) {
    await releaseClaims(getDb(env.DB), ids, claimedAt);
    throw err;
  }
  return ids;
}

/** Enqueues the deliveries of a run's events that were never sent. Idempotent. */
export async function enqueueRunDeliveries(env: Bindings, runId: string): Promise<string[]> {
  const now = nowIso();
  return send(env, await claimRunDeliveries(getDb(env.DB), runId, now), now);
}

/** Enqueues the deliveries of one event that were never sent (a sweep's end). Idempotent. */
export async function enqueueEventDeliveries(env: Bindings, eventId: string): Promise<string[]> {
  const now = nowIso();
  return send(env, await claimEventDeliveries(getDb(env.DB), eventId, now), now);
}

/** Enqueues the given new deliveries (Test, Replay). Idempotent. */
export async function enqueueDeliveries(env: Bindings, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const now = nowIso();
  return send(env, await claimNewDeliveries(getDb(env.DB), ids, now), now);
}

/**
 * The cron handler's part: enqueue pending deliveries that are due and were never sent, and those whose
 * message was lost (due for a while, not moved since). A duplicate message is harmless (the consumer
 * claims each attempt number once).
 */
export async function requeueDueDeliveries(env: Bindings, now = Date.now()): Promise<number> {
  const db = getDb(env.DB);
  const candidates = await dueDeliveries(db, new Date(now).toISOString(), new Date(now - LOST_AFTER_MS).toISOString(), 500);
  let sent = 0;
  for (const c of candidates) {
    const claimedAt = nowIso();
    sent += (await send(env, await claimDueDelivery(db, c, claimedAt), claimedAt)).length;
  }
  return sent;
}
