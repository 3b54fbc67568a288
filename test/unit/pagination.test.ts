// Keyset pagination (src/storage/pagination.ts, docs/api.md#lists) under plain Node: the cursor a page
// hands out is read back into the keyset condition after its last (or before its first) row; a cursor
// that is malformed or belongs to another list or ordering is refused as `cursor`. The HMAC signature
// the API wraps around these cursors (openCursor in src/http/validation/list-query.ts) refuses a cursor
// altered in any way; it compares with workerd's crypto.subtle.timingSafeEqual, which Node lacks, so it
// is tested in workerd (test/http/cursors.test.ts), as are whole walks over D1 (test/http/pagination.test.ts).
import { SQLiteSyncDialect, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { finishPage, type Ordering, type PageRequest, planPage } from "../../src/storage/pagination";

const rows = sqliteTable("rows", { id: text("id").primaryKey(), name: text("name").notNull() });
const dialect = new SQLiteSyncDialect();
const sql = (part: Parameters<SQLiteSyncDialect["sqlToQuery"]>[0]) => dialect.sqlToQuery(part);

type Row = { id: string; name: string };
const byName = (descending: boolean): Ordering => ({
  key: rows.name,
  id: rows.id,
  descending,
  valueOf: (row) => String(row.name),
});
const request = (descending: boolean, cursor?: string, pageSize = 2): PageRequest => ({
  orderingName: `rows:${descending ? "-" : ""}name`,
  ordering: byName(descending),
  cursor,
  pageSize,
});

const b64 = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
const decoded = (cursor: string) => JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));

/** The field errors of a refused cursor. */
function refusal(req: PageRequest): { field: string; message: string }[] {
  try {
    planPage(req);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("validation_failed");
    return (err as ApiError).details.fields as { field: string; message: string }[];
  }
  throw new Error("the cursor was accepted");
}

describe("the first page", () => {
  it("has no condition, orders by the key then the id in the ordering's direction, and fetches one row more", () => {
    const plan = planPage(request(true, undefined, 20));
    expect(plan.where).toBeUndefined();
    expect(plan.orderBy.map((o) => sql(o).sql)).toEqual(['"rows"."name" desc', '"rows"."id" desc']);
    expect(plan).toMatchObject({ limit: 21, backwards: false, cursorGiven: false });
    expect(planPage(request(false)).orderBy.map((o) => sql(o).sql)).toEqual(['"rows"."name" asc', '"rows"."id" asc']);
  });

  it("links to the next page only when a row more was fetched, and never to a previous one", () => {
    const req = request(false);
    const plan = planPage(req);
    const full = finishPage<Row>(req, plan, [
      { id: "a1", name: "alpha" },
      { id: "b1", name: "beta" },
      { id: "c1", name: "gamma" },
    ]);
    expect(full.rows.map((r) => r.id)).toEqual(["a1", "b1"]); // the extra row is not shown
    expect(full.previous).toBeNull();
    expect(decoded(full.next!)).toEqual({ o: "rows:name", d: "n", k: "beta", i: "b1" });
    const last = finishPage<Row>(req, plan, [{ id: "a1", name: "alpha" }]);
    expect(last).toEqual({ rows: [{ id: "a1", name: "alpha" }], next: null, previous: null });
  });
});

describe("a cursor read back", () => {
  it("continues after the last row shown: key beyond it, or the same key and an id beyond it", () => {
    const req = request(true);
    const page = finishPage<Row>(req, planPage(req), [
      { id: "x", name: "zeta" },
      { id: "q", name: "tau" },
      { id: "p", name: "tau" },
    ]);
    const next = planPage(request(true, page.next!));
    expect(sql(next.where!)).toMatchObject({
      sql: '("rows"."name" < ? or ("rows"."name" = ? and "rows"."id" < ?))',
      params: ["tau", "tau", "q"],
    });
    expect(next).toMatchObject({ limit: 3, backwards: false, cursorGiven: true });
    expect(next.orderBy.map((o) => sql(o).sql)).toEqual(['"rows"."name" desc', '"rows"."id" desc']);
  });

  it("walks back before the first row shown by scanning the other way, and shows the page in order", () => {
    const req = request(false, b64(JSON.stringify({ o: "rows:name", d: "n", k: "beta", i: "b1" })));
    const plan = planPage(req);
    // A page after a cursor links back to itself from its first row.
    const page = finishPage<Row>(req, plan, [
      { id: "c1", name: "gamma" },
      { id: "d1", name: "delta" },
      { id: "e1", name: "eta" },
    ]);
    expect(decoded(page.previous!)).toEqual({ o: "rows:name", d: "p", k: "gamma", i: "c1" });

    const back = planPage(request(false, page.previous!));
    expect(back.backwards).toBe(true);
    expect(sql(back.where!)).toMatchObject({
      sql: '("rows"."name" < ? or ("rows"."name" = ? and "rows"."id" < ?))',
      params: ["gamma", "gamma", "c1"],
    });
    expect(back.orderBy.map((o) => sql(o).sql)).toEqual(['"rows"."name" desc', '"rows"."id" desc']);
    // Rows come nearest first; the page shows them in the list's order, linking both ways.
    const shown = finishPage<Row>(request(false, page.previous!), back, [
      { id: "b1", name: "beta" },
      { id: "a1", name: "alpha" },
    ]);
    expect(shown.rows.map((r) => r.id)).toEqual(["a1", "b1"]);
    expect(shown.previous).toBeNull(); // nothing before it
    expect(decoded(shown.next!)).toEqual({ o: "rows:name", d: "n", k: "beta", i: "b1" });
  });

  it("keeps a numeric sort key a number", () => {
    const ordering: Ordering = { key: rows.name, id: rows.id, descending: false, valueOf: (row) => Number(row.score) };
    const req: PageRequest = { orderingName: "rows:score", ordering, pageSize: 1 };
    const page = finishPage(req, planPage(req), [
      { id: "a", score: -0.25 },
      { id: "b", score: 3 },
    ]);
    expect(decoded(page.next!)).toEqual({ o: "rows:score", d: "n", k: -0.25, i: "a" });
    expect(sql(planPage({ ...req, cursor: page.next! }).where!).params).toEqual([-0.25, -0.25, "a"]);
  });
});

describe("a cursor refused", () => {
  it.each([
    ["not base64 JSON", "%%%"],
    ["base64 of text that is not JSON", b64("hello")],
    ["JSON null", b64("null")],
    ["a JSON number", b64("42")],
    ["a JSON string", b64('"rows:name"')],
    ["an unknown direction", b64(JSON.stringify({ o: "rows:name", d: "x", k: "a", i: "1" }))],
    ["a key that is neither text nor a number", b64(JSON.stringify({ o: "rows:name", d: "n", k: null, i: "1" }))],
    ["a key that is an object", b64(JSON.stringify({ o: "rows:name", d: "n", k: { $gt: "" }, i: "1" }))],
    ["no id", b64(JSON.stringify({ o: "rows:name", d: "n", k: "a" }))],
    ["a numeric id", b64(JSON.stringify({ o: "rows:name", d: "n", k: "a", i: 1 }))],
    ["no list and ordering", b64(JSON.stringify({ d: "n", k: "a", i: "1" }))],
  ])("%s", (_label, cursor) => {
    expect(refusal(request(false, cursor))).toEqual([{ field: "cursor", message: "is not a cursor this list issued" }]);
  });

  it("issued for another ordering or list", () => {
    const req = request(false);
    const next = finishPage<Row>(req, planPage(req), [
      { id: "a1", name: "alpha" },
      { id: "b1", name: "beta" },
      { id: "c1", name: "gamma" },
    ]).next!;
    expect(planPage(request(false, next)).cursorGiven).toBe(true);
    expect(refusal(request(true, next))).toEqual([{ field: "cursor", message: "was issued for another list or ordering" }]);
    expect(refusal({ ...request(false, next), orderingName: "results:name" })).toEqual([
      { field: "cursor", message: "was issued for another list or ordering" },
    ]);
  });

  it("cut short or padded, as a copied link can be", () => {
    const req = request(false);
    const next = finishPage<Row>(req, planPage(req), [
      { id: "a1", name: "alpha" },
      { id: "b1", name: "beta" },
      { id: "c1", name: "gamma" },
    ]).next!;
    for (const cursor of [next.slice(0, -4), next.slice(4), `${next}x`, `x${next}`]) {
      expect(refusal(request(false, cursor)), cursor).toEqual([{ field: "cursor", message: "is not a cursor this list issued" }]);
    }
  });
});
