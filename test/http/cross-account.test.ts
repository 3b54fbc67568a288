// Each caller sees and changes only its own records: another account's id is 404 on every id route
// (never 403: existence is not revealed), and lists never show another account's rows.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  failedFields,
  getSubmission,
  json,
  newResult,
  newRoomyAccount,
  type TestAccount,
} from "../helpers/api";

let owner: TestAccount;
let intruder: TestAccount;
let queued: string; // owner's queued submission
let finished: string; // owner's finished submission (reexecutable)
let result: string; // owner's result (continuable)
let resultSubmission: string;

beforeAll(async () => {
  owner = await newRoomyAccount();
  intruder = await newRoomyAccount();
  queued = await createSubmission(owner.key, { name: "owner queued" });
  finished = await createSubmission(owner.key, { name: "owner finished" });
  expect((await completeRun((await getSubmission(owner.key, finished)).latest_run.id, { status: "failed" })).status).toBe(204);
  ({ resultId: result, submissionId: resultSubmission } = await newResult(owner.key, { name: "owner result" }));
  // The intruder has rows of its own, so its lists are not trivially empty.
  await newResult(intruder.key, { name: "intruder result" });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("another account's id is 404 on every id route", () => {
  // Run in order (vitest runs a file's tests sequentially).
  const routes: [string, string, () => string, unknown?][] = [
    ["GET", "submission", () => `/api/v1/submissions/${queued}`],
    ["POST", "cancel", () => `/api/v1/submissions/${queued}/cancel`],
    ["POST", "reexecute", () => `/api/v1/submissions/${finished}/reexecute`],
    ["POST", "reexecute with a body", () => `/api/v1/submissions/${finished}/reexecute`, { num_generations: 3 }],
    ["GET", "result", () => `/api/v1/results/${result}`],
    ["PATCH", "result", () => `/api/v1/results/${result}`, { name: "pwned", is_shared: true }],
    ["GET", "file", () => `/api/v1/results/${result}/files/result.json`],
    ["GET", "population file", () => `/api/v1/results/${result}/files/population.json`],
    ["POST", "continue", () => `/api/v1/results/${result}/continue`],
    ["POST", "continue with a body", () => `/api/v1/results/${result}/continue`, { num_generations: 3 }],
    // Destructive ones last, so that a leak in one of them cannot hide a leak in another.
    ["DELETE", "result", () => `/api/v1/results/${result}`],
    ["DELETE", "submission", () => `/api/v1/submissions/${queued}`],
  ];

  it.each(routes)("%s %s", async (method, _label, path, body) => {
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const err = await expectError(await call(path(), { key: intruder.key, method, body }), 404, "not_found");
    // The same answer as for an id that does not exist at all.
    const unknown = await call(path().replace(/[0-9A-Za-z]{12}/, "AAAAAAAAAAAA"), { key: intruder.key, method, body });
    const unknownErr = await expectError(unknown, 404, "not_found");
    expect(err.message).toBe(unknownErr.message);
    expect(err.details).toEqual(unknownErr.details);
    expect(send).not.toHaveBeenCalled();
  });

  it("and nothing of the owner's changed", async () => {
    const q = await getSubmission(owner.key, queued);
    expect(q).toMatchObject({ status: "queued", run_count: 1 });
    expect(await getSubmission(owner.key, finished)).toMatchObject({ status: "failed", run_count: 1 });
    expect(await getSubmission(owner.key, resultSubmission)).toMatchObject({ status: "succeeded", run_count: 1 });
    const r = await json(await call(`/api/v1/results/${result}`, { key: owner.key }));
    expect(r).toMatchObject({ name: "owner result", is_shared: false });
    expect(await env.FILES.get(`results/${result}/result.json`)).not.toBeNull();
  });
});

describe("lists never show another account's rows", () => {
  it("submissions: none of the owner's, under any filter or ordering", async () => {
    const ownerIds = new Set([queued, finished, resultSubmission]);
    for (const query of [
      "",
      "?ordering=name",
      "?status=queued,failed,succeeded,cancelled,running",
      "?name_contains=owner",
      "?source=api&page_size=100",
    ]) {
      const body = await json(await call(`/api/v1/submissions/${query}`, { key: intruder.key }));
      expect(body.results.length).toBeGreaterThan(query.includes("owner") ? -1 : 0);
      for (const r of body.results) expect(ownerIds.has(r.id)).toBe(false);
    }
    expect((await json(await call("/api/v1/submissions/?name_contains=owner", { key: intruder.key }))).results).toEqual([]);
  });

  it("results: none of the owner's, even filtered by the owner's submission id", async () => {
    const all = await json(await call("/api/v1/results/?page_size=100", { key: intruder.key }));
    expect(all.results).toHaveLength(1);
    expect(all.results[0].name).toBe("intruder result");
    const filtered = await json(await call(`/api/v1/results/?submission_id=${resultSubmission}`, { key: intruder.key }));
    expect(filtered.results).toEqual([]);
    const own = await json(await call(`/api/v1/results/?submission_id=${resultSubmission}`, { key: owner.key }));
    expect(own.results.map((r: any) => r.id)).toEqual([result]);
  });

  it("a cursor from the owner's list is refused to the intruder (cursors are bound to their account)", async () => {
    const page = await json(await call("/api/v1/submissions/?page_size=1&ordering=created_at", { key: owner.key }));
    expect(page.next).toBeTruthy();
    const res = await call(`/api/v1/submissions/${page.next}`, { key: intruder.key });
    const err = await expectError(res, 400, "validation_failed");
    expect(failedFields(err)).toEqual(["cursor"]);
  });
});
