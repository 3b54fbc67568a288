// Admission gates at the interface's values: rate limits (60 per key, 120 per user, 60 per IP),
// slots, in-flight runs, daily quota, tier caps, credits, platform queue, idempotency — under races.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { accountGate } from "../../src/do/account-gate/client";
import type { AccountGate } from "../../src/do/account-gate/object";
import { claimRun, unclaimRun } from "../../src/domain/runs";
import { releaseEndedRuns } from "../../src/queues/scheduled";
import { getDb } from "../../src/storage/db";
import { platformCapStatement } from "../../src/storage/platform-queue";
import { getRun } from "../../src/storage/submissions";
import {
  admin,
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  getSubmission,
  importBody,
  job,
  json,
  newAccount,
  newKey,
  type TestAccount,
} from "../helpers/api";

const ALL = ["submissions:read", "submissions:write", "results:read", "results:write", "webhooks:read", "webhooks:write"];
const create = (key: string, body: Record<string, unknown> = job(), headers: Record<string, string> = {}) =>
  call("/api/v1/submissions/", { key, body, headers });
const count = async (accountId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM submissions WHERE account_id = ?").bind(accountId).first<{ n: number }>())!.n;
const usage = async (key: string) => (await json(await call("/api/v1/account", { key }))).usage;
const overrides = (a: TestAccount, o: Record<string, number | null>) =>
  admin(`/accounts/${a.id}`, { method: "PATCH", body: { overrides: o } });
const platformQueued = async () =>
  (await env.DB.prepare("SELECT queued FROM platform_queue WHERE id = 1").first<{ queued: number }>())!.queued;
const getRunRow = (runId: string) => getRun(getDb(env.DB), runId);
const gateOf = (accountId: string) => accountGate(env, accountId);
const ageHits = (accountId: string, ms: number) =>
  runInDurableObject(gateOf(accountId), async (_gate: AccountGate, state) => {
    state.storage.sql.exec("UPDATE hits SET at = at - ?", ms);
  });

describe("per-minute rate limit", () => {
  it("lets 60 requests of a key through and answers the 61st with 429, Retry-After and the bucket", async () => {
    const a = await newAccount();
    for (let i = 0; i < 60; i++) {
      const res = await call("/api/v1/submissions/", { key: a.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("X-RateLimit-Limit")).toBe("60");
      expect(res.headers.get("X-RateLimit-Remaining")).toBe(String(59 - i));
    }
    const res = await call("/api/v1/submissions/", { key: a.key });
    const err = await expectError(res, 429, "rate_limited");
    expect(err.details.bucket).toBe("key");
    expect(err.details.retry_after).toBeGreaterThanOrEqual(1);
    expect(err.details.retry_after).toBeLessThanOrEqual(60);
    expect(res.headers.get("Retry-After")).toBe(String(err.details.retry_after));
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(Number(res.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(Date.now() / 1000);
    expect(res.headers.get("Cache-Control")).toBe("no-store"); // docs/api.md#caching
  });

  it("caps the user at 120 across two keys", async () => {
    const a = await newAccount();
    const second = await newKey(a, ALL);
    for (let i = 0; i < 60; i++) expect((await call("/api/v1/submissions/", { key: a.key })).status).toBe(200);
    for (let i = 0; i < 60; i++) expect((await call("/api/v1/submissions/", { key: second })).status).toBe(200);
    const third = await newKey(a, ALL);
    const err = await expectError(await call("/api/v1/submissions/", { key: third }), 429, "rate_limited");
    expect(err.details.bucket).toBe("user");
  });

  it("limits requests without a valid credential per IP, counted before the 401", async () => {
    const ip = { "CF-Connecting-IP": `203.0.113.${Math.floor(Math.random() * 250)}` };
    for (let i = 0; i < 60; i++) {
      const res = await call("/api/v1/submissions/", { headers: ip, key: i % 2 ? "alk_bogus" : null });
      await expectError(res, 401, "unauthorized");
      expect(res.headers.get("X-RateLimit-Remaining")).toBe(String(59 - i));
    }
    const err = await expectError(await call("/api/v1/submissions/", { headers: ip }), 429, "rate_limited");
    expect(err.details.bucket).toBe("ip");
    // Another IP is unaffected.
    expect((await call("/api/v1/health", { headers: { "CF-Connecting-IP": "198.51.100.7" } })).status).toBe(200);
  });

  it("a key revoked after use is counted per IP, not against its own or its user's window", async () => {
    const a = await newAccount();
    const ip = { "CF-Connecting-IP": `192.0.2.${Math.floor(Math.random() * 250)}` };
    for (let i = 0; i < 3; i++) expect((await call("/api/v1/submissions/", { key: a.key, headers: ip })).status).toBe(200);
    expect((await admin(`/keys/${a.key.slice(0, 12)}/revoke`, { method: "POST" })).status).toBe(200);
    const denied = await call("/api/v1/submissions/", { key: a.key, headers: ip });
    await expectError(denied, 401, "unauthorized");
    expect(denied.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(denied.headers.get("X-RateLimit-Remaining")).toBe("59"); // the IP's window
    const hits = await runInDurableObject(gateOf(a.id), async (_gate: AccountGate, state) =>
      state.storage.sql
        .exec<{ bucket: string; n: number }>("SELECT bucket, count(*) AS n FROM hits GROUP BY bucket ORDER BY bucket")
        .toArray(),
    );
    expect(hits).toEqual([
      { bucket: `key:${a.key.slice(0, 12)}`, n: 3 },
      { bucket: "user", n: 3 },
    ]);
  });

  it("counts a write once, in its admission call or after its refusal; over the limit any write is 429 and takes nothing", async () => {
    const a = await newAccount();
    const remaining = (res: Response) => res.headers.get("X-RateLimit-Remaining");
    expect(remaining(await create(a.key))).toBe("59"); // admitted: counted with the admission
    const invalid = await create(a.key, job({ num_genes: "ten" }));
    await expectError(invalid.clone(), 400, "validation_failed");
    expect(remaining(invalid)).toBe("58"); // refused before the admission: counted after
    const unknown = await call("/api/v1/submissions/NOSUCHSUBMSN/reexecute", { key: a.key, method: "POST" });
    await expectError(unknown.clone(), 404, "not_found");
    expect(remaining(unknown)).toBe("57");
    await overrides(a, { daily_quota: 1 });
    const refused = await create(a.key);
    expect((await expectError(refused.clone(), 429, "capacity_exceeded")).details.reason).toBe("daily_quota");
    expect(remaining(refused)).toBe("56"); // refused by a later gate: counted once all the same
    await overrides(a, { daily_quota: null });
    for (let i = 0; i < 56; i++) expect((await call("/api/v1/submissions/", { key: a.key })).status).toBe(200);

    for (const res of [await create(a.key), await create(a.key, job({ num_genes: "ten" }))]) {
      const err = await expectError(res.clone(), 429, "rate_limited");
      expect(err.details.bucket).toBe("key");
      expect(res.headers.get("Retry-After")).toBe(String(err.details.retry_after));
      expect(remaining(res)).toBe("0");
      expect(res.headers.get("Cache-Control")).toBe("no-store"); // the 429 that replaced a refusal too
    }
    expect(await count(a.id)).toBe(1);
    expect(await usage(await newKey(a, ALL))).toMatchObject({ concurrent_submissions: 1, daily_quota_used: 1 });
  });

  it("an import passes the per-minute gate: counted once, and over the limit 429 with nothing written", async () => {
    const a = await newAccount();
    const imported = await call("/api/v1/imports", { key: a.key, body: importBody() });
    expect(imported.status).toBe(201);
    expect(imported.headers.get("X-RateLimit-Remaining")).toBe("59");
    for (let i = 0; i < 59; i++) expect((await call("/api/v1/submissions/", { key: a.key })).status).toBe(200);
    const refused = await call("/api/v1/imports", { key: a.key, body: importBody() });
    expect((await expectError(refused.clone(), 429, "rate_limited")).details.bucket).toBe("key");
    expect(refused.headers.get("Retry-After")).toMatch(/^\d+$/);
    expect(await count(a.id)).toBe(1);
    expect(await usage(await newKey(a, ALL))).toMatchObject({ concurrent_submissions: 0, daily_quota_used: 0 });
  });

  it("one call to the account's Durable Object per request: a write's count rides on its admission, GET /account's usage on its count", async () => {
    const a = await newAccount();
    const submission = await createSubmission(a.key);
    await completeRun((await getSubmission(a.key, submission)).latest_run.id);
    const calls: string[] = [];
    const getByName = env.ACCOUNT_GATE.getByName.bind(env.ACCOUNT_GATE);
    const spy = vi.spyOn(env.ACCOUNT_GATE, "getByName").mockImplementation((name: string) => {
      const stub = getByName(name);
      return new Proxy(stub, {
        get: (target, method) => {
          if (typeof method === "string" && ["rate", "admit", "rateWithUsage", "usage"].includes(method)) calls.push(method);
          return Reflect.get(target, method);
        },
      });
    });
    const callsOf = async (request: Promise<Response>) => {
      calls.length = 0;
      await request;
      return [...calls];
    };
    try {
      expect(await callsOf(create(a.key))).toEqual(["admit"]);
      expect(await callsOf(call(`/api/v1/submissions/${submission}/reexecute`, { key: a.key, method: "POST" }))).toEqual(["admit"]);
      expect(await callsOf(create(a.key, job({ num_genes: "ten" })))).toEqual(["rate"]); // refused before admission
      expect(await callsOf(call(`/api/v1/submissions/${submission}`, { key: a.key }))).toEqual(["rate"]);
      expect(await callsOf(call("/api/v1/account", { key: a.key }))).toEqual(["rateWithUsage"]);
    } finally {
      spy.mockRestore();
    }
  });

  it("rolls: requests older than 60 seconds stop counting", async () => {
    const a = await newAccount();
    for (let i = 0; i < 60; i++) await call("/api/v1/submissions/", { key: a.key });
    await expectError(await call("/api/v1/submissions/", { key: a.key }), 429, "rate_limited");
    await ageHits(a.id, 61_000);
    const res = await call("/api/v1/submissions/", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("59");
  });

  it("puts the X-RateLimit headers on every kind of response", async () => {
    const a = await newAccount();
    const id = await createSubmission(a.key);
    const responses = [
      await call("/api/v1/health"),
      await call(`/api/v1/submissions/${id}`, { key: a.key }),
      await create(a.key),
      await call("/api/v1/submissions/", { key: a.key, rawBody: "{", headers: { "Content-Type": "application/json" } }),
      await call("/api/v1/submissions/"),
      await call("/api/v1/submissions/nope12345678", { key: a.key }),
      await call("/api/v1/submissions/", { key: a.key, method: "PUT" }),
      await create(a.key, job({ fitness_func_entry: undefined })),
      await create(a.key, job({ num_generations: 1_000_000 })),
      await call("/api/v1/nope", { key: a.key }),
    ];
    // A 500: a row the Worker cannot read (corrupted behind its back) gives internal_error, no stack trace.
    const broken = await createSubmission(a.key);
    await env.DB.prepare("UPDATE submissions SET parameters = '{not json' WHERE id = ?").bind(broken).run();
    const failed = await call(`/api/v1/submissions/${broken}`, { key: a.key });
    const err = await expectError(failed.clone(), 500, "internal_error");
    expect(JSON.stringify(err)).not.toMatch(/at |\.ts|SyntaxError/);
    responses.push(failed);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 202, 400, 401, 404, 405, 422, 403, 404, 500]);
    for (const res of responses) {
      expect(res.headers.get("X-RateLimit-Limit")).toMatch(/^\d+$/);
      expect(res.headers.get("X-RateLimit-Remaining")).toMatch(/^\d+$/);
      expect(res.headers.get("X-RateLimit-Reset")).toMatch(/^\d+$/);
    }
  });
});

describe("write gates", () => {
  it("concurrent submissions: the 6th live submission is 429 capacity_exceeded; finishing one frees its slot", async () => {
    const a = await newAccount("free");
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await createSubmission(a.key));
    const err = await expectError(await create(a.key), 429, "capacity_exceeded");
    expect(err.details).toMatchObject({ reason: "concurrent_submissions", limit: 5 });
    expect(await count(a.id)).toBe(5);
    await completeRun((await getSubmission(a.key, ids[0]!)).latest_run.id);
    expect((await create(a.key)).status).toBe(202);
  });

  it("in-flight API runs: its own error when only that cap is lower", async () => {
    const a = await newAccount();
    await overrides(a, { inflight_api_runs: 2 });
    await createSubmission(a.key);
    await createSubmission(a.key);
    const err = await expectError(await create(a.key), 429, "too_many_active_api_requests");
    expect(err.details).toMatchObject({ limit: 2, in_flight: 2 });
  });

  it("daily quota: rolling, and deleting does not refund", async () => {
    const a = await newAccount();
    await overrides(a, { daily_quota: 2 });
    const first = await createSubmission(a.key);
    await createSubmission(a.key);
    expect((await call(`/api/v1/submissions/${first}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    const refused = await create(a.key);
    const err = await expectError(refused.clone(), 429, "capacity_exceeded");
    expect(err.details).toMatchObject({ reason: "daily_quota", limit: 2, used: 2 });
    // When the next unit comes back, as Retry-After (whole seconds): about a day from now.
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(86_300);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    // A day later the units have rolled out of the window.
    await runInDurableObject(gateOf(a.id), async (_g: AccountGate, state) => {
      state.storage.sql.exec("UPDATE quota SET at = at - ?", 24 * 3600 * 1000 + 1000);
    });
    expect((await create(a.key)).status).toBe(202);
  });

  it("tier caps: API runs use Premium caps on every plan; per-account overrides raise or lower them", async () => {
    for (const plan of ["free", "trial", "premium"] as const) {
      const a = await newAccount(plan);
      expect((await create(a.key, job({ num_generations: 10_000, num_genes: 1000 }))).status).toBe(202);
      const err = await expectError(await create(a.key, job({ num_generations: 10_001 })), 403, "tier_limit_exceeded");
      expect(err.details).toMatchObject({ parameter: "num_generations", limit: 10_000, requested: 10_001 });
      await expectError(await create(a.key, job({ num_genes: 1001 })), 403, "tier_limit_exceeded");
    }
    const raised = await newAccount("free");
    await overrides(raised, { max_num_generations: 20_000, max_num_genes: 5 });
    expect((await create(raised.key, job({ num_generations: 20_000 }))).status).toBe(202);
    const err = await expectError(await create(raised.key, job({ num_genes: 6 })), 403, "tier_limit_exceeded");
    expect(err.details).toMatchObject({ parameter: "num_genes", limit: 5 });
  });

  it("parallel_processing: every PyGAD form accepted up to the workers in force; 403 past them, per-account override", async () => {
    const a = await newAccount("free"); // API runs: Premium's 4 workers
    for (const form of [null, 0, 1, 4, ["process", 4], ["thread", 3], ["process", 0]]) {
      const res = await create(a.key, job({ parallel_processing: form }));
      expect(res.status, JSON.stringify(form)).toBe(202);
      const { id } = await json(res);
      expect((await getSubmission(a.key, id)).parameters.parallel_processing).toEqual(form);
      await call(`/api/v1/submissions/${id}`, { key: a.key, method: "DELETE" });
    }
    for (const form of [5, ["process", 5], ["thread", 16]]) {
      const err = await expectError(await create(a.key, job({ parallel_processing: form })), 403, "tier_limit_exceeded");
      expect(err.details).toEqual({ parameter: "parallel_processing", limit: 4, requested: Array.isArray(form) ? form[1] : form });
    }
    for (const bad of [
      -1,
      2.5,
      "4",
      ["gpu", 2],
      [2],
      ["process"],
      ["process", 2, 3],
      { workers: 2 },
      17,
      ["thread", 17],
      ["process", 1024],
    ]) {
      const err = await expectError(await create(a.key, job({ parallel_processing: bad })), 400, "validation_failed");
      expect(err.details.fields[0].field, JSON.stringify(bad)).toMatch(/^parallel_processing(\.1)?$/);
    }
    await overrides(a, { max_parallel_workers: 1 });
    expect((await json(await call("/api/v1/account", { key: a.key }))).limits.max_parallel_workers).toBe(1);
    expect((await create(a.key, job({ parallel_processing: ["thread", 1] }))).status).toBe(202);
    const err = await expectError(await create(a.key, job({ parallel_processing: ["process", 2] })), 403, "tier_limit_exceeded");
    expect(err.details).toEqual({ parameter: "parallel_processing", limit: 1, requested: 2 });
    await overrides(a, { max_parallel_workers: 8 });
    expect((await create(a.key, job({ parallel_processing: ["process", 8] }))).status).toBe(202);
    // An override past what a run's sandbox holds still stops at 16 workers (400, whatever the plan).
    await overrides(a, { max_parallel_workers: 100 });
    expect((await create(a.key, job({ parallel_processing: ["thread", 16] }))).status).toBe(202);
    await expectError(await create(a.key, job({ parallel_processing: 17 })), 400, "validation_failed");
  });

  it("credits: 402 below the negative-balance cap, allowed at it; the cap is overridable", async () => {
    const a = await newAccount("premium", 0);
    await admin(`/accounts/${a.id}/credits`, { body: { amount: -1 } });
    expect((await create(a.key)).status).toBe(202);
    await admin(`/accounts/${a.id}/credits`, { body: { amount: -0.01 } });
    const err = await expectError(await create(a.key), 402, "insufficient_credits");
    expect(err.details).toMatchObject({ balance: -1.01, negative_balance_cap: 1 });
    await overrides(a, { negative_balance_cap: 5 });
    expect((await create(a.key)).status).toBe(202);
  });

  it("platform queue: 429 platform_at_capacity when the queue holds PLATFORM_QUEUE_CAP runs", async () => {
    const a = await newAccount();
    const queued = await platformQueued();
    await env.DB.prepare("UPDATE platform_queue SET queued = 1000 WHERE id = 1").run(); // the default cap
    try {
      const err = await expectError(await create(a.key), 429, "capacity_exceeded");
      expect(err.details).toEqual({ reason: "platform_at_capacity" });
      expect(await count(a.id)).toBe(0);
      expect((await usage(a.key)).concurrent_submissions).toBe(0);
      expect((await usage(a.key)).daily_quota_used).toBe(0);
    } finally {
      await env.DB.prepare("UPDATE platform_queue SET queued = queued - 1000 + ? WHERE id = 1").bind(queued).run();
    }
    expect((await create(a.key)).status).toBe(202);
  });

  it("platform queue: a reexecute at the cap is 429 and its whole batch is undone (the submission keeps its run)", async () => {
    const a = await newAccount();
    const id = await createSubmission(a.key);
    await completeRun((await getSubmission(a.key, id)).latest_run.id);
    const before = await getSubmission(a.key, id);
    const slots = (await usage(a.key)).concurrent_submissions;
    const queued = await platformQueued();
    await env.DB.prepare("UPDATE platform_queue SET queued = 1000 WHERE id = 1").run();
    try {
      const res = await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, method: "POST" });
      expect((await expectError(res, 429, "capacity_exceeded")).details).toEqual({ reason: "platform_at_capacity" });
    } finally {
      await env.DB.prepare("UPDATE platform_queue SET queued = queued - 1000 + ? WHERE id = 1").bind(queued).run();
    }
    const after = await getSubmission(a.key, id);
    expect(after).toMatchObject({ status: before.status, run_count: before.run_count, latest_run: { id: before.latest_run.id } });
    expect((await usage(a.key)).concurrent_submissions).toBe(slots);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE submission_id = ?").bind(id).first("n")).toBe(1);
  });

  it("the cap in force follows PLATFORM_QUEUE_CAP, and an unchanged cap is not written again", async () => {
    const a = await newAccount();
    await env.DB.prepare("UPDATE platform_queue SET cap = 7 WHERE id = 1").run();
    const [changed] = (await getDb(env.DB).batch([platformCapStatement(getDb(env.DB), 1000)])) as unknown as D1Result[];
    expect(changed!.meta.changes).toBe(1);
    const [same] = (await getDb(env.DB).batch([platformCapStatement(getDb(env.DB), 1000)])) as unknown as D1Result[];
    expect(same!.meta.changes).toBe(0);
    await env.DB.prepare("UPDATE platform_queue SET cap = 7 WHERE id = 1").run();
    expect((await create(a.key)).status).toBe(202); // the write states the configured 1000 again
    expect(await env.DB.prepare("SELECT cap FROM platform_queue WHERE id = 1").first("cap")).toBe(1000);
  });

  it("the platform count follows runs into and out of 'queued' exactly, without scanning runs", async () => {
    const a = await newAccount();
    const before = await platformQueued();
    const [first, second, third] = [await createSubmission(a.key), await createSubmission(a.key), await createSubmission(a.key)];
    expect(await platformQueued()).toBe(before + 3);
    const runOf = async (id: string) => (await getSubmission(a.key, id)).latest_run.id as string;
    await claimRun(env, await runOf(first)); // a worker took it
    await claimRun(env, await runOf(first)); // a duplicate message changes nothing
    expect(await platformQueued()).toBe(before + 2);
    expect((await call(`/api/v1/submissions/${second}/cancel`, { key: a.key, method: "POST" })).status).toBe(202);
    expect((await call(`/api/v1/submissions/${third}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    expect(await platformQueued()).toBe(before);
    expect(await claimRun(env, await runOf(first))).toBeNull(); // already running
    await unclaimRun(env, (await getRunRow(await runOf(first)))!); // its start failed: back in the queue
    expect(await platformQueued()).toBe(before + 1);
    const counted = await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE status = 'queued'").first<{ n: number }>();
    expect(await platformQueued()).toBe(counted!.n);
  });

  it("the first failing gate answers when several fail, in the interface's order", async () => {
    const a = await newAccount("premium", 0);
    await overrides(a, { concurrent_submissions: 1, inflight_api_runs: 1, daily_quota: 1 });
    await createSubmission(a.key);
    await admin(`/accounts/${a.id}/credits`, { body: { amount: -50 } });
    const tooBig = job({ num_generations: 50_000 });
    // concurrent, in-flight, quota, caps and credits all fail: concurrent answers.
    expect((await expectError(await create(a.key, tooBig), 429, "capacity_exceeded")).details.reason).toBe("concurrent_submissions");
    await overrides(a, { concurrent_submissions: 10 });
    await expectError(await create(a.key, tooBig), 429, "too_many_active_api_requests");
    await overrides(a, { inflight_api_runs: 10 });
    expect((await expectError(await create(a.key, tooBig), 429, "capacity_exceeded")).details.reason).toBe("daily_quota");
    await overrides(a, { daily_quota: 10 });
    await expectError(await create(a.key, tooBig), 403, "tier_limit_exceeded");
    await expectError(await create(a.key), 402, "insufficient_credits");
  });

  it("a rejected write leaves no row, no slot, no quota unit and no idempotency record", async () => {
    const a = await newAccount();
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    send.mockClear();
    const key = crypto.randomUUID();
    await expectError(await create(a.key, job({ num_genes: 5000 }), { "Idempotency-Key": key }), 403, "tier_limit_exceeded");
    expect(await count(a.id)).toBe(0);
    expect(send).not.toHaveBeenCalled();
    expect(await usage(a.key)).toMatchObject({ concurrent_submissions: 0, inflight_api_runs: 0, daily_quota_used: 0 });
    // Not stored under its key: the same key with a good body is evaluated afresh (no 422 mismatch).
    const ok = await create(a.key, job(), { "Idempotency-Key": key });
    expect(ok.status).toBe(202);
    expect(ok.headers.get("Idempotent-Replayed")).toBeNull();
  });
});

describe("exact under races", () => {
  it("50 concurrent creates against 5 slots admit exactly 5 and create exactly 5 rows", async () => {
    const a = await newAccount("free");
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    send.mockClear();
    const responses = await Promise.all(Array.from({ length: 50 }, () => create(a.key)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(45);
    expect(await count(a.id)).toBe(5);
    expect(send).toHaveBeenCalledTimes(5);
    expect((await usage(a.key)).concurrent_submissions).toBe(5);
  });

  it("20 concurrent requests with one Idempotency-Key create exactly one submission; all get its id or 409", async () => {
    const a = await newAccount();
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const responses = await Promise.all(Array.from({ length: 20 }, () => create(a.key, job(), headers)));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<any>));
    const ids = new Set(bodies.filter((_, i) => responses[i]!.status === 202).map((b) => b.id));
    expect(ids.size).toBe(1);
    for (const [i, res] of responses.entries()) {
      if (res.status !== 202) {
        expect(res.status).toBe(409);
        expect(bodies[i].error.code).toBe("idempotency_in_progress");
      }
    }
    expect(await count(a.id)).toBe(1);
    // After the first finished: a replay, with the original body.
    const replay = await create(a.key, job(), headers);
    expect(replay.status).toBe(202);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(replay)).id).toBe([...ids][0]);
    // The same key with another body is 422.
    await expectError(await create(a.key, job({ name: "other" }), headers), 422, "idempotency_key_mismatch");
    expect(await count(a.id)).toBe(1);
  });

  it("idempotency records expire after 24 hours", async () => {
    const a = await newAccount();
    const headers = { "Idempotency-Key": "same-key" };
    const first = await json(await create(a.key, job(), headers));
    await runInDurableObject(gateOf(a.id), async (_g: AccountGate, state) => {
      state.storage.sql.exec("UPDATE idempotency SET created_at = created_at - ?", 24 * 3600 * 1000 + 1);
    });
    await completeRun((await getSubmission(a.key, first.id)).latest_run.id);
    const second = await create(a.key, job(), headers);
    expect(second.status).toBe(202);
    expect(second.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(second)).id).not.toBe(first.id);
  });
});

describe("slots are released exactly once on every terminal path", () => {
  it.each([
    ["succeeded", async (_key: string, _id: string, runId: string) => expect((await completeRun(runId)).status).toBe(204)],
    [
      "failed",
      async (_key: string, _id: string, runId: string) => expect((await completeRun(runId, { status: "failed" })).status).toBe(204),
    ],
    [
      "cancelled",
      async (key: string, id: string) => expect((await call(`/api/v1/submissions/${id}/cancel`, { key, method: "POST" })).status).toBe(202),
    ],
    [
      "deleted",
      async (key: string, id: string) => expect((await call(`/api/v1/submissions/${id}`, { key, method: "DELETE" })).status).toBe(204),
    ],
  ])("%s", async (_name, end) => {
    const a = await newAccount();
    const id = await createSubmission(a.key);
    await createSubmission(a.key);
    expect((await usage(a.key)).concurrent_submissions).toBe(2);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    await end(a.key, id, runId);
    expect((await usage(a.key)).concurrent_submissions).toBe(1);
    // A second end (a duplicate report) releases nothing more.
    await completeRun(runId);
    expect((await usage(a.key)).concurrent_submissions).toBe(1);
  });

  it("the cron frees the slot of a run that ended without its hook (the Worker stopped in between)", async () => {
    const a = await newAccount();
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    await env.DB.prepare("UPDATE runs SET status = 'failed', finished_at = ? WHERE id = ?").bind(new Date().toISOString(), runId).run();
    expect((await usage(a.key)).concurrent_submissions).toBe(1);
    expect(await releaseEndedRuns(env)).toBeGreaterThanOrEqual(1);
    expect((await usage(a.key)).concurrent_submissions).toBe(0);
    expect(await releaseEndedRuns(env)).toBe(0);
  });

  it("the reconciliation alarm frees a slot whose run no longer lives", async () => {
    const a = await newAccount();
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    // The run ends without its hook (as if the Worker died between the two steps).
    await env.DB.prepare("UPDATE runs SET status = 'failed' WHERE id = ?").bind(runId).run();
    await runInDurableObject(gateOf(a.id), async (gate: AccountGate, state) => {
      state.storage.sql.exec("UPDATE slots SET taken_at = taken_at - 120000");
      await gate.alarm();
    });
    expect((await usage(a.key)).concurrent_submissions).toBe(0);
  });
});

describe("GET /api/v1/account", () => {
  it("shows plan, balances, limits in force and usage to any valid key", async () => {
    const a = await newAccount("trial", 12.5);
    const readOnly = await newKey(a, ["results:read"]);
    await createSubmission(a.key);
    const res = await call("/api/v1/account", { key: readOnly });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({
      id: a.id,
      plan: "trial",
      balances: { free: 0, paid: 12.5, total: 12.5 },
      limits: {
        concurrent_submissions: 5,
        inflight_api_runs: 5,
        daily_quota: 200,
        max_num_generations: 10_000,
        rate_limit_per_key: 60,
        rate_limit_per_user: 120,
      },
      usage: { concurrent_submissions: 1, inflight_api_runs: 1, daily_quota_used: 1 },
    });
    expect(body.usage.rate_window).toMatchObject({ limit: 60 });
    expect(body.usage.rate_window.remaining).toBeLessThan(60);
  });

  it("shows the rate window after counting this request, as its X-RateLimit headers do; over the limit it is 429", async () => {
    const a = await newAccount();
    const seen: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call("/api/v1/account", { key: a.key });
      expect(res.status).toBe(200);
      const window = (await json(res)).usage.rate_window;
      expect(String(window.remaining)).toBe(res.headers.get("X-RateLimit-Remaining"));
      expect(String(window.reset)).toBe(res.headers.get("X-RateLimit-Reset"));
      seen.push(window.remaining);
    }
    expect(seen).toEqual([59, 58]);
    for (let i = 0; i < 58; i++) await call("/api/v1/submissions/", { key: a.key });
    const res = await call("/api/v1/account", { key: a.key });
    const err = await expectError(res, 429, "rate_limited");
    expect(err.details.bucket).toBe("key");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(res.headers.get("Retry-After")).toBe(String(err.details.retry_after));
  });
});
