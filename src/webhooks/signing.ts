// Delivery signatures (docs/webhooks.md#signature): `sha256=` + hex HMAC-SHA256 of `<timestamp>.<raw body>`,
// keyed by the webhook's secret. A fresh timestamp and signature for every attempt; the body never changes.
import { hmacSha256Hex, toHex } from "../lib/crypto";

export const USER_AGENT = "Allele-Webhook/1.0";

/** A new signing secret: 32 random bytes as 64 hexadecimal characters. */
export function newSecret(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

export async function signature(secret: string, timestamp: number, body: string): Promise<string> {
  return `sha256=${await hmacSha256Hex(secret, `${timestamp}.${body}`)}`;
}

/** The request headers of one delivery attempt. */
export async function deliveryHeaders(opts: {
  secret: string;
  body: string;
  eventId: string;
  eventType: string;
  now: number;
}): Promise<Record<string, string>> {
  const timestamp = Math.floor(opts.now / 1000);
  return {
    "Content-Type": "application/json",
    "User-Agent": USER_AGENT,
    "X-Event-Id": opts.eventId,
    "X-Event-Type": opts.eventType,
    "X-Signature-Timestamp": String(timestamp),
    "X-Signature": await signature(opts.secret, timestamp, opts.body),
  };
}
