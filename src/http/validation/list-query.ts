// Query parameters shared by every list: page_size, cursor, date ranges; repeated parameter = last wins.
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../storage/pagination";

/** A query parameter whose last occurrence wins when it is repeated. */
export const last = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (Array.isArray(v) ? v[v.length - 1] : v), schema);

export const pageSize = last(
  z
    .string()
    .regex(/^\d+$/, "must be a positive integer")
    .transform(Number)
    .refine((n) => n >= 1, "must be at least 1")
    .transform((n) => Math.min(n, MAX_PAGE_SIZE))
    .default(DEFAULT_PAGE_SIZE),
);

export const cursor = last(z.string().min(1).max(1000)).optional();

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
export function linkFor(url: string, cursorValue: string | null): string | null {
  if (cursorValue === null) return null;
  const params = new URL(url).searchParams;
  const rest = new URLSearchParams();
  for (const key of new Set(params.keys())) {
    if (key !== "cursor") rest.set(key, params.getAll(key).at(-1)!);
  }
  const tail = rest.toString();
  return `?cursor=${encodeURIComponent(cursorValue)}${tail ? `&${tail}` : ""}`;
}
