// Identifiers and timestamps (docs/api.md#identifiers).
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` random base62 characters, without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** Submission, result, webhook, run and account ids: 12 base62 characters. */
export const newId = (): string => randomBase62(12);

/** ISO 8601 UTC with milliseconds and `Z`. */
export const nowIso = (): string => new Date().toISOString();

/** ISO 8601 with microseconds and a `+00:00` offset, as webhook `occurred_at` wants. */
export function isoMicros(date: Date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$1000+00:00");
}
