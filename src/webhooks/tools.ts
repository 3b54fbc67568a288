// The dashboard tools' engine (docs/webhooks.md#dashboard-tools): Test fires a synthetic event, Replay
// re-sends a delivery's event under a fresh event id, Inspect reads a delivery with every attempt.
// Test and Replay go through the same pipeline as run events (outbox row → queue → attempts) and are
// limited to 10 per minute per account each, exactly: the limit is a condition of the insert itself.
import type { Bindings } from "../env";
import { ApiError, notFound, validationError } from "../errors";
import { enqueueDeliveries, eventStatements, newDeliveryId } from "../events/outbox";
import { TEST_OCCURRED_AT, testData } from "../events/payloads";
import { isoMicros, nowIso } from "../lib/ids";
import { type DeliveryStatus, type EventData, type EventOrigin, isEventType } from "../model/events";
import { type Db, getDb, rowsChanged } from "../storage/db";
import { getAccountDelivery, listAttempts, pageDeliveries, restartDelivery } from "../storage/deliveries";
import { getEvent, oldestToolEvent, toolEventsUnder } from "../storage/events";
import { getWebhook, type WebhookRow } from "../storage/webhooks";
import { attemptView, deliveryView } from "./views";

export const TOOL_LIMIT_PER_MINUTE = 10;
const WINDOW_MS = 60_000;
const BUCKETS = { test: "webhook_test", replay: "webhook_replay" } as const;

export interface FiredDelivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
}

/** The tools that make events: Test and Replay. */
type ToolOrigin = Exclude<EventOrigin, "run">;

interface NewEvent {
  origin: ToolOrigin;
  webhook: WebhookRow;
  type: string;
  data: EventData;
  occurredAt: string;
  submissionId: string | null;
  runId: string | null;
  replayOf: string | null;
  isTest: boolean;
}

async function rateLimited(db: Db, accountId: string, origin: ToolOrigin, now: number): Promise<ApiError> {
  const since = new Date(now - WINDOW_MS).toISOString();
  const oldest = await oldestToolEvent(db, accountId, origin, since);
  const retryAfter = oldest ? Math.max(1, Math.ceil((Date.parse(oldest) + WINDOW_MS - now) / 1000)) : 1;
  const tool = origin === "test" ? "Test" : "Replay";
  return new ApiError(
    "rate_limited",
    `${tool} is limited to ${TOOL_LIMIT_PER_MINUTE} per minute per account; try again in ${retryAfter} s.`,
    { retry_after: retryAfter, bucket: BUCKETS[origin], limit: TOOL_LIMIT_PER_MINUTE },
    { "Retry-After": String(retryAfter) },
  );
}

/** Writes the event and its one delivery if the account is under the tool's limit, then enqueues it. */
async function fire(env: Bindings, e: NewEvent): Promise<FiredDelivery> {
  const db = getDb(env.DB);
  const now = Date.now();
  const created = new Date(now).toISOString();
  const since = new Date(now - WINDOW_MS).toISOString();
  const eventId = crypto.randomUUID();
  const deliveryId = newDeliveryId();
  const accountId = e.webhook.accountId;
  const underLimit = toolEventsUnder(accountId, e.origin, since, TOOL_LIMIT_PER_MINUTE);
  const [inserted] = await db.batch([
    ...eventStatements(
      db,
      {
        id: eventId,
        accountId,
        type: e.type,
        data: e.data,
        occurredAt: e.occurredAt,
        submissionId: e.submissionId,
        runId: e.runId,
        origin: e.origin,
        createdAt: created,
      },
      { webhookId: e.webhook.id, deliveryId, replayOf: e.replayOf, isTest: e.isTest },
      underLimit,
    ),
  ]);
  if (rowsChanged(inserted) !== 1) throw await rateLimited(db, accountId, e.origin, now);
  await enqueueDeliveries(env, [deliveryId]);
  return { delivery_id: deliveryId, event_id: eventId, event_type: e.type };
}

function activeWebhook(webhook: WebhookRow | undefined): WebhookRow {
  if (!webhook) throw notFound("webhook");
  if (!webhook.isActive) throw new ApiError("invalid_state", "The webhook is inactive; activate it to send deliveries.");
  return webhook;
}

/**
 * Test: a synthetic `webhook.test` event whose data is a sample of `sampleOf` (any type the webhook
 * subscribes to, or `webhook.test` itself), with sample ids and the fixed occurred_at.
 */
export async function fireTest(
  env: Bindings,
  accountId: string,
  webhookId: string,
  sampleOf: string = "webhook.test",
): Promise<FiredDelivery> {
  const webhook = activeWebhook(await getWebhook(getDb(env.DB), accountId, webhookId));
  if (!isEventType(sampleOf) || (sampleOf !== "webhook.test" && !webhook.events.includes(sampleOf))) {
    throw validationError([
      { field: "event_type", message: `must be webhook.test or one of the webhook's events: ${webhook.events.join(", ")}` },
    ]);
  }
  return fire(env, {
    origin: "test",
    webhook,
    type: "webhook.test",
    data: testData(sampleOf),
    occurredAt: TEST_OCCURRED_AT,
    submissionId: null,
    runId: null,
    replayOf: null,
    isTest: true,
  });
}

/** Replay: a new delivery of a delivery's event type and data, with a fresh event id, signature and occurred_at. */
export async function replayDelivery(env: Bindings, accountId: string, webhookId: string, deliveryId: string): Promise<FiredDelivery> {
  const db = getDb(env.DB);
  const original = await webhookDelivery(db, accountId, webhookId, deliveryId);
  const event = await getEvent(db, original.eventId);
  if (!event) throw notFound("delivery");
  const webhook = activeWebhook(await getWebhook(db, accountId, original.webhookId));
  return fire(env, {
    origin: "replay",
    webhook,
    type: event.type,
    data: event.data,
    // Synthetic test events keep their fixed timestamp; everything else is stamped now.
    occurredAt: event.type === "webhook.test" ? TEST_OCCURRED_AT : isoMicros(),
    submissionId: event.submissionId,
    runId: event.runId,
    replayOf: original.id,
    isTest: original.isTest,
  });
}

/** Inspect: the delivery, its request (URL and headers per attempt), the original payload and every attempt. */
export async function inspectDelivery(env: Bindings, accountId: string, webhookId: string, deliveryId: string) {
  const db = getDb(env.DB);
  const delivery = await webhookDelivery(db, accountId, webhookId, deliveryId);
  const attempts = await listAttempts(db, delivery.id);
  return { ...deliveryView(delivery), payload: delivery.body, attempts: attempts.map(attemptView) };
}

/**
 * Re-send: a delivery marked failed gets a new series of attempts of the same event (same event id and
 * body, fresh timestamp and signature per attempt), with the full retry schedule again. 409 unless it is
 * failed; the webhook must exist and be active.
 */
export async function resendDelivery(env: Bindings, accountId: string, webhookId: string, deliveryId: string): Promise<FiredDelivery> {
  const db = getDb(env.DB);
  const delivery = await webhookDelivery(db, accountId, webhookId, deliveryId);
  activeWebhook(await getWebhook(db, accountId, delivery.webhookId));
  if (delivery.status !== "failed" || !(await restartDelivery(db, delivery.id, nowIso()))) {
    throw new ApiError("invalid_state", `Only a failed delivery can be re-sent; this one is ${delivery.status}.`);
  }
  await enqueueDeliveries(env, [delivery.id]);
  return { delivery_id: delivery.id, event_id: delivery.eventId, event_type: delivery.eventType };
}

/** The account's delivery `deliveryId`, which must belong to its webhook `webhookId` (404 otherwise). */
async function webhookDelivery(db: Db, accountId: string, webhookId: string, deliveryId: string) {
  const delivery = await getAccountDelivery(db, accountId, deliveryId);
  if (!delivery || delivery.webhookId !== webhookId) throw notFound("delivery");
  return delivery;
}

/** A page of the delivery log of one of the account's webhooks, newest first, optionally by status. */
export async function deliveryLog(
  env: Bindings,
  accountId: string,
  webhookId: string,
  opts: { statuses?: DeliveryStatus[]; pageSize?: number; cursor?: string } = {},
) {
  const db = getDb(env.DB);
  if (!(await getWebhook(db, accountId, webhookId))) throw notFound("webhook");
  const page = await pageDeliveries(db, webhookId, opts.statuses, opts.pageSize ?? 50, opts.cursor);
  return { ...page, rows: page.rows.map(deliveryView) };
}
