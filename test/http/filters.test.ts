// List filters of submissions and results (docs/api.md#lists): each filter, unknown values and
// parameters (400), and "a repeated parameter: the last one wins".
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

const READ = ["submissions:read", "results:read"];

type Row = Record<string, any> & { id: string };
const ids = (body: { results: Row[] }) => body.results.map((r) => r.id).sort();
const sorted = (list: string[]) => [...list].sort();

describe("submissions filters", () => {
  let acc: TestAccount;
  let rows: Row[];
  const byName: Record<string, string> = {};
  const LONG = "Long name ".repeat(10); // 100 characters
  const NAMES = ["Alpha one", "alpha TWO", "100% done", "a_b", "axb", "beta", "ALPHABET", "naïve ünïcode", LONG];

  const list = async (query: string) => {
    const res = await call(`/api/v1/submissions/?page_size=100&${query}`, { key: acc.key });
    expect(res.status, await res.clone().text()).toBe(200);
    return json(res);
  };
  const matching = (pred: (r: Row) => boolean) => sorted(rows.filter(pred).map((r) => r.id));

  beforeAll(async () => {
    acc = await newRoomyAccount();
    for (const name of NAMES) {
      byName[name] = await createSubmission(acc.key, { name });
      await new Promise((r) => setTimeout(r, 3)); // distinct created_at values
    }
    const run = async (name: string) =>
      (await env.DB.prepare("SELECT latest_run_id FROM submissions WHERE id = ?").bind(byName[name]).first<string>("latest_run_id"))!;
    expect((await call(`/api/v1/submissions/${byName.beta}/cancel`, { key: acc.key, method: "POST" })).status).toBe(202);
    expect((await completeRun(await run("a_b"))).status).toBe(204);
    expect((await completeRun(await run("axb"), { status: "failed" })).status).toBe(204);
    // A website submission of the same account (the website writes these rows directly).
    const at = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO submissions (id, account_id, name, name_lower, source, submission_type, status, parameters, latest_run_id, run_count, credits_charged_micro, created_at, updated_at) VALUES (?, ?, 'from the web', 'from the web', 'web', 'new', 'succeeded', '{}', 'webRun000001', 1, 0, ?, ?)",
    )
      .bind(`w${acc.id.slice(0, 11)}`, acc.id, at, at)
      .run();
    rows = (
      await env.DB.prepare("SELECT id, name, status, source, created_at FROM submissions WHERE account_id = ?").bind(acc.id).all<Row>()
    ).results;
    expect(rows).toHaveLength(NAMES.length + 1);
  });

  it.each([
    ["status=queued", (r: Row) => r.status === "queued"],
    ["status=cancelled", (r: Row) => r.status === "cancelled"],
    ["status=succeeded,failed", (r: Row) => ["succeeded", "failed"].includes(r.status)],
    ["status=queued,%20cancelled", (r: Row) => ["queued", "cancelled"].includes(r.status)],
    ["status=running", () => false],
    ["source=api", (r: Row) => r.source === "api"],
    ["source=web", (r: Row) => r.source === "web"],
    ["name_contains=ALPHA", (r: Row) => r.name.toLowerCase().includes("alpha")],
    ["name_contains=alpha%20t", (r: Row) => r.name === "alpha TWO"],
    ["name_contains=%25", (r: Row) => r.name === "100% done"],
    ["name_contains=_", (r: Row) => r.name === "a_b"],
    ["name_contains=a_b", (r: Row) => r.name === "a_b"],
    ["name_contains=%5C", () => false],
    ["name_contains=%C3%AFve", (r: Row) => r.name === "naïve ünïcode"],
    ["name_contains=%C3%9CN%C3%8F (non-ASCII case folding)", (r: Row) => r.name === "naïve ünïcode"],
    ["name_contains=", () => true],
    ["name_contains=zzz", () => false],
    ["status=succeeded&source=web", (r: Row) => r.status === "succeeded" && r.source === "web"],
  ])("%s", async (query, pred) => {
    expect(ids(await list(query.split(" ")[0]!))).toEqual(matching(pred));
  });

  it("created_after and created_before are inclusive", async () => {
    const pivot = rows.find((r) => r.id === byName.a_b)!.created_at as string;
    const after = await list(`created_after=${encodeURIComponent(pivot)}`);
    expect(ids(after)).toEqual(matching((r) => r.created_at >= pivot));
    expect(ids(after)).toContain(byName.a_b);
    const before = await list(`created_before=${encodeURIComponent(pivot)}`);
    expect(ids(before)).toEqual(matching((r) => r.created_at <= pivot));
    expect(ids(before)).toContain(byName.a_b);
    const exactly = await list(`created_after=${encodeURIComponent(pivot)}&created_before=${encodeURIComponent(pivot)}`);
    expect(ids(exactly)).toEqual(matching((r) => r.created_at === pivot));
  });

  it("accepts dates, offsets and times without a zone (UTC)", async () => {
    expect(ids(await list("created_after=2000-01-01"))).toEqual(matching(() => true));
    expect(ids(await list("created_before=2000-01-01"))).toEqual([]);
    expect(ids(await list("created_after=2999-01-01T00:00:00"))).toEqual([]);
    const pivot = rows.find((r) => r.id === byName.axb)!.created_at as string;
    // The same instant written with a +02:00 offset.
    const d = new Date(Date.parse(pivot) + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    expect(ids(await list(`created_after=${encodeURIComponent(d)}`))).toEqual(matching((r) => r.created_at >= pivot));
  });

  it.each([
    ["status=bogus", "status"],
    ["status=queued,bogus", "status"],
    ["status=", "status"],
    ["status=QUEUED", "status"],
    ["source=cli", "source"],
    ["source=", "source"],
    ["ordering=size", "ordering"],
    ["ordering=-status", "ordering"],
    ["ordering=best_solution_fitness", "ordering"],
    ["created_after=yesterday", "created_after"],
    ["created_after=2026-13-45", "created_after"],
    ["created_before=1700000000", "created_before"],
    [`name_contains=${"x".repeat(101)}`, "name_contains"],
    ["foo=1", "foo"],
    ["submission_id=abc", "submission_id"],
    ["ordering[]=name", "ordering[]"],
    ["page=2", "page"],
  ])("%s is 400", async (query, field) => {
    const err = await expectError(await call(`/api/v1/submissions/?${query}`, { key: await newKey(acc, READ) }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("name_contains of exactly 100 characters is allowed, and matches", async () => {
    expect((await list(`name_contains=${"x".repeat(100)}`)).results).toEqual([]);
    expect(ids(await list(`name_contains=${encodeURIComponent(LONG.toUpperCase())}`))).toEqual([byName[LONG]]);
  });

  it("a repeated parameter: the last one wins", async () => {
    expect(ids(await list("status=bogus&status=cancelled"))).toEqual(matching((r) => r.status === "cancelled"));
    await expectError(await call("/api/v1/submissions/?status=cancelled&status=bogus", { key: acc.key }), 400, "validation_failed");
    const named = await list("ordering=-name&ordering=name");
    const names = named.results.map((r: Row) => r.name);
    expect(names).toEqual([...names].sort());
    expect(ids(await list("name_contains=beta&name_contains=axb"))).toEqual([byName.axb]);
  });
});

describe("results filters", () => {
  let acc: TestAccount;
  let rows: Row[];
  let twice: string; // a submission with two results (reexecuted)
  let shared: string;
  const FITNESS = [1, 2, 2, 3, null];

  const list = async (query: string) => {
    const res = await call(`/api/v1/results/?page_size=100&${query}`, { key: acc.key });
    expect(res.status, await res.clone().text()).toBe(200);
    return json(res);
  };
  const matching = (pred: (r: Row) => boolean) => sorted(rows.filter(pred).map((r) => r.id));

  beforeAll(async () => {
    acc = await newRoomyAccount();
    for (const fitness of FITNESS) {
      const id = await createSubmission(acc.key);
      const runId = (await env.DB.prepare("SELECT latest_run_id FROM submissions WHERE id = ?").bind(id).first<string>("latest_run_id"))!;
      expect((await completeRun(runId, { fitness })).status).toBe(204);
      twice = id;
      await new Promise((r) => setTimeout(r, 3));
    }
    expect((await call(`/api/v1/submissions/${twice}/reexecute`, { key: acc.key, method: "POST" })).status).toBe(202);
    const runId = (await env.DB.prepare("SELECT latest_run_id FROM submissions WHERE id = ?").bind(twice).first<string>("latest_run_id"))!;
    expect((await completeRun(runId, { fitness: 2.5 })).status).toBe(204);
    rows = (
      await env.DB.prepare("SELECT id, submission_id, is_shared, best_solution_fitness, created_at FROM results WHERE account_id = ?")
        .bind(acc.id)
        .all<Row>()
    ).results;
    expect(rows).toHaveLength(6);
    shared = rows.find((r) => r.best_solution_fitness === 3)!.id;
    expect((await call(`/api/v1/results/${shared}`, { key: acc.key, method: "PATCH", body: { is_shared: true } })).status).toBe(200);
    rows = (
      await env.DB.prepare("SELECT id, submission_id, is_shared, best_solution_fitness, created_at FROM results WHERE account_id = ?")
        .bind(acc.id)
        .all<Row>()
    ).results;
  });

  const f = (r: Row) => r.best_solution_fitness as number | null;

  it.each([
    ["is_shared=true", (r: Row) => r.is_shared === 1],
    ["is_shared=false", (r: Row) => r.is_shared === 0],
    ["min_fitness=2", (r: Row) => f(r) !== null && f(r)! >= 2],
    ["max_fitness=2", (r: Row) => f(r) !== null && f(r)! <= 2],
    ["min_fitness=2&max_fitness=2", (r: Row) => f(r) === 2],
    ["min_fitness=-1e1&max_fitness=1.0", (r: Row) => f(r) === 1],
    ["min_fitness=.5", (r: Row) => f(r) !== null && f(r)! >= 0.5],
    ["min_fitness=3.5", () => false],
    ["max_fitness=-100", () => false],
    ["min_fitness=2&is_shared=false", (r: Row) => f(r) !== null && f(r)! >= 2 && r.is_shared === 0],
    ["submission_id=AAAAAAAAAAAA", () => false],
  ])("%s", async (query, pred) => {
    expect(ids(await list(query))).toEqual(matching(pred));
  });

  it("submission_id lists every result of that submission", async () => {
    const body = await list(`submission_id=${twice}`);
    expect(body.results).toHaveLength(2);
    expect(ids(body)).toEqual(matching((r) => r.submission_id === twice));
    for (const r of body.results) expect(r.submission_id).toBe(twice);
  });

  it("created_after / created_before are inclusive", async () => {
    const pivot = rows.find((r) => f(r) === 3)!.created_at as string;
    expect(ids(await list(`created_after=${encodeURIComponent(pivot)}`))).toEqual(matching((r) => r.created_at >= pivot));
    expect(ids(await list(`created_before=${encodeURIComponent(pivot)}`))).toEqual(matching((r) => r.created_at <= pivot));
    expect(ids(await list(`created_after=${encodeURIComponent(pivot)}&created_before=${encodeURIComponent(pivot)}`))).toEqual(
      matching((r) => r.created_at === pivot),
    );
  });

  it("ordering by fitness, both ways, with the null fitness lowest", async () => {
    const asc = (await list("ordering=best_solution_fitness")).results.map((r: Row) => r.best_solution_fitness);
    expect(asc).toEqual([null, 1, 2, 2, 2.5, 3]);
    const desc = (await list("ordering=-best_solution_fitness")).results.map((r: Row) => r.best_solution_fitness);
    expect(desc).toEqual([3, 2.5, 2, 2, 1, null]);
    const oldest = (await list("ordering=created_at")).results.map((r: Row) => r.id);
    expect(oldest).toEqual(
      [...rows]
        .sort((p, q) => (p.created_at < q.created_at ? -1 : p.created_at > q.created_at ? 1 : p.id < q.id ? -1 : 1))
        .map((r) => r.id),
    );
  });

  it.each([
    ["is_shared=yes", "is_shared"],
    ["is_shared=1", "is_shared"],
    ["is_shared=TRUE", "is_shared"],
    ["min_fitness=abc", "min_fitness"],
    ["min_fitness=Infinity", "min_fitness"],
    ["max_fitness=NaN", "max_fitness"],
    ["max_fitness=1e999", "max_fitness"],
    ["max_fitness=", "max_fitness"],
    ["ordering=name", "ordering"],
    ["ordering=fitness", "ordering"],
    ["created_before=not-a-date", "created_before"],
    ["status=queued", "status"],
    ["foo=bar", "foo"],
  ])("%s is 400", async (query, field) => {
    const err = await expectError(await call(`/api/v1/results/?${query}`, { key: await newKey(acc, READ) }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("a repeated parameter: the last one wins", async () => {
    expect(ids(await list("is_shared=maybe&is_shared=true"))).toEqual([shared]);
    expect(ids(await list("min_fitness=100&min_fitness=3"))).toEqual(matching((r) => f(r) !== null && f(r)! >= 3));
    expect(ids(await list(`submission_id=AAAAAAAAAAAA&submission_id=${twice}`))).toEqual(matching((r) => r.submission_id === twice));
  });
});
