// Success paths of /api/v1/data-files and of `data_files` in a job (docs/api.md#data-files): upload, list,
// get, download, delete; a run's files fetched by the GA worker; the bytes kept while a submission names
// them, and swept once nothing does (docs/decisions.md#data-files).
import { describe, expect, it } from "vitest";
import { collectDataFiles } from "../../src/domain/data-files";
import {
  accountPerTest,
  call,
  createSubmission,
  env,
  expectError,
  fetchRunDataFile,
  finishSubmission,
  getSubmission,
  json,
  latestRunId,
  newDataFile,
  runningRun,
  sha256Of,
  uploadDataFile,
} from "../helpers/api";

const ID = /^[0-9A-Za-z]{12}$/;
const CSV = "job,duration\na,3\nb,5\nc,2\n";

const a = accountPerTest();

/** The R2 key of an account's bytes of this content, or null when none is kept. */
async function keptKey(accountId: string, sha256: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT r2_key FROM data_blobs WHERE account_id = ? AND sha256 = ?")
    .bind(accountId, sha256)
    .first<{ r2_key: string }>();
  return row?.r2_key ?? null;
}

/** Makes a submission's latest run `running` again after it ended (what a worker's claim does). */
async function markRunning(key: string, submissionId: string): Promise<string> {
  const runId = await latestRunId(key, submissionId);
  await env.DB.batch([
    env.DB.prepare("UPDATE runs SET status = 'running', started_at = ? WHERE id = ?").bind(new Date().toISOString(), runId),
    env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(submissionId),
  ]);
  return runId;
}

describe("POST /api/v1/data-files", () => {
  it("answers 201 with the listing; get, list and download show the same file", async () => {
    const res = await uploadDataFile(a.key, "jobs.csv", CSV, { contentType: "text/csv" });
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toEqual({
      id: expect.stringMatching(ID),
      name: "jobs.csv",
      size_bytes: CSV.length,
      sha256: await sha256Of(CSV),
      content_type: "text/csv",
      created_at: expect.any(String),
    });
    expect(await json(await call(`/api/v1/data-files/${created.id}`, { key: a.key }))).toEqual(created);
    const listed = await json(await call("/api/v1/data-files/", { key: a.key }));
    expect(listed).toEqual({ results: [created], next: null, previous: null });

    const download = await call(`/api/v1/data-files/${created.id}/content`, { key: a.key });
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Type")).toBe("text/csv");
    expect(download.headers.get("Content-Disposition")).toBe(`attachment; filename="jobs.csv"; filename*=UTF-8''jobs.csv`);
    expect(download.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(download.headers.get("Content-Length")).toBe(String(CSV.length));
    expect(await download.text()).toBe(CSV);
  });

  it("keeps binary bytes exactly, a file spanning several of R2's parts included, and a Unicode name", async () => {
    // 8 MiB parts: 17 MiB and a bit is three parts, the last a short one; bytes that look like delimiters too.
    const big = new Uint8Array(17 * 1024 * 1024 + 123);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    big.set(new TextEncoder().encode("\r\n--not-the-boundary\r\n"), 5000);
    const created = await newDataFile(a.key, "données €.bin", big);
    expect(created).toMatchObject({ name: "données €.bin", size_bytes: big.length, sha256: await sha256Of(big) });
    const download = await call(`/api/v1/data-files/${created.id}/content`, { key: a.key });
    expect(download.headers.get("Content-Disposition")).toBe(
      `attachment; filename="donn_es _.bin"; filename*=UTF-8''${encodeURIComponent("données €.bin")}`,
    );
    const back = new Uint8Array(await download.arrayBuffer());
    expect(back.length).toBe(big.length);
    expect(await sha256Of(back)).toBe(created.sha256);
  }, 120_000);

  it("keeps the same bytes once however often they are uploaded; GET /account shows the storage they take", async () => {
    const first = await newDataFile(a.key, "a.csv", CSV);
    const second = await newDataFile(a.key, "b.csv", CSV);
    expect(second.id).not.toBe(first.id);
    const blobs = await env.DB.prepare("SELECT count(*) AS n FROM data_blobs WHERE account_id = ?").bind(a.id).first<{ n: number }>();
    expect(blobs!.n).toBe(1);
    const objects = await env.FILES.list({ prefix: `data/${a.id}/` });
    expect(objects.objects.map((o) => o.key)).toEqual([await keptKey(a.id, first.sha256)]);
    const account = await json(await call("/api/v1/account", { key: a.key }));
    expect(account.usage.data_storage_bytes).toBe(CSV.length);
    expect(account.limits).toMatchObject({
      max_data_file_bytes: 100 * 1024 * 1024,
      max_data_files_per_submission: 20,
      data_storage_bytes: 1024 * 1024 * 1024,
    });
  });

  it("replays an upload sent again with the same Idempotency-Key (another boundary), lists it once", async () => {
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const first = await uploadDataFile(a.key, "x.csv", CSV, { headers });
    expect(first.status).toBe(201);
    const again = await uploadDataFile(a.key, "x.csv", CSV, { headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
    const listed = await json(await call("/api/v1/data-files", { key: a.key }));
    expect(listed.results).toHaveLength(1);
    // The replay's own copy of the bytes is gone: one object.
    expect((await env.FILES.list({ prefix: `data/${a.id}/` })).objects).toHaveLength(1);
    await expectError(await uploadDataFile(a.key, "x.csv", `${CSV}d,1\n`, { headers }), 422, "idempotency_key_mismatch");
    expect((await env.FILES.list({ prefix: `data/${a.id}/` })).objects).toHaveLength(1);
  });

  it("lists with cursor pages, newest first", async () => {
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await newDataFile(a.key, `f${n}.csv`, `${n}\n`)).id);
    const page = await json(await call("/api/v1/data-files?page_size=2", { key: a.key }));
    expect(page.results.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    const rest = await json(await call(`/api/v1/data-files${page.next}`, { key: a.key }));
    expect(rest.results.map((f: { id: string }) => f.id)).toEqual([ids[0]]);
    expect(rest.next).toBeNull();
  });
});

describe("data files in a job", () => {
  it("a submission names its files; the GA worker fetches each with the run's token, only the run's own", async () => {
    const jobs = await newDataFile(a.key, "jobs.csv", CSV);
    const other = await newDataFile(a.key, "other.csv", "x\n");
    const { submissionId, runId } = await runningRun(a.key, { data_files: [jobs.id] });
    expect((await getSubmission(a.key, submissionId)).parameters.data_files).toEqual([jobs.id]);
    const fetched = await fetchRunDataFile(runId, jobs.sha256);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("Content-Length")).toBe(String(CSV.length));
    expect(await fetched.text()).toBe(CSV);
    await expectError(await fetchRunDataFile(runId, other.sha256), 404, "not_found");
    await expectError(await fetchRunDataFile(runId, jobs.sha256, "0".repeat(64)), 401, "unauthorized");
  });

  it("deleting the listing keeps the bytes for the submission: a reexecute and a continue still read them", async () => {
    const jobs = await newDataFile(a.key, "jobs.csv", CSV);
    const submissionId = await createSubmission(a.key, { data_files: [jobs.id] });
    const resultId = await finishSubmission(a.key, submissionId);
    expect((await call(`/api/v1/data-files/${jobs.id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    await expectError(await call(`/api/v1/data-files/${jobs.id}`, { key: a.key }), 404, "not_found");
    expect((await json(await call("/api/v1/data-files", { key: a.key }))).results).toEqual([]);
    expect(await keptKey(a.id, jobs.sha256)).not.toBeNull();

    expect((await call(`/api/v1/submissions/${submissionId}/reexecute`, { key: a.key, method: "POST" })).status).toBe(202);
    const rerun = await markRunning(a.key, submissionId);
    expect(await (await fetchRunDataFile(rerun, jobs.sha256)).text()).toBe(CSV);
    await finishSubmission(a.key, submissionId);

    const cont = await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { num_generations: 5 } });
    expect(cont.status).toBe(202);
    const continued = await markRunning(a.key, submissionId);
    expect(await (await fetchRunDataFile(continued, jobs.sha256)).text()).toBe(CSV);
    // The storage still counts them: the account keeps them.
    expect((await json(await call("/api/v1/account", { key: a.key }))).usage.data_storage_bytes).toBe(CSV.length);
  });

  it("the bytes go when the listing and every submission naming them are gone, not before", async () => {
    const jobs = await newDataFile(a.key, "jobs.csv", CSV);
    const one = await createSubmission(a.key, { data_files: [jobs.id] });
    const two = await createSubmission(a.key, { data_files: [jobs.id] });
    const key = await keptKey(a.id, jobs.sha256);
    await call(`/api/v1/data-files/${jobs.id}`, { key: a.key, method: "DELETE" });
    expect((await call(`/api/v1/submissions/${one}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    expect(await keptKey(a.id, jobs.sha256)).toBe(key);
    expect(await env.FILES.head(key!)).not.toBeNull();
    expect((await call(`/api/v1/submissions/${two}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    expect(await keptKey(a.id, jobs.sha256)).toBeNull();
    expect(await env.FILES.head(key!)).toBeNull();
    expect((await json(await call("/api/v1/account", { key: a.key }))).usage.data_storage_bytes).toBe(0);
  });

  it("a listing deleted while no submission names it takes its bytes at once; a listing of the same bytes keeps them", async () => {
    const first = await newDataFile(a.key, "a.csv", CSV);
    const second = await newDataFile(a.key, "b.csv", CSV);
    const key = await keptKey(a.id, first.sha256);
    await call(`/api/v1/data-files/${first.id}`, { key: a.key, method: "DELETE" });
    expect(await env.FILES.head(key!)).not.toBeNull();
    await call(`/api/v1/data-files/${second.id}`, { key: a.key, method: "DELETE" });
    expect(await env.FILES.head(key!)).toBeNull();
  });

  it("the cron's sweep removes bytes nothing holds and R2 objects no row names once they are an hour old", async () => {
    const kept = await newDataFile(a.key, "kept.csv", CSV);
    // A deletion whose own sweep never ran: the row of bytes is left without a holder.
    const orphanRow = await newDataFile(a.key, "orphan.csv", "o\n");
    const orphanKey = await keptKey(a.id, orphanRow.sha256);
    await env.DB.prepare("DELETE FROM data_files WHERE id = ?").bind(orphanRow.id).run();
    // An upload that never got its row.
    await env.FILES.put(`data/${a.id}/unrecorded`, "u");
    expect(await collectDataFiles(env, Date.now(), false)).toBeGreaterThanOrEqual(1);
    expect(await keptKey(a.id, orphanRow.sha256)).toBeNull();
    expect(await env.FILES.head(orphanKey!)).toBeNull();
    // Too young to be an orphan: an upload may still be on its way.
    await collectDataFiles(env, Date.now(), true);
    expect(await env.FILES.head(`data/${a.id}/unrecorded`)).not.toBeNull();
    await collectDataFiles(env, Date.now() + 2 * 60 * 60 * 1000, true);
    expect(await env.FILES.head(`data/${a.id}/unrecorded`)).toBeNull();
    expect(await env.FILES.head((await keptKey(a.id, kept.sha256))!)).not.toBeNull();
    expect((await call(`/api/v1/data-files/${kept.id}/content`, { key: a.key })).status).toBe(200);
  });

  it("a reexecute may name other files; the submission then keeps both", async () => {
    const first = await newDataFile(a.key, "jobs.csv", CSV);
    const second = await newDataFile(a.key, "jobs2.csv", "j\n");
    const submissionId = await createSubmission(a.key, { data_files: [first.id] });
    await finishSubmission(a.key, submissionId);
    const res = await call(`/api/v1/submissions/${submissionId}/reexecute`, { key: a.key, body: { data_files: [second.id, first.id] } });
    expect(res.status).toBe(202);
    const runId = await markRunning(a.key, submissionId);
    expect(await (await fetchRunDataFile(runId, second.sha256)).text()).toBe("j\n");
    expect(await (await fetchRunDataFile(runId, first.sha256)).text()).toBe(CSV);
  });
});
