// Data files (docs/api.md#data-files): a user's own files, read-only at /data/<name> in a run. An upload
// streams to R2 while its sha256 is computed (never whole in the Worker's memory); its bytes are kept once
// per account and content, while a listing or a submission names them, then swept (the lifetime:
// docs/decisions.md#data-files). A run's files are what its submission recorded when the run was admitted.
import { dataFileLimits } from "../admission/limits";
import type { Bindings } from "../env";
import { ApiError, type ErrorCode } from "../errors";
import { toHex } from "../lib/crypto";
import { newId, nowIso } from "../lib/ids";
import type { AccountRow } from "../storage/accounts";
import {
  type DataFileRow,
  dataFilesByIds,
  dataStorageUsed,
  deleteDataFileRow,
  insertDataFile,
  keptKeys,
  type SubmissionDataFileRow,
  submissionDataFilesOf,
  sweepContents,
  sweepUnheld,
} from "../storage/data-files";
import { getDb } from "../storage/db";

/** A data file's name: 1..128 bytes of UTF-8. */
export const MAX_NAME_BYTES = 128;
/** R2 multipart parts of an upload (all but the last the same size, ≥ 5 MiB as R2 wants): the most of a file a Worker holds at once. */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;
/** The R2 objects of data files: `data/<account>/<upload id>`. */
export const DATA_PREFIX = "data/";
export const dataObjectKey = (accountId: string, uploadId: string) => `${DATA_PREFIX}${accountId}/${uploadId}`;
/** An object under DATA_PREFIX that no row names and is older than this was left by an upload that never finished. */
export const ORPHAN_AGE_MS = 60 * 60 * 1000;

const encoder = new TextEncoder();

/**
 * Why `name` cannot name a data file (it becomes /data/<name> in a run), or null: 1..128 bytes of UTF-8,
 * well-formed, no path separator (`/`, `\`), no control character, not `.` or `..`.
 */
export function dataFileNameProblem(name: string): string | null {
  const bytes = encoder.encode(name).byteLength;
  if (bytes === 0) return "a data file needs a name (the file name of the upload)";
  if (bytes > MAX_NAME_BYTES) return `a data file's name may be at most ${MAX_NAME_BYTES} bytes of UTF-8 (this one is ${bytes})`;
  if (/\p{Cs}/u.test(name)) return "a data file's name must be valid Unicode text";
  if (/[/\\]/.test(name)) return "a data file's name may not hold a path separator (/ or \\)";
  if (/\p{Cc}/u.test(name)) return "a data file's name may not hold a control character";
  if (name === "." || name === "..") return 'a data file may not be named "." or ".."';
  return null;
}

const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/** A part's Content-Type as it is kept and served: its media type (lower case, no parameters but a charset), else octet-stream. */
export function dataContentType(raw: string | null): string {
  const [type, ...params] = (raw ?? "").split(";").map((s) => s.trim());
  if (!type || !MEDIA_TYPE.test(type)) return "application/octet-stream";
  const charset = params.map((p) => /^charset="?([A-Za-z0-9._:-]{1,40})"?$/i.exec(p)?.[1]).find(Boolean);
  return `${type.toLowerCase()}${charset ? `; charset=${charset.toLowerCase()}` : ""}`;
}

const MIB = 1024 * 1024;
const inMib = (bytes: number) => `${Math.round((bytes / MIB) * 100) / 100} MiB`;

export function fileTooLarge(limit: number): ApiError {
  return new ApiError(
    "data_file_limit_exceeded",
    `The file is larger than the ${limit} bytes (${inMib(limit)}) a data file of this account may have.`,
    { reason: "file_size", limit },
  );
}

/** An upload's bytes, stored in R2 under a key of its own and not yet recorded. */
export interface StagedUpload {
  id: string;
  accountId: string;
  key: string;
  name: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

/**
 * Streams a file's bytes to R2 (one `put` when they fit in one part, a multipart upload otherwise),
 * hashing them as they go; at most `maxBytes` of them (413 past it, nothing kept).
 */
export async function stageUpload(
  bucket: R2Bucket,
  accountId: string,
  file: { name: string; contentType: string; body: AsyncIterable<Uint8Array> },
  maxBytes: number,
): Promise<StagedUpload> {
  const id = newId();
  const key = dataObjectKey(accountId, id);
  const httpMetadata = { contentType: file.contentType };
  const digest = new crypto.DigestStream("SHA-256");
  const hashing = digest.getWriter();
  const hashed = digest.digest;
  hashed.catch(() => undefined); // an upload refused half-way aborts the hash: its rejection is expected
  let part = new Uint8Array(UPLOAD_PART_BYTES);
  let filled = 0;
  let size = 0;
  let upload: R2MultipartUpload | null = null;
  const parts: R2UploadedPart[] = [];
  const send = async (bytes: Uint8Array) => {
    upload ??= await bucket.createMultipartUpload(key, { httpMetadata });
    parts.push(await upload.uploadPart(parts.length + 1, bytes));
  };
  try {
    for await (const chunk of file.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw fileTooLarge(maxBytes);
      await hashing.write(chunk);
      let offset = 0;
      while (offset < chunk.byteLength) {
        const take = Math.min(chunk.byteLength - offset, UPLOAD_PART_BYTES - filled);
        part.set(chunk.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === UPLOAD_PART_BYTES) {
          await send(part);
          part = new Uint8Array(UPLOAD_PART_BYTES);
          filled = 0;
        }
      }
    }
    await hashing.close();
    if (upload === null) await bucket.put(key, part.subarray(0, filled), { httpMetadata });
    else {
      if (filled > 0) await send(part.subarray(0, filled));
      await (upload as R2MultipartUpload).complete(parts);
    }
  } catch (err) {
    await hashing.abort().catch(() => undefined);
    if (upload !== null) await (upload as R2MultipartUpload).abort().catch(() => undefined);
    throw err;
  }
  return { id, accountId, key, name: file.name, contentType: file.contentType, sizeBytes: size, sha256: toHex(await hashed) };
}

/** Removes a staged upload's bytes (refused, replayed or a duplicate of bytes already kept). */
export async function discardStaged(bucket: R2Bucket, staged: StagedUpload): Promise<void> {
  await bucket.delete(staged.key).catch((err) => console.error("a staged data file could not be removed", staged.key, err));
}

/**
 * Records a staged upload as a listing of the account: its bytes are kept once per content (a second
 * upload of the same bytes lists them again and its own copy goes), within the account's storage limit
 * (413, and nothing kept, past it).
 */
export async function recordUpload(env: Bindings, account: AccountRow, staged: StagedUpload): Promise<DataFileRow> {
  const db = getDb(env.DB);
  const limit = dataFileLimits(account.plan, account.overrides).data_storage_bytes;
  const now = nowIso();
  const row: DataFileRow = {
    id: staged.id,
    accountId: account.id,
    name: staged.name,
    contentType: staged.contentType,
    sizeBytes: staged.sizeBytes,
    sha256: staged.sha256,
    createdAt: now,
  };
  let outcome: Awaited<ReturnType<typeof insertDataFile>>;
  try {
    outcome = await insertDataFile(
      db,
      row,
      { accountId: account.id, sha256: staged.sha256, sizeBytes: staged.sizeBytes, r2Key: staged.key, createdAt: now },
      limit,
    );
  } catch (err) {
    await discardStaged(env.FILES, staged);
    throw err;
  }
  if (outcome.keptKey !== staged.key) await discardStaged(env.FILES, staged);
  if (!outcome.listed) {
    const used = await dataStorageUsed(db, account.id);
    throw new ApiError(
      "data_file_limit_exceeded",
      `Keeping this file (${staged.sizeBytes} bytes) would take this account's data files to ${used + staged.sizeBytes} bytes, past its limit of ${limit} bytes (${inMib(limit)}); delete data files, or the submissions that use them.`,
      { reason: "account_storage", limit, used, requested: staged.sizeBytes },
    );
  }
  return row;
}

/** Deletes R2 objects whose rows went; a failure is left to the hourly sweep of orphans. */
async function deleteObjects(bucket: R2Bucket, keys: string[]): Promise<void> {
  if (!keys.length) return;
  await bucket.delete(keys).catch((err) => console.error("data file objects not deleted; the sweep will", keys, err));
}

/** Deletes a listing; its bytes go too unless a submission still names them (its reruns and continues read them). */
export async function deleteDataFile(env: Bindings, row: DataFileRow): Promise<boolean> {
  const keys = await deleteDataFileRow(getDb(env.DB), row);
  if (keys === null) return false;
  await deleteObjects(env.FILES, keys);
  return true;
}

/** After a submission is deleted (its records of data files went with it): the bytes nothing holds any more go. */
export async function releaseSubmissionFiles(env: Bindings, accountId: string, files: SubmissionDataFileRow[]): Promise<void> {
  const contents = [...new Set(files.map((f) => f.sha256))];
  await deleteObjects(env.FILES, await sweepContents(getDb(env.DB), accountId, contents));
}

/**
 * The cron's sweep: rows of bytes nothing holds (a deletion whose own sweep did not run), and, once an
 * hour, R2 objects under DATA_PREFIX that no row names, older than ORPHAN_AGE_MS (an upload that never
 * finished, an object whose delete failed). Answers how many objects went.
 */
export async function collectDataFiles(
  env: Bindings,
  now = Date.now(),
  scanObjects = new Date(now).getUTCMinutes() === 0,
): Promise<number> {
  const db = getDb(env.DB);
  const keys = await sweepUnheld(db, 100);
  await deleteObjects(env.FILES, keys);
  let removed = keys.length;
  if (!scanObjects) return removed;
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const listed = await env.FILES.list({ prefix: DATA_PREFIX, cursor, limit: 1000 });
    const old = listed.objects.filter((o) => now - o.uploaded.getTime() > ORPHAN_AGE_MS).map((o) => o.key);
    const kept = await keptKeys(db, old);
    const orphans = old.filter((k) => !kept.has(k));
    await deleteObjects(env.FILES, orphans);
    removed += orphans.length;
    if (!listed.truncated) break;
    cursor = listed.cursor;
  }
  return removed;
}

// ---------------------------------------------------------------------------------------- in runs

/** What a job's `data_files` may be refused with (create, reexecute, continue): the routes document them. */
export const DATA_FILES_ERRORS = [
  "data_file_not_found",
  "invalid_data_file_name",
  "data_file_limit_exceeded",
] as const satisfies ErrorCode[];

/** A data file as a run's submission records it: the id it was named by, its name in /data and its bytes. */
export type RunDataFile = Pick<SubmissionDataFileRow, "dataFileId" | "name" | "contentType" | "sizeBytes" | "sha256">;

const notFoundAt = (index: number, id: string) =>
  new ApiError("data_file_not_found", `data_files[${index}] "${id}" is not a data file of this account.`, {
    field: `data_files[${index}]`,
  });

/**
 * What the `data_files` of a run stand for: each id, the submission's record of it when it has one (a
 * rerun or continue, whose listing may be gone), else the account's listing (422 `data_file_not_found`
 * naming the item otherwise). At most the account's count per submission (413), names distinct (422).
 */
export async function resolveDataFiles(
  env: Bindings,
  account: AccountRow,
  ids: string[] | undefined,
  recorded: SubmissionDataFileRow[] = [],
): Promise<RunDataFile[]> {
  if (!ids?.length) return [];
  const limit = dataFileLimits(account.plan, account.overrides).max_data_files_per_submission;
  if (ids.length > limit) {
    throw new ApiError(
      "data_file_limit_exceeded",
      `data_files names ${ids.length} files; a run of this account may read at most ${limit}.`,
      { reason: "files_per_submission", field: "data_files", limit, requested: ids.length },
    );
  }
  const known = new Map<string, RunDataFile>(recorded.map((r) => [r.dataFileId, r]));
  const listed = await dataFilesByIds(
    getDb(env.DB),
    account.id,
    ids.filter((id) => !known.has(id)),
  );
  for (const row of listed) known.set(row.id, { dataFileId: row.id, ...row });
  const names = new Map<string, number>();
  return ids.map((id, index) => {
    const file = known.get(id);
    if (!file) throw notFoundAt(index, id);
    const earlier = names.get(file.name);
    if (earlier !== undefined) {
      throw new ApiError(
        "invalid_data_file_name",
        `data_files[${index}] is named "${file.name}" like data_files[${earlier}]: the files of a run appear as /data/<name>, so their names must differ.`,
        { field: `data_files[${index}]` },
      );
    }
    names.set(file.name, index);
    return {
      dataFileId: file.dataFileId,
      name: file.name,
      contentType: file.contentType,
      sizeBytes: file.sizeBytes,
      sha256: file.sha256,
    };
  });
}

/** The records a run adds to its submission (the ids it names that the submission had no record of). */
export const recordsFor = (submissionId: string, accountId: string, files: RunDataFile[], now: string): SubmissionDataFileRow[] =>
  files.map((f) => ({ submissionId, accountId, createdAt: now, ...f }));

/** A run's data files, in the order its `data_files` names them, from its submission's records. */
export async function runDataFiles(env: Bindings, run: { submissionId: string; parameters: { data_files?: string[] } }) {
  const ids = run.parameters.data_files ?? [];
  if (!ids.length) return [];
  const recorded = new Map((await submissionDataFilesOf(getDb(env.DB), run.submissionId)).map((r) => [r.dataFileId, r]));
  return ids.map((id) => recorded.get(id) ?? null);
}
