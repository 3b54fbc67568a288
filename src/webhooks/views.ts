import type { DeliveryAttemptRow, DeliveryRow } from "../storage/deliveries";
import type { WebhookRow } from "../storage/webhooks";

export function webhookView(w: WebhookRow, opts: { withSecret?: boolean } = {}) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    is_active: w.isActive,
    description: w.description,
    ...(opts.withSecret ? { secret: w.secret } : {}),
    last_delivery_status: w.lastDeliveryStatus,
    last_delivery_at: w.lastDeliveryAt,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
  };
}

export function deliveryView(d: DeliveryRow) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: d.status === "pending" ? d.nextAttemptAt : null,
    last_attempt_at: d.lastAttemptAt,
    is_test: d.isTest,
    replay_of: d.replayOf,
    resend_count: d.resendCount,
    created_at: d.createdAt,
  };
}

export function attemptView(a: DeliveryAttemptRow) {
  return {
    attempt_no: a.attemptNo,
    request_url: a.requestUrl,
    request_headers: a.requestHeaders,
    response_status: a.responseStatus,
    response_headers: a.responseHeaders,
    response_body: a.responseBody,
    duration_ms: a.durationMs,
    network_error: a.networkError,
    created_at: a.createdAt,
  };
}
