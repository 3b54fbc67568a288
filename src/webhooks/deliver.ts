// One delivery attempt (docs/webhooks.md): re-check the webhook (exists, active, URL still safe — DNS is
// resolved again), claim attempt N exactly once, POST the stored body with a fresh timestamp and
// signature, no redirects, 10 s timeout; record the attempt and decide: done, retry later, or failed.

import { config } from "../config";
import type { Bindings } from "../env";
import { getDb } from "../storage/db";
import type { DeliveryChange } from "../storage/deliveries";
import { claimAttempt, failPendingDelivery, getDelivery, recordAttempt } from "../storage/deliveries";
import { getWebhookById } from "../storage/webhooks";
import { getResolver, type Resolver } from "./resolver";
import { deliveryHeaders } from "./signing";
import { checkWebhookUrl, policyOf } from "./url-safety";

/** Delays before attempts 2..6, after a failed attempt 1..5: 1 min, 5 min, 30 min, 2 h, 12 h. */
export const RETRY_DELAYS_SECONDS = [60, 300, 1_800, 7_200, 43_200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** Retrying stops after 24 hours: a delivery older than this is failed without a further attempt. */
export const MAX_DELIVERY_AGE_MS = 24 * 3_600_000;
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Stored response bodies are cut at 8 KB. */
export const RESPONSE_BODY_LIMIT = 8 * 1024;
/** A message this much ahead of its delivery's due time is a duplicate; another one carries the delivery. */
const EARLY_SLACK_MS = 5_000;

export interface DeliveryDeps {
  resolver: Resolver;
  now: () => number;
  timeoutMs: number;
  /** Delays before attempts 2..6 (RETRY_DELAYS_SECONDS unless WEBHOOK_RETRY_DELAYS says otherwise). */
  retryDelays?: readonly number[];
}

export const defaultDeps = (env: Bindings): DeliveryDeps => ({
  resolver: getResolver(env),
  now: Date.now,
  timeoutMs: DELIVERY_TIMEOUT_MS,
  retryDelays: config(env).webhookRetryDelays,
});

export type AttemptOutcome =
  | { kind: "skipped"; reason: string }
  | { kind: "succeeded"; attemptNo: number }
  | { kind: "retry"; attemptNo: number; delaySeconds: number }
  | { kind: "failed"; attemptNo: number };

interface HttpResult {
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  durationMs: number;
  networkError: string | null;
}

async function readLimited(res: Response, limit: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.byteLength;
  }
  return new TextDecoder().decode(all.subarray(0, limit));
}

async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<HttpResult> {
  const started = Date.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const res = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: controller.signal });
    const responseHeaders = Object.fromEntries(res.headers);
    let text: string | null = null;
    try {
      text = await readLimited(res, RESPONSE_BODY_LIMIT);
    } catch {
      // The status decides; a body that stalls past the timeout is simply not kept.
    }
    return { status: res.status, headers: responseHeaders, body: text, durationMs: Date.now() - started, networkError: null };
  } catch (err) {
    const networkError = timedOut
      ? `timeout: no answer within ${timeoutMs / 1000} s`
      : `network error: ${err instanceof Error ? err.message : String(err)}`;
    return { status: null, headers: null, body: null, durationMs: Date.now() - started, networkError };
  } finally {
    clearTimeout(timer);
  }
}

/** Makes the next attempt of a delivery, if it is due and still wanted. */
export async function attemptDelivery(env: Bindings, deliveryId: string, deps: DeliveryDeps): Promise<AttemptOutcome> {
  const db = getDb(env.DB);
  const delivery = await getDelivery(db, deliveryId);
  // A deleted webhook takes its deliveries with it.
  if (!delivery) return { kind: "skipped", reason: "no such delivery" };
  if (delivery.status !== "pending") return { kind: "skipped", reason: `delivery is ${delivery.status}` };
  const webhook = await getWebhookById(db, delivery.webhookId);
  if (!webhook) return { kind: "skipped", reason: "webhook deleted" };

  const now = deps.now();
  if (!webhook.isActive) {
    await failPendingDelivery(db, delivery.id, new Date(now).toISOString());
    return { kind: "skipped", reason: "webhook inactive" };
  }
  // A re-sent delivery's series counts from its re-send (seriesStartedAt, seriesBase).
  if (now - Date.parse(delivery.seriesStartedAt ?? delivery.createdAt) > MAX_DELIVERY_AGE_MS) {
    await failPendingDelivery(db, delivery.id, new Date(now).toISOString());
    return { kind: "skipped", reason: "older than 24 hours" };
  }
  if (delivery.nextAttemptAt && Date.parse(delivery.nextAttemptAt) > now + EARLY_SLACK_MS) {
    return { kind: "skipped", reason: "not due yet (duplicate message)" };
  }

  // Claim attempt N+1: of two messages for the same delivery, only one gets it.
  const stamp = new Date(now).toISOString();
  const attemptNo = await claimAttempt(db, delivery, stamp);
  if (attemptNo === null) return { kind: "skipped", reason: "attempt already taken" };
  const inSeries = attemptNo - delivery.seriesBase;

  const headers = await deliveryHeaders({
    secret: webhook.secret,
    body: delivery.body,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    now,
  });
  const check = await checkWebhookUrl(webhook.url, deps.resolver, policyOf(env));
  const result: HttpResult = check.ok
    ? await post(webhook.url, headers, delivery.body, deps.timeoutMs)
    : { status: null, headers: null, body: null, durationMs: 0, networkError: `blocked (${check.reason}): ${check.message} Not sent.` };
  const ok = result.status !== null && result.status >= 200 && result.status < 300;

  const done = deps.now();
  const doneIso = new Date(done).toISOString();
  const outcome: AttemptOutcome = ok
    ? { kind: "succeeded", attemptNo }
    : inSeries >= MAX_ATTEMPTS
      ? { kind: "failed", attemptNo }
      : { kind: "retry", attemptNo, delaySeconds: (deps.retryDelays ?? RETRY_DELAYS_SECONDS)[inSeries - 1]! };

  const deliveryChange: DeliveryChange =
    outcome.kind === "retry"
      ? { nextAttemptAt: new Date(done + outcome.delaySeconds * 1000).toISOString(), enqueuedAt: doneIso, updatedAt: doneIso }
      : { status: outcome.kind, nextAttemptAt: null, updatedAt: doneIso };
  const attempt = {
    id: crypto.randomUUID(),
    deliveryId: delivery.id,
    attemptNo,
    requestUrl: webhook.url,
    requestHeaders: headers,
    responseStatus: result.status,
    responseHeaders: result.headers,
    responseBody: result.body,
    durationMs: result.durationMs,
    networkError: result.networkError,
    createdAt: stamp,
  };
  await recordAttempt(db, attempt, deliveryChange, {
    id: webhook.id,
    lastDeliveryStatus: ok ? "succeeded" : "failed",
    lastDeliveryAt: doneIso,
  });
  return outcome;
}
