// Refusals of /api/v1/data-files and of `data_files` in a job (docs/api.md#data-files): bodies that are
// not one file (415, 400), names that cannot be /data/<name> (422), the plan's limits (413 with the
// numbers), ids that are not the account's files (422 data_file_not_found naming the item). Each refusal
// stores nothing: no listing, no bytes, no submission.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  accountPerTest,
  admin,
  BASE,
  call,
  createSubmission,
  dbSubmissionCount,
  env,
  expectError,
  finishSubmission,
  importBody,
  job,
  json,
  newDataFile,
  newRoomyAccount,
  uploadDataFile,
} from "../helpers/api";

const a = accountPerTest();
const CSV = "a,b\n1,2\n";

/** What the account stores: its listings and the objects of its bytes. */
async function stored(accountId: string) {
  const listings = await env.DB.prepare("SELECT count(*) AS n FROM data_files WHERE account_id = ?").bind(accountId).first<{ n: number }>();
  const objects = await env.FILES.list({ prefix: `data/${accountId}/` });
  return { listings: listings!.n, objects: objects.objects.length };
}

/** A POST /api/v1/data-files of this body and these headers, as sent. */
const fetchRaw = (body: BodyInit, headers: Record<string, string>) =>
  (exports as unknown as { default: { fetch(r: Request): Promise<Response> } }).default.fetch(
    new Request(`${BASE}/api/v1/data-files`, { method: "POST", headers, body }),
  );

const overrides = (body: Record<string, number>) => admin(`/accounts/${a.id}`, { method: "PATCH", body: { overrides: body } });

describe("POST /api/v1/data-files refuses", () => {
  it("a body that is not multipart (415), without a file part or with other fields (400)", async () => {
    await expectError(await call("/api/v1/data-files", { key: a.key, body: { file: CSV } }), 415, "unsupported_media_type");
    const noFile = new FormData();
    noFile.append("other", "x");
    const err = await expectError(await fetchRaw(noFile, { Authorization: `Bearer ${a.key}` }), 400, "validation_failed");
    expect(err.details.fields[0].field).toBe("other");
    const textOnly = new FormData();
    textOnly.append("file", "just text, no filename");
    expect(
      (await expectError(await fetchRaw(textOnly, { Authorization: `Bearer ${a.key}` }), 400, "validation_failed")).details.fields[0].field,
    ).toBe("file");
    const empty = new FormData();
    expect(
      (await expectError(await fetchRaw(empty, { Authorization: `Bearer ${a.key}` }), 400, "validation_failed")).details.fields[0].field,
    ).toBe("file");
    const two = new FormData();
    two.append("file", new File([CSV], "a.csv"));
    two.append("file", new File([CSV], "b.csv"));
    await expectError(await fetchRaw(two, { Authorization: `Bearer ${a.key}` }), 400, "validation_failed");
    expect(await stored(a.id)).toEqual({ listings: 0, objects: 0 });
  });

  it("a body that is not well-formed multipart (400), whatever it breaks", async () => {
    const auth = { Authorization: `Bearer ${a.key}`, "Content-Type": "multipart/form-data; boundary=XyZ" };
    const bodies = [
      "",
      "no boundary here",
      '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nunterminated',
      '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n', // headers never end
      "--XyZ\r\nX-No-Disposition: 1\r\n\r\nx\r\n--XyZ--\r\n",
      `--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n${"X-Pad: y\r\n".repeat(3000)}\r\nx\r\n--XyZ--\r\n`,
    ];
    for (const body of bodies) {
      const err = await expectError(await fetchRaw(body, auth), 400, "validation_failed");
      expect(err.details.fields[0].field).toBe("body");
    }
    // A boundary too long for RFC 2046, or none at all: not multipart.
    await expectError(
      await fetchRaw("x", { Authorization: `Bearer ${a.key}`, "Content-Type": `multipart/form-data; boundary=${"b".repeat(71)}` }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await fetchRaw("x", { Authorization: `Bearer ${a.key}`, "Content-Type": "multipart/form-data" }),
      415,
      "unsupported_media_type",
    );
    expect(await stored(a.id)).toEqual({ listings: 0, objects: 0 });
  });

  it("names that cannot be /data/<name> (422 naming the field), storing nothing", async () => {
    const bad = [
      "../etc.csv",
      "a/b.csv",
      "a\\b.csv",
      "..",
      ".",
      "tab\there.csv",
      "nul\u0000.csv",
      "bell\u0007",
      "del\u007f",
      "c1\u0085",
      "x".repeat(129),
      "€".repeat(43),
    ];
    for (const name of bad) {
      const err = await expectError(await uploadDataFile(a.key, name, CSV), 422, "invalid_data_file_name");
      expect(err.details.field, name).toBe("file");
    }
    expect(await stored(a.id)).toEqual({ listings: 0, objects: 0 });
    // At the bounds: 128 bytes of UTF-8, a leading dot, spaces.
    for (const name of ["x".repeat(128), `${"€".repeat(42)}ab`, ".hidden", "with space.csv"]) {
      expect((await uploadDataFile(a.key, name, CSV)).status, name).toBe(201);
    }
  });

  it("a file over the account's size per file: 413 with the numbers, before or while it streams", async () => {
    await overrides({ max_data_file_bytes: 100 });
    const err = await expectError(await uploadDataFile(a.key, "big.csv", "x".repeat(101)), 413, "data_file_limit_exceeded");
    expect(err.details).toEqual({ reason: "file_size", limit: 100 });
    expect(err.message).toContain("100 bytes");
    expect((await uploadDataFile(a.key, "fits.csv", "x".repeat(100))).status).toBe(201);
    // Far past it: refused on its Content-Length, before a byte is read.
    await expectError(await uploadDataFile(a.key, "huge.csv", "x".repeat(200_000)), 413, "data_file_limit_exceeded");
    expect(await stored(a.id)).toEqual({ listings: 1, objects: 1 });
  });

  it("a file past the account's storage: 413 with the numbers; the same bytes again take no more room", async () => {
    await overrides({ data_storage_bytes: 20 });
    const first = await newDataFile(a.key, "a.csv", "0123456789");
    expect((await uploadDataFile(a.key, "a-again.csv", "0123456789")).status).toBe(201);
    expect((await uploadDataFile(a.key, "b.csv", "abcdefghij")).status).toBe(201);
    const err = await expectError(await uploadDataFile(a.key, "c.csv", "!"), 413, "data_file_limit_exceeded");
    expect(err.details).toEqual({ reason: "account_storage", limit: 20, used: 20, requested: 1 });
    expect(err.message).toContain("20 bytes");
    expect(await stored(a.id)).toEqual({ listings: 3, objects: 2 });
    // A deleted listing still named by a submission keeps taking room; deleting the submission frees it.
    const submissionId = await createSubmission(a.key, { data_files: [first.id] });
    await call(`/api/v1/data-files/${first.id}`, { key: a.key, method: "DELETE" });
    await expectError(await uploadDataFile(a.key, "c.csv", "!"), 413, "data_file_limit_exceeded");
    await call(
      `/api/v1/data-files/${(await json(await call("/api/v1/data-files", { key: a.key }))).results.find((f: { name: string }) => f.name === "a-again.csv").id}`,
      {
        key: a.key,
        method: "DELETE",
      },
    );
    await expectError(await uploadDataFile(a.key, "c.csv", "!"), 413, "data_file_limit_exceeded");
    await call(`/api/v1/submissions/${submissionId}`, { key: a.key, method: "DELETE" });
    expect((await uploadDataFile(a.key, "c.csv", "!")).status).toBe(201);
  });
});

describe("data_files in a job refuses", () => {
  it("an unknown id or another account's: 422 data_file_not_found naming the item; nothing created", async () => {
    const mine = await newDataFile(a.key, "a.csv", CSV);
    const other = await newDataFile(a.key, "b.csv", CSV);
    const b = await newRoomyAccount();
    const theirs = await newDataFile(b.key, "c.csv", CSV);
    for (const [ids, index] of [
      [[mine.id, other.id, "nosuchfile01"], 2],
      [[theirs.id], 0],
      [[mine.id, theirs.id], 1],
    ] as const) {
      const err = await expectError(
        await call("/api/v1/submissions", { key: a.key, body: job({ data_files: ids }) }),
        422,
        "data_file_not_found",
      );
      expect(err.details).toEqual({ field: `data_files[${index}]` });
    }
    expect(await dbSubmissionCount(a.id)).toBe(0);
    // The field's own form: a list of up to 100 ids.
    await expectError(await call("/api/v1/submissions", { key: a.key, body: job({ data_files: "a.csv" }) }), 400, "validation_failed");
    await expectError(await call("/api/v1/submissions", { key: a.key, body: job({ data_files: [""] }) }), 400, "validation_failed");
  });

  it("two files of one name (422 naming the second), the same file twice", async () => {
    const one = await newDataFile(a.key, "jobs.csv", CSV);
    const two = await newDataFile(a.key, "jobs.csv", "other\n");
    for (const ids of [
      [one.id, two.id],
      [one.id, one.id],
    ]) {
      const err = await expectError(
        await call("/api/v1/submissions", { key: a.key, body: job({ data_files: ids }) }),
        422,
        "invalid_data_file_name",
      );
      expect(err.details).toEqual({ field: "data_files[1]" });
    }
    expect(await dbSubmissionCount(a.id)).toBe(0);
  });

  it("more files than the account's count per submission: 413 with the numbers", async () => {
    await overrides({ max_data_files_per_submission: 2 });
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await newDataFile(a.key, `f${n}.csv`, `${n}\n`)).id);
    const err = await expectError(
      await call("/api/v1/submissions", { key: a.key, body: job({ data_files: ids }) }),
      413,
      "data_file_limit_exceeded",
    );
    expect(err.details).toEqual({ reason: "files_per_submission", field: "data_files", limit: 2, requested: 3 });
    expect(err.message).toContain("3 files");
    expect(await dbSubmissionCount(a.id)).toBe(0);
    expect((await call("/api/v1/submissions", { key: a.key, body: job({ data_files: ids.slice(0, 2) }) })).status).toBe(202);
  });

  it("a reexecute naming a deleted listing the submission never read, or another account's file", async () => {
    const kept = await newDataFile(a.key, "kept.csv", CSV);
    const gone = await newDataFile(a.key, "gone.csv", "g\n");
    const submissionId = await createSubmission(a.key, { data_files: [kept.id] });
    await finishSubmission(a.key, submissionId);
    await call(`/api/v1/data-files/${gone.id}`, { key: a.key, method: "DELETE" });
    const err = await expectError(
      await call(`/api/v1/submissions/${submissionId}/reexecute`, { key: a.key, body: { data_files: [kept.id, gone.id] } }),
      422,
      "data_file_not_found",
    );
    expect(err.details).toEqual({ field: "data_files[1]" });
  });

  it("an import naming data files (its run was made elsewhere)", async () => {
    const err = await expectError(
      await call("/api/v1/imports", { key: a.key, body: importBody({ ga_parameters: { data_files: ["x"] } }) }),
      400,
      "validation_failed",
    );
    expect(err.details.fields[0].field).toBe("ga_parameters.data_files");
  });
});

describe("GET and DELETE of a data file that is not there", () => {
  it("answer 404 for an unknown id", async () => {
    await expectError(await call("/api/v1/data-files/nosuchfile01", { key: a.key }), 404, "not_found");
    await expectError(await call("/api/v1/data-files/nosuchfile01/content", { key: a.key }), 404, "not_found");
    await expectError(await call("/api/v1/data-files/nosuchfile01", { key: a.key, method: "DELETE" }), 404, "not_found");
    const created = await newDataFile(a.key, "a.csv", CSV);
    expect((await call(`/api/v1/data-files/${created.id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    await expectError(await call(`/api/v1/data-files/${created.id}`, { key: a.key, method: "DELETE" }), 404, "not_found");
  });
});
