// Sweeps behind the same doors as submissions (docs/api.md#scopes, #sweeps): a key, the submissions
// scopes, and only the owner's sweeps — another account's is 404 on every route and never in a list; its
// children never take another account's slots, and a code upload of another account is not found.
import { beforeAll, describe, expect, it } from "vitest";
import { call, createSubmission, expectError, FITNESS, json, newAccount, newKey, type TestAccount } from "../helpers/api";
import { childRuns, createSweep, sweepBody } from "../helpers/sweeps";

let owner: TestAccount;
let intruder: TestAccount;
let sweepId: string;

beforeAll(async () => {
  owner = await newAccount();
  intruder = await newAccount();
  sweepId = (await createSweep(owner.key)).id;
  await createSweep(intruder.key, sweepBody({ name: "the intruder's own", seeds: 1 }));
});

describe("a key is required", () => {
  it.each([
    ["GET", "/api/v1/sweeps"],
    ["POST", "/api/v1/sweeps"],
    ["GET", "/api/v1/sweeps/x"],
    ["POST", "/api/v1/sweeps/x/cancel"],
    ["DELETE", "/api/v1/sweeps/x"],
  ])("%s %s without a key is 401", async (method, path) => {
    const res = await call(path, { method, body: method === "POST" ? sweepBody() : undefined });
    await expectError(res, 401, "unauthorized");
  });
});

describe("the submissions scopes", () => {
  it("reading needs submissions:read, writing submissions:write", async () => {
    const readOnly = await newKey(owner, ["submissions:read"]);
    const writeOnly = await newKey(owner, ["submissions:write"]);
    expect((await call("/api/v1/sweeps", { key: readOnly })).status).toBe(200);
    expect((await call(`/api/v1/sweeps/${sweepId}`, { key: readOnly })).status).toBe(200);
    for (const [method, path, body] of [
      ["POST", "/api/v1/sweeps", sweepBody()],
      ["POST", `/api/v1/sweeps/${sweepId}/cancel`, undefined],
      ["DELETE", `/api/v1/sweeps/${sweepId}`, undefined],
    ] as const) {
      const err = await expectError(await call(path, { key: readOnly, method, body }), 403, "scope_required");
      expect(err.details).toEqual({ required_scope: "submissions:write" });
    }
    for (const path of ["/api/v1/sweeps", `/api/v1/sweeps/${sweepId}`]) {
      const err = await expectError(await call(path, { key: writeOnly }), 403, "scope_required");
      expect(err.details).toEqual({ required_scope: "submissions:read" });
    }
    const results = await newKey(owner, ["results:read", "results:write"]);
    await expectError(await call("/api/v1/sweeps", { key: results }), 403, "scope_required");
  });
});

describe("only the owner's sweeps", () => {
  it("another account's sweep is 404 on every route, and changes nothing", async () => {
    await expectError(await call(`/api/v1/sweeps/${sweepId}`, { key: intruder.key }), 404, "not_found");
    await expectError(await call(`/api/v1/sweeps/${sweepId}/cancel`, { key: intruder.key, method: "POST" }), 404, "not_found");
    await expectError(await call(`/api/v1/sweeps/${sweepId}`, { key: intruder.key, method: "DELETE" }), 404, "not_found");
    const sweep = await json(await call(`/api/v1/sweeps/${sweepId}`, { key: owner.key }));
    expect(sweep).toMatchObject({ status: "running", cancel_requested: false, children: 12 });
  });

  it("lists show the caller's sweeps only", async () => {
    const mine = (await json(await call("/api/v1/sweeps", { key: intruder.key }))).results;
    expect(mine.map((s: any) => s.name)).toEqual(["the intruder's own"]);
    expect(mine.map((s: any) => s.id)).not.toContain(sweepId);
  });

  it("a sweep's children wait for their own account's slots, not another's", async () => {
    const busy = await newAccount();
    const idle = await newAccount();
    for (let i = 0; i < 5; i++) await createSubmission(busy.key);
    const waiting = await createSweep(busy.key, sweepBody({ seeds: 1 }));
    expect((await childRuns(waiting.id)).every((r) => r.awaiting_slot === 1)).toBe(true);
    const free = await createSweep(idle.key, sweepBody({ seeds: 1 }));
    expect((await childRuns(free.id)).every((r) => r.awaiting_slot === 0)).toBe(true);
    expect((await childRuns(waiting.id)).every((r) => r.awaiting_slot === 1)).toBe(true);
  });

  it("another account's code upload is not found for the base", async () => {
    const upload = await json(await call("/api/v1/code-uploads", { key: owner.key, body: { content: FITNESS } }));
    const { fitness_func: _f, ...base } = sweepBody().base as Record<string, unknown>;
    const err = await expectError(
      await call("/api/v1/sweeps", { key: intruder.key, body: { ...sweepBody(), base: { ...base, fitness_func_id: upload.code_id } } }),
      422,
      "code_upload_not_found",
    );
    expect(err.details).toEqual({ field: "base.fitness_func_id" });
  });
});
