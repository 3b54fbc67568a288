// Verifying a webhook delivery (docs/webhooks.md#signature): `X-Signature` is `sha256=` + hex
// HMAC-SHA256, keyed by the webhook's secret, of `<X-Signature-Timestamp>.<raw body>`. Web Crypto only,
// so it runs in Node ≥ 20, Workers and browsers.
import { WebhookVerificationError } from "./errors.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];
/** A delivery's body, by event type. */
export type WebhookEvent =
  | { event_id: string; event_type: "submission.succeeded"; occurred_at: string; data: Schemas["SucceededData"] }
  | { event_id: string; event_type: "submission.failed"; occurred_at: string; data: Schemas["FailedData"] }
  | { event_id: string; event_type: "submission.cancelled"; occurred_at: string; data: Schemas["CancelledData"] }
  | { event_id: string; event_type: "result.completed"; occurred_at: string; data: Schemas["ResultCompletedData"] }
  | { event_id: string; event_type: "sweep.completed"; occurred_at: string; data: Schemas["SweepCompletedData"] }
  | { event_id: string; event_type: "webhook.test"; occurred_at: string; data: Schemas["TestData"] };

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signature's timestamp may be from now, in seconds (default 300: five minutes). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (default: Date.now()). */
  now?: number;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === lower) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

const encoder = new TextEncoder();

async function hmacHex(secret: string, message: Uint8Array<ArrayBuffer>): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Equal strings in time that depends only on their length. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a delivery and returns its event: the signature over the exact raw body (compared in constant
 * time) and a timestamp within `toleranceSeconds` of now. Throws `WebhookVerificationError` otherwise.
 * Pass the body exactly as received (a string or its bytes), never a re-serialised object.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeaderSource,
  secret: string,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const tolerance = options.toleranceSeconds ?? 300;
  const timestamp = header(headers, "X-Signature-Timestamp");
  const signature = header(headers, "X-Signature");
  if (!timestamp || !signature)
    throw new WebhookVerificationError("missing_headers", "X-Signature-Timestamp and X-Signature are required.");
  if (!/^\d{1,12}$/.test(timestamp))
    throw new WebhookVerificationError("bad_timestamp", "X-Signature-Timestamp is not a Unix time in seconds.");
  const age = Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp));
  if (age > tolerance)
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `The signature's timestamp is ${Math.round(age)} s from now (tolerance ${tolerance} s).`,
    );
  const body: Uint8Array =
    typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
  const signed = new Uint8Array(encoder.encode(`${timestamp}.`).length + body.length);
  signed.set(encoder.encode(`${timestamp}.`));
  signed.set(body, signed.length - body.length);
  const expected = `sha256=${await hmacHex(secret, signed)}`;
  if (!constantTimeEqual(expected, signature))
    throw new WebhookVerificationError("bad_signature", "The signature does not match the body and secret.");
  try {
    return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError("malformed_body", "The signed body is not JSON.");
  }
}
