// Keyset pagination over (sort key, id) with opaque cursors (docs/api.md#lists).
import { and, asc, desc, eq, gt, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { validationError } from "../errors";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface Ordering {
  /** The sort expression (a column, or an expression such as a null-safe fitness). */
  key: SQLiteColumn | SQL;
  id: SQLiteColumn;
  descending: boolean;
  /** The sort value of a row, as stored in a cursor. */
  valueOf: (row: Record<string, unknown>) => string | number;
}

interface CursorData {
  o: string; // list and ordering, e.g. "submissions:-created_at"
  d: "n" | "p"; // direction: the page after (next) or before (previous) the key
  k: string | number;
  i: string;
}

const encode = (data: CursorData) => btoa(JSON.stringify(data)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");

function decode(cursor: string, orderingName: string): CursorData {
  const invalid = validationError([{ field: "cursor", message: "is not a cursor this list issued" }]);
  let data: unknown;
  try {
    data = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    throw invalid;
  }
  // JSON `null`, a number or a string decode too: check it is an object before reading its fields.
  if (!data || typeof data !== "object") throw invalid;
  const d = data as Partial<CursorData>;
  const validKey = typeof d.k === "string" || (typeof d.k === "number" && Number.isFinite(d.k));
  if ((d.d !== "n" && d.d !== "p") || !validKey || typeof d.i !== "string" || typeof d.o !== "string") {
    throw invalid;
  }
  if (d.o !== orderingName) {
    throw validationError([{ field: "cursor", message: "was issued for another list or ordering" }]);
  }
  return d as CursorData;
}

export interface PageRequest {
  orderingName: string;
  ordering: Ordering;
  cursor?: string;
  pageSize: number;
}

export interface PagePlan {
  where?: SQL;
  orderBy: SQL[];
  limit: number;
  backwards: boolean;
  cursorGiven: boolean;
}

/** The keyset condition, order and limit for one page; run the query, then call `finishPage`. */
export function planPage(req: PageRequest): PagePlan {
  const { ordering } = req;
  const data = req.cursor ? decode(req.cursor, req.orderingName) : undefined;
  const backwards = data?.d === "p";
  // Walking backwards flips the direction of the scan; the page is reversed afterwards.
  const descending = ordering.descending !== backwards;
  const cmp = descending ? lt : gt;
  const key = ordering.key as SQL;
  const where = data ? or(cmp(key, data.k), and(eq(key, data.k), cmp(ordering.id, data.i))) : undefined;
  const dir = descending ? desc : asc;
  return { where, orderBy: [dir(key), dir(ordering.id)], limit: req.pageSize + 1, backwards, cursorGiven: !!data };
}

export interface Page<T> {
  rows: T[];
  next: string | null;
  previous: string | null;
}

export function finishPage<T extends Record<string, unknown>>(req: PageRequest, plan: PagePlan, fetched: T[]): Page<T> {
  const hasMore = fetched.length > req.pageSize;
  const rows = fetched.slice(0, req.pageSize);
  if (plan.backwards) rows.reverse();
  const cursorAt = (row: T | undefined, d: "n" | "p") =>
    row ? encode({ o: req.orderingName, d, k: req.ordering.valueOf(row), i: String(row.id) }) : null;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (plan.backwards) {
    return { rows, previous: hasMore ? cursorAt(first, "p") : null, next: cursorAt(last, "n") };
  }
  return { rows, next: hasMore ? cursorAt(last, "n") : null, previous: plan.cursorGiven ? cursorAt(first, "p") : null };
}
