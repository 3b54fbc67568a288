// Driving the deliveries consumer by hand inside workerd, with a clock the test moves.
import { createMessageBatch } from "cloudflare:test";
import { vi } from "vitest";
import { handleDeliveryMessage } from "../../src/queues/deliveries";
import { DELIVERY_TIMEOUT_MS } from "../../src/webhooks/deliver";
import { getResolver } from "../../src/webhooks/resolver";
import { env } from "./api";

export class Clock {
  offsetMs = 0;
  now = () => Date.now() + this.offsetMs;
  advance(seconds: number) {
    this.offsetMs += seconds * 1000;
  }
}

let seq = 0;

/** Hands one message for `deliveryId` to the consumer; returns what it did with the message. */
export async function consume(deliveryId: string, clock = new Clock(), opts: { attempts?: number; timeoutMs?: number } = {}) {
  const batch = createMessageBatch("allele-deliveries", [
    { id: `dlv-msg-${++seq}`, timestamp: new Date(), attempts: opts.attempts ?? 1, body: { delivery_id: deliveryId } },
  ]);
  const message = batch.messages[0]!;
  const retry = vi.spyOn(message, "retry");
  const ack = vi.spyOn(message, "ack");
  await handleDeliveryMessage(env, message, {
    resolver: getResolver(env),
    now: clock.now,
    timeoutMs: opts.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  });
  return { retried: retry.mock.calls[0]?.[0] as { delaySeconds: number } | undefined, acked: ack.mock.calls.length > 0 };
}

export const deliveryRow = (id: string) => env.DB.prepare("SELECT * FROM deliveries WHERE id = ?").bind(id).first<Record<string, any>>();

export async function attemptRows(deliveryId: string) {
  const rows = await env.DB.prepare("SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt_no")
    .bind(deliveryId)
    .all<Record<string, any>>();
  return rows.results.map(
    (r): Record<string, any> => ({
      ...r,
      request_headers: JSON.parse(r.request_headers),
      response_headers: r.response_headers ? JSON.parse(r.response_headers) : null,
    }),
  );
}

/** Deliveries of a webhook, oldest first. */
export async function deliveriesOf(webhookId: string) {
  return (
    await env.DB.prepare("SELECT * FROM deliveries WHERE webhook_id = ? ORDER BY created_at, event_type")
      .bind(webhookId)
      .all<Record<string, any>>()
  ).results;
}

/** A pending delivery of a made-up event, written straight to D1 (a fixture for delivery-time checks). */
export async function seedDelivery(accountId: string, webhookId: string): Promise<{ id: string; eventId: string; body: string }> {
  const id = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
  const eventId = crypto.randomUUID();
  const now = new Date().toISOString();
  const body = JSON.stringify({
    event_id: eventId,
    event_type: "submission.cancelled",
    occurred_at: "2026-01-01T00:00:00.000000+00:00",
    data: { submission_id: "x" },
  });
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO events (id, account_id, type, data, occurred_at, origin, created_at) VALUES (?, ?, 'submission.cancelled', '{}', ?, 'run', ?)",
    ).bind(eventId, accountId, "2026-01-01T00:00:00.000000+00:00", now),
    env.DB.prepare(
      "INSERT INTO deliveries (id, account_id, webhook_id, event_id, event_type, body, status, attempt_count, next_attempt_at, is_test, created_at, updated_at) VALUES (?, ?, ?, ?, 'submission.cancelled', ?, 'pending', 0, ?, 0, ?, ?)",
    ).bind(id, accountId, webhookId, eventId, body, now, now, now),
  ]);
  return { id, eventId, body };
}

/**
 * Records what the code puts on the real local deliveries queue. No consumer runs in the test projects
 * (vitest.config.ts), so the messages wait there and the tests hand them to the consumer themselves.
 */
export function holdDeliveryQueue() {
  return vi.spyOn(env.DELIVERIES_QUEUE, "sendBatch");
}

/** Delivery ids the code put on the queue. */
export const queuedIds = (spy: ReturnType<typeof holdDeliveryQueue>) =>
  spy.mock.calls.flatMap((c) => [...c[0]]).map((m) => (m.body as { delivery_id: string }).delivery_id);
