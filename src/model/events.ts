// The words of webhooks, each stated once: the event types (docs/webhooks.md#events), what made an event,
// and the statuses of a delivery.
import type { JsonObject } from "./json";

export const EVENT_TYPES = [
  "submission.succeeded",
  "submission.failed",
  "submission.cancelled",
  "result.completed",
  "run.resumed",
  "sweep.completed",
  "webhook.test",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const isEventType = (text: string): text is EventType => (EVENT_TYPES as readonly string[]).includes(text);

/** What made an event: a run's end, the dashboard's Test tool, or its Replay tool (whose limits count them). */
export const EVENT_ORIGINS = ["run", "test", "replay"] as const;
export type EventOrigin = (typeof EVENT_ORIGINS)[number];

/** An event's `data` (each type's fields: events/payloads.ts), as stored and sent. */
export type EventData = JsonObject;

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const isDeliveryStatus = (text: string): text is DeliveryStatus => (DELIVERY_STATUSES as readonly string[]).includes(text);
