// Cursor pagination (docs/api.md#lists): every ordering of both lists walked forward and back with no
// duplicate and no gap, in the right order; page_size rules; links; bad cursors.
import { beforeAll, describe, expect, it } from "vitest";
import {
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  failedFields,
  json,
  newKey,
  newRoomyAccount,
  type TestAccount,
} from "../helpers/api";

type Row = Record<string, any> & { id: string };
const ALL = ["submissions:read", "submissions:write", "results:read", "results:write"];

/** Compares like SQLite's BINARY collation for ASCII text, and numbers numerically. */
const cmp = (x: string | number, y: string | number) => (x < y ? -1 : x > y ? 1 : 0);

/** The expected order: the sort key, then the id, both in the ordering's direction. */
function expectedOrder(rows: Row[], ordering: string, keyOf: (r: Row) => string | number): string[] {
  const desc = ordering.startsWith("-");
  return [...rows]
    .sort((p, q) => {
      const c = cmp(keyOf(p), keyOf(q)) || cmp(p.id, q.id);
      return desc ? -c : c;
    })
    .map((r) => r.id);
}

interface Walk {
  forward: string[][];
  backward: string[][];
}

/** Follows `next` to the end, then `previous` back to the start, checking the links as it goes. */
async function walk(key: string, base: string, query: Record<string, string>): Promise<Walk> {
  const params = new URLSearchParams(query);
  const checkLink = (link: string) => {
    expect(link.startsWith("?cursor=")).toBe(true);
    const carried = new URLSearchParams(link.slice(1));
    expect(carried.get("cursor")).toBeTruthy();
    for (const [k, v] of params) expect(carried.get(k), `link carries ${k}`).toBe(v);
    expect(carried.getAll("cursor")).toHaveLength(1);
  };
  const get = async (suffix: string) => {
    const res = await call(`${base}${suffix}`, { key });
    expect(res.status, await res.clone().text()).toBe(200);
    return json(res);
  };

  const forward: string[][] = [];
  let page = await get(`?${params}`);
  expect(page.previous).toBeNull();
  forward.push(page.results.map((r: Row) => r.id));
  while (page.next) {
    checkLink(page.next);
    page = await get(page.next);
    forward.push(page.results.map((r: Row) => r.id));
    expect(forward.length).toBeLessThan(50);
  }
  const backward: string[][] = [forward.at(-1)!];
  while (page.previous) {
    checkLink(page.previous);
    page = await get(page.previous);
    backward.push(page.results.map((r: Row) => r.id));
    expect(backward.length).toBeLessThan(50);
  }
  return { forward, backward };
}

function expectWalk(w: Walk, expected: string[], pageSize: number) {
  const flat = w.forward.flat();
  expect(new Set(flat).size).toBe(flat.length); // no duplicate
  expect(flat).toEqual(expected); // no gap, right order
  expect(w.forward.length).toBe(Math.ceil(expected.length / pageSize));
  for (const p of w.forward.slice(0, -1)) expect(p).toHaveLength(pageSize);
  // Walking back gives the same pages in reverse, and ends on the first page.
  expect(w.backward).toEqual([...w.forward].reverse());
}

describe("submissions: 45 rows under every ordering", () => {
  let acc: TestAccount;
  let rows: Row[];
  const NAMES = ["alpha", "Beta", "gamma", "alpha", "Beta", "delta", "alpha"];

  beforeAll(async () => {
    acc = await newRoomyAccount();
    // In parallel groups, so that several rows share a created_at and the id has to break ties.
    for (let g = 0; g < 3; g++) {
      await Promise.all(Array.from({ length: 15 }, (_, j) => createSubmission(acc.key, { name: NAMES[(g * 15 + j) % NAMES.length] })));
    }
    const all = await env.DB.prepare("SELECT id, latest_run_id FROM submissions WHERE account_id = ? ORDER BY id")
      .bind(acc.id)
      .all<{ id: string; latest_run_id: string }>();
    expect(all.results).toHaveLength(45);
    // Statuses: queued, succeeded, failed (reported by the worker) and a few cancelled (by the API).
    for (const [i, s] of all.results.entries()) {
      if (i % 4 === 1) expect((await completeRun(s.latest_run_id)).status).toBe(204);
      else if (i % 4 === 2) expect((await completeRun(s.latest_run_id, { status: "failed" })).status).toBe(204);
      else if (i % 12 === 3) expect((await call(`/api/v1/submissions/${s.id}/cancel`, { key: acc.key, method: "POST" })).status).toBe(202);
    }
    // Ties for certain, whatever the machine's speed: every three rows (by id) share the first one's created_at.
    await env.DB.batch(
      all.results.flatMap((s, k) =>
        k % 3 === 0
          ? []
          : [
              env.DB.prepare("UPDATE submissions SET created_at = (SELECT created_at FROM submissions WHERE id = ?) WHERE id = ?").bind(
                all.results[k - (k % 3)]!.id,
                s.id,
              ),
            ],
      ),
    );
    rows = (await env.DB.prepare("SELECT id, name, status, created_at FROM submissions WHERE account_id = ?").bind(acc.id).all<Row>())
      .results;
    const createdAt = rows.map((r) => r.created_at);
    expect(new Set(createdAt).size).toBeLessThan(45); // ties exist
  });

  it.each([
    ["created_at", (r: Row) => r.created_at],
    ["-created_at", (r: Row) => r.created_at],
    ["name", (r: Row) => r.name],
    ["-name", (r: Row) => r.name],
    ["status", (r: Row) => r.status],
  ] as const)("ordering=%s", async (ordering, keyOf) => {
    const key = await newKey(acc, ALL); // a fresh key per walk keeps each within the per-key rate window
    const w = await walk(key, "/api/v1/submissions/", { ordering, page_size: "10" });
    expectWalk(w, expectedOrder(rows, ordering, keyOf), 10);
  });

  it("the default ordering is -created_at and the default page_size 20", async () => {
    const body = await json(await call("/api/v1/submissions/", { key: acc.key }));
    expect(body.results).toHaveLength(20);
    expect(body.results.map((r: Row) => r.id)).toEqual(expectedOrder(rows, "-created_at", (r) => r.created_at).slice(0, 20));
    const carried = new URLSearchParams(body.next.slice(1));
    expect([...carried.keys()]).toEqual(["cursor"]);
  });

  it("walks a filtered list; the links carry the filters", async () => {
    const key = await newKey(acc, ALL);
    const w = await walk(key, "/api/v1/submissions/", { status: "cancelled,failed", name_contains: "A", ordering: "name", page_size: "4" });
    const expected = expectedOrder(
      rows.filter((r) => ["cancelled", "failed"].includes(r.status) && r.name.toLowerCase().includes("a")),
      "name",
      (r) => r.name,
    );
    expectWalk(w, expected, 4);
  });

  it("a repeated parameter appears once in the links, with its last value", async () => {
    const body = await json(await call("/api/v1/submissions/?page_size=3&ordering=name&page_size=5", { key: acc.key }));
    expect(body.results).toHaveLength(5);
    const carried = new URLSearchParams(body.next.slice(1));
    expect(carried.getAll("page_size")).toEqual(["5"]);
    expect(carried.get("ordering")).toBe("name");
  });
});

describe("results: every ordering, duplicate and null fitness values", () => {
  let acc: TestAccount;
  let rows: Row[];
  const FITNESS = [1.5, -2, 0, 1.5, null, 3.25, -2, 1e-9];
  const LOWEST = -1.7976931348623157e308; // a null fitness sorts as the lowest

  beforeAll(async () => {
    acc = await newRoomyAccount();
    const ids = await Promise.all(Array.from({ length: 25 }, (_, i) => createSubmission(acc.key, { name: `r${i % 3}` })));
    const runs = await env.DB.prepare("SELECT id, latest_run_id FROM submissions WHERE account_id = ? ORDER BY id")
      .bind(acc.id)
      .all<{ id: string; latest_run_id: string }>();
    expect(runs.results.map((r) => r.id).sort()).toEqual([...ids].sort());
    await Promise.all(
      runs.results.map((r, i) =>
        completeRun(r.latest_run_id, { fitness: FITNESS[i % FITNESS.length] }).then((res) => expect(res.status).toBe(204)),
      ),
    );
    rows = (await env.DB.prepare("SELECT id, created_at, best_solution_fitness FROM results WHERE account_id = ?").bind(acc.id).all<Row>())
      .results;
    expect(rows).toHaveLength(25);
  });

  it.each([
    ["created_at", (r: Row) => r.created_at],
    ["-created_at", (r: Row) => r.created_at],
    ["best_solution_fitness", (r: Row) => r.best_solution_fitness ?? LOWEST],
    ["-best_solution_fitness", (r: Row) => r.best_solution_fitness ?? LOWEST],
  ] as const)("ordering=%s", async (ordering, keyOf) => {
    const key = await newKey(acc, ALL);
    const w = await walk(key, "/api/v1/results/", { ordering, page_size: "10" });
    expectWalk(w, expectedOrder(rows, ordering, keyOf), 10);
  });

  it("the default is newest first", async () => {
    const body = await json(await call("/api/v1/results/?page_size=25", { key: acc.key }));
    expect(body.results.map((r: Row) => r.id)).toEqual(expectedOrder(rows, "-created_at", (r) => r.created_at));
    expect(body.next).toBeNull();
  });

  it("walks with a fitness filter and page_size 3", async () => {
    const key = await newKey(acc, ALL);
    const w = await walk(key, "/api/v1/results/", { min_fitness: "0", ordering: "-best_solution_fitness", page_size: "3" });
    const expected = expectedOrder(
      rows.filter((r) => r.best_solution_fitness !== null && r.best_solution_fitness >= 0),
      "-best_solution_fitness",
      (r) => r.best_solution_fitness,
    );
    expectWalk(w, expected, 3);
  });
});

describe("page_size", () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await newRoomyAccount();
    // 105 rows straight into D1: enough to see the clamp at 100.
    const now = Date.now();
    const stmts = Array.from({ length: 105 }, (_, i) => {
      const id = `pg${acc.id.slice(0, 4)}${String(i).padStart(6, "0")}`;
      const at = new Date(now - i * 1000).toISOString();
      return env.DB.prepare(
        "INSERT INTO submissions (id, account_id, name, name_lower, source, submission_type, status, parameters, latest_run_id, run_count, credits_charged_micro, created_at, updated_at) VALUES (?, ?, ?, ?, 'api', 'new', 'succeeded', '{}', ?, 1, 0, ?, ?)",
      ).bind(id, acc.id, `n${i}`, `n${i}`, `run${String(i).padStart(9, "0")}`, at, at);
    });
    await env.DB.batch(stmts);
  });

  it.each([
    [undefined, 20],
    ["1", 1],
    ["100", 100],
    ["101", 100],
    ["1000", 100],
    ["99999999999999999999999", 100],
  ])("page_size=%s gives %i rows", async (size, n) => {
    const body = await json(await call(`/api/v1/submissions/${size ? `?page_size=${size}` : ""}`, { key: acc.key }));
    expect(body.results).toHaveLength(n);
    expect(body.next).not.toBeNull();
  });

  it.each(["0", "-1", "1.5", "abc", "", "1e2", " 5", "0x10"])("page_size=%j is 400", async (size) => {
    const err = await expectError(
      await call(`/api/v1/submissions/?page_size=${encodeURIComponent(size)}`, { key: acc.key }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toEqual(["page_size"]);
    const results = await expectError(
      await call(`/api/v1/results/?page_size=${encodeURIComponent(size)}`, { key: acc.key }),
      400,
      "validation_failed",
    );
    expect(failedFields(results)).toEqual(["page_size"]);
  });

  it("the clamped size is what the links carry forward correctly (no gap between pages of 100)", async () => {
    const first = await json(await call("/api/v1/submissions/?page_size=500", { key: acc.key }));
    const second = await json(await call(`/api/v1/submissions/${first.next}`, { key: acc.key }));
    expect(second.results).toHaveLength(5);
    const ids = [...first.results, ...second.results].map((r: Row) => r.id);
    expect(new Set(ids).size).toBe(105);
  });
});

describe("bad cursors are 400 validation_failed", () => {
  let acc: TestAccount;
  let nameCursor: string;
  let resultCursor: string;
  const b64 = (v: unknown) =>
    btoa(typeof v === "string" ? v : JSON.stringify(v))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replaceAll("=", "");

  beforeAll(async () => {
    acc = await newRoomyAccount();
    await Promise.all([1, 2, 3].map((i) => createSubmission(acc.key, { name: `c${i}` })));
    const page = await json(await call("/api/v1/submissions/?ordering=name&page_size=1", { key: acc.key }));
    nameCursor = new URLSearchParams(page.next.slice(1)).get("cursor")!;
    const ids = (
      await env.DB.prepare("SELECT latest_run_id FROM submissions WHERE account_id = ?").bind(acc.id).all<{ latest_run_id: string }>()
    ).results;
    for (const r of ids) await completeRun(r.latest_run_id);
    const results = await json(await call("/api/v1/results/?ordering=created_at&page_size=1", { key: acc.key }));
    resultCursor = new URLSearchParams(results.next.slice(1)).get("cursor")!;
  });

  it("the cursors issued work", async () => {
    expect((await call(`/api/v1/submissions/?ordering=name&cursor=${nameCursor}`, { key: acc.key })).status).toBe(200);
    expect((await call(`/api/v1/results/?ordering=created_at&cursor=${resultCursor}`, { key: acc.key })).status).toBe(200);
  });

  const forged: [string, () => string][] = [
    ["not base64", () => "!!!***"],
    ["base64 of text", () => b64("hello")],
    ["base64 of a JSON array", () => b64([1, 2])],
    ["base64 of JSON null", () => b64("null")],
    ["a wrong direction", () => b64({ o: "name", d: "x", k: "c1", i: "AAAAAAAAAAAA" })],
    ["a key that is an object", () => b64({ o: "name", d: "n", k: { $gt: "" }, i: "AAAAAAAAAAAA" })],
    ["a key that is null", () => b64({ o: "name", d: "n", k: null, i: "AAAAAAAAAAAA" })],
    ["an id that is a number", () => b64({ o: "name", d: "n", k: "c1", i: 5 })],
    ["no ordering", () => b64({ d: "n", k: "c1", i: "AAAAAAAAAAAA" })],
    ["a truncated cursor", () => nameCursor.slice(0, Math.floor(nameCursor.length / 2))],
    ["a cursor over 1000 characters", () => "A".repeat(1001)],
  ];

  it.each(forged)("%s", async (_label, make) => {
    const err = await expectError(
      await call(`/api/v1/submissions/?ordering=name&cursor=${encodeURIComponent(make())}`, { key: acc.key }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toEqual(["cursor"]);
  });

  it.each(["created_at", "-created_at", "-name", "status"])("a name cursor used with ordering=%s", async (ordering) => {
    const err = await expectError(
      await call(`/api/v1/submissions/?ordering=${ordering}&cursor=${nameCursor}`, { key: acc.key }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toEqual(["cursor"]);
  });

  it("a name cursor used without an ordering (the default -created_at)", async () => {
    await expectError(await call(`/api/v1/submissions/?cursor=${nameCursor}`, { key: acc.key }), 400, "validation_failed");
  });

  it("a results cursor used on the submissions list, and the other way round", async () => {
    await expectError(
      await call(`/api/v1/submissions/?ordering=created_at&cursor=${resultCursor}`, { key: acc.key }),
      400,
      "validation_failed",
    );
    await expectError(await call(`/api/v1/results/?ordering=name&cursor=${nameCursor}`, { key: acc.key }), 400, "validation_failed");
    await expectError(
      await call(`/api/v1/results/?ordering=-best_solution_fitness&cursor=${resultCursor}`, { key: acc.key }),
      400,
      "validation_failed",
    );
  });
});
