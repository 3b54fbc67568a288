// Who may see and use a data file (docs/api.md#data-files): the submissions scopes, one account's files
// only, and a run's own files only for the GA worker's token.
import { describe, expect, it } from "vitest";
import {
  accountPerTest,
  call,
  createSubmission,
  env,
  expectError,
  fetchRunDataFile,
  job,
  json,
  newDataFile,
  newKey,
  newRoomyAccount,
  runningRun,
  runToken,
  uploadDataFile,
} from "../helpers/api";

const a = accountPerTest();
const CSV = "secret,1\n";

describe("scopes", () => {
  it("submissions:write uploads and deletes, submissions:read lists, gets and downloads; others are 403", async () => {
    const readOnly = await newKey(a, ["submissions:read"]);
    const writeOnly = await newKey(a, ["submissions:write"]);
    const results = await newKey(a, ["results:read", "results:write", "webhooks:read", "webhooks:write"]);
    const upload = await uploadDataFile(writeOnly, "a.csv", CSV);
    expect(upload.status).toBe(201);
    const { id } = await json(upload);

    for (const key of [readOnly, results]) {
      const err = await expectError(await uploadDataFile(key, "b.csv", CSV), 403, "scope_required");
      expect(err.details.required_scope).toBe("submissions:write");
      await expectError(await call(`/api/v1/data-files/${id}`, { key, method: "DELETE" }), 403, "scope_required");
    }
    for (const key of [writeOnly, results]) {
      for (const path of ["/api/v1/data-files", `/api/v1/data-files/${id}`, `/api/v1/data-files/${id}/content`]) {
        expect((await expectError(await call(path, { key }), 403, "scope_required")).details.required_scope).toBe("submissions:read");
      }
    }
    expect((await call(`/api/v1/data-files/${id}/content`, { key: readOnly })).status).toBe(200);
    expect((await call(`/api/v1/data-files/${id}`, { key: writeOnly, method: "DELETE" })).status).toBe(204);
    await expectError(await uploadDataFile(`alk_AAAAAAAA_${"A".repeat(40)}`, "c.csv", CSV), 401, "unauthorized");
  });
});

describe("one account's files", () => {
  it("another account's file is 404 to get, download and delete, and not in its list", async () => {
    const b = await newRoomyAccount();
    const mine = await newDataFile(a.key, "mine.csv", CSV);
    for (const [path, method] of [
      [`/api/v1/data-files/${mine.id}`, "GET"],
      [`/api/v1/data-files/${mine.id}/content`, "GET"],
      [`/api/v1/data-files/${mine.id}`, "DELETE"],
    ] as const) {
      await expectError(await call(path, { key: b.key, method }), 404, "not_found");
    }
    expect((await json(await call("/api/v1/data-files", { key: b.key }))).results).toEqual([]);
    expect((await call(`/api/v1/data-files/${mine.id}`, { key: a.key })).status).toBe(200);
  });

  it("another account naming my file id gets 422, and its runs can never fetch my bytes", async () => {
    const b = await newRoomyAccount();
    const mine = await newDataFile(a.key, "mine.csv", CSV);
    await expectError(await call("/api/v1/submissions", { key: b.key, body: job({ data_files: [mine.id] }) }), 422, "data_file_not_found");
    // B's own run, asking for my bytes by their hash: not its file.
    const { runId } = await runningRun(b.key);
    await expectError(await fetchRunDataFile(runId, mine.sha256), 404, "not_found");
    // B with the very same bytes reads its own copy, kept apart from mine.
    const theirs = await newDataFile(b.key, "same.csv", CSV);
    expect(theirs.sha256).toBe(mine.sha256);
    const keys = await env.DB.prepare("SELECT r2_key FROM data_blobs WHERE sha256 = ? AND account_id IN (?, ?)")
      .bind(mine.sha256, a.id, b.id)
      .all<{ r2_key: string }>();
    expect(new Set(keys.results.map((r) => r.r2_key)).size).toBe(2);
  });
});

describe("a run's files", () => {
  it("need that run's token, and the run to be running", async () => {
    const file = await newDataFile(a.key, "jobs.csv", CSV);
    const { runId } = await runningRun(a.key, { data_files: [file.id] });
    const { runId: otherRun } = await runningRun(a.key, { data_files: [file.id] });
    await expectError(await fetchRunDataFile(runId, file.sha256, await runToken(otherRun)), 401, "unauthorized");
    expect((await fetchRunDataFile(runId, file.sha256)).status).toBe(200);
    const submissionId = await createSubmission(a.key, { data_files: [file.id] });
    const queued = (await json(await call(`/api/v1/submissions/${submissionId}`, { key: a.key }))).latest_run.id;
    await expectError(await fetchRunDataFile(queued, file.sha256), 409, "invalid_state");
    await expectError(await fetchRunDataFile(runId, "0".repeat(64)), 404, "not_found");
    await expectError(await fetchRunDataFile(runId, "..%2F..%2Fetc%2Fpasswd"), 404, "not_found");
  });
});
