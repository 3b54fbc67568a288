// What every list shares, whoever shows it (the API's lists, the dashboard's): the query parameters
// (page_size, cursor, date ranges; a repeated parameter: the last wins) and the signed cursors of its pages.

import { z } from "zod";
import { runTokenSecret } from "../config";
import type { Bindings } from "../env";
import { validationError } from "../errors";
import { constantTimeEqual, hmacSha256Hex } from "../lib/crypto";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../storage/pagination";

/** The ordering of a list that names none: newest first. */
export const DEFAULT_ORDERING = "-created_at";

/** A query parameter whose last occurrence wins when it is repeated. */
export const last = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (Array.isArray(v) ? v[v.length - 1] : v), schema);

const size = last(
  z
    .string()
    .regex(/^\d+$/, "must be a positive integer")
    .transform(Number)
    .refine((n) => n >= 1, "must be at least 1")
    .transform((n) => Math.min(n, MAX_PAGE_SIZE)),
).optional();

export const cursor = last(z.string().min(1).max(1000)).optional();

/**
 * The paging parameters of every list: `page_size` and its alias `limit` (what the Vilvik SDK sends;
 * same bounds; both given and different is 400), and `cursor`. Spread into a list's query object and
 * wrap that object with `paged`.
 */
export const paging = { page_size: size, limit: size, cursor };

export function paged<T extends { page_size?: number; limit?: number }>(schema: z.ZodType<T>) {
  return schema
    .superRefine((q, ctx) => {
      if (q.page_size !== undefined && q.limit !== undefined && q.page_size !== q.limit) {
        ctx.addIssue({
          code: "custom",
          path: ["limit"],
          message: "is an alias of page_size: send one of them, or both with the same value",
        });
      }
    })
    .transform(({ limit, ...q }) => ({ ...q, page_size: q.page_size ?? limit ?? DEFAULT_PAGE_SIZE }));
}

/** ISO 8601 date or date-time (UTC when no offset is given), normalised to the stored form. */
export const isoDate = last(
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/, "must be an ISO 8601 date-time")
    .transform((s, ctx) => {
      const withZone = /T.*(Z|[+-]\d{2}:?\d{2})$/.test(s) || !s.includes("T") ? s : `${s}Z`;
      const ms = Date.parse(withZone.includes("T") ? withZone : `${withZone}T00:00:00Z`);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: "custom", message: "is not a valid date-time" });
        return z.NEVER;
      }
      return new Date(ms).toISOString();
    }),
).optional();

export const finiteNumber = last(
  z
    .string()
    .regex(/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/, "must be a number")
    .transform(Number)
    .refine(Number.isFinite, "must be a finite number"),
).optional();

export const bool = last(z.enum(["true", "false"]).transform((v) => v === "true")).optional();

/** `?cursor=<c>&…` carrying the request's other parameters (each once). */
function linkFor(url: string, cursorValue: string | null): string | null {
  if (cursorValue === null) return null;
  const params = new URL(url).searchParams;
  const rest = new URLSearchParams();
  for (const key of new Set(params.keys())) {
    if (key !== "cursor") rest.set(key, params.getAll(key).at(-1)!);
  }
  const tail = rest.toString();
  return `?cursor=${encodeURIComponent(cursorValue)}${tail ? `&${tail}` : ""}`;
}

// Cursors are signed (HMAC-SHA256 keyed by RUN_TOKEN_SECRET, bound to the account), so a forged or
// altered cursor is 400 like a malformed one (docs/api.md#lists).
const SIGNATURE_HEX = 32;

async function signature(env: Bindings, accountId: string, payload: string): Promise<string> {
  return (await hmacSha256Hex(runTokenSecret(env), `cursor:${accountId}:${payload}`)).slice(0, SIGNATURE_HEX);
}

/** The storage-level cursor inside a signed one; 400 validation_failed when it was not issued to this account. */
export async function openCursor(env: Bindings, accountId: string, signed: string | undefined): Promise<string | undefined> {
  if (signed === undefined) return undefined;
  const dot = signed.lastIndexOf(".");
  const payload = signed.slice(0, dot);
  if (dot <= 0 || !constantTimeEqual(signed.slice(dot + 1), await signature(env, accountId, payload))) {
    throw validationError([{ field: "cursor", message: "is not a cursor this list issued" }]);
  }
  return payload;
}

/** The `next` / `previous` links of a page of the account's list at `url`, with signed cursors. */
export async function pageLinks(env: Bindings, accountId: string, url: string, page: { next: string | null; previous: string | null }) {
  const seal = async (cursor: string | null) => (cursor === null ? null : `${cursor}.${await signature(env, accountId, cursor)}`);
  return { next: linkFor(url, await seal(page.next)), previous: linkFor(url, await seal(page.previous)) };
}

/** A page of rows with its signed `next` / `previous` links (what every list answers, in its own form). */
export interface LinkedPage<T> {
  rows: T[];
  next: string | null;
  previous: string | null;
}

/** `page` with its storage-level cursors sealed into links of the list at `url`. */
export async function linked<T>(env: Bindings, accountId: string, url: string, page: LinkedPage<T>): Promise<LinkedPage<T>> {
  return { rows: page.rows, ...(await pageLinks(env, accountId, url, page)) };
}
