// What both adapters (the API and the dashboard) do with data files (docs/api.md#data-files): read an
// upload's multipart body as it streams (the file to R2, hashed on the way), the list and its paging, a
// file as a download.
import { z } from "zod";
import { dataFileLimits } from "../admission/limits";
import { dataContentType, dataFileNameProblem, discardStaged, fileTooLarge, type StagedUpload, stageUpload } from "../domain/data-files";
import type { Bindings } from "../env";
import { ApiError, notFound, validationError } from "../errors";
import { boundaryOf, fieldText, MultipartError, multipartParts } from "../lib/multipart";
import type { AccountRow } from "../storage/accounts";
import { type DataFileRow, getBlob, listDataFiles } from "../storage/data-files";
import { getDb } from "../storage/db";
import { type LinkedPage, linked, openCursor, paged, paging } from "./paging";

/** The field of an upload's multipart body that holds the file. */
export const FILE_FIELD = "file";
/** What a multipart body may hold besides the file, in bytes (its delimiters, headers and small fields). */
const ENVELOPE_BYTES = 64 * 1024;

export interface ReceiveOptions {
  /** Plain fields the body may carry (the dashboard's `_csrf`); any other is 400. */
  fields?: readonly string[];
  /** Called with those fields as they were read, before the file's first byte is stored (the dashboard checks its CSRF token here). */
  beforeFile?: (fields: Map<string, string>) => Promise<void>;
}

/**
 * An upload's file, streamed from `request`'s multipart body to R2 (docs/api.md#data-files): exactly one
 * part named `file`, whose filename is the data file's name (422 `invalid_data_file_name` when it cannot
 * be one), at most the account's size per file (413). 415 for another body, 400 for a malformed one.
 */
export async function receiveDataFile(
  env: Bindings,
  account: AccountRow,
  request: Request,
  options: ReceiveOptions = {},
): Promise<StagedUpload> {
  const boundary = boundaryOf(request.headers.get("Content-Type"));
  if (!boundary || !request.body) {
    throw new ApiError(
      "unsupported_media_type",
      `Send the file as multipart/form-data, in a part named "${FILE_FIELD}" whose filename is its name.`,
    );
  }
  const maxBytes = dataFileLimits(account.plan, account.overrides).max_data_file_bytes;
  const length = Number(request.headers.get("Content-Length"));
  if (Number.isFinite(length) && length > maxBytes + ENVELOPE_BYTES) throw fileTooLarge(maxBytes);
  const fields = new Map<string, string>();
  let staged: StagedUpload | null = null;
  try {
    for await (const part of multipartParts(request.body, boundary)) {
      if (part.name === FILE_FIELD && part.filename !== null) {
        if (staged) throw validationError([{ field: FILE_FIELD, message: "send one file per upload" }]);
        await options.beforeFile?.(fields);
        const problem = dataFileNameProblem(part.filename);
        if (problem) throw new ApiError("invalid_data_file_name", `${FILE_FIELD}: ${problem}.`, { field: FILE_FIELD });
        staged = await stageUpload(
          env.FILES,
          account.id,
          { name: part.filename, contentType: dataContentType(part.contentType), body: part.body },
          maxBytes,
        );
      } else if (part.name === FILE_FIELD) {
        throw validationError([{ field: FILE_FIELD, message: "must be a file (a part with a filename, its name)" }]);
      } else if (options.fields?.includes(part.name) && !fields.has(part.name)) {
        fields.set(part.name, await fieldText(part));
      } else {
        throw validationError([{ field: part.name, message: "is not a known field" }]);
      }
    }
  } catch (err) {
    if (staged) await discardStaged(env.FILES, staged);
    if (err instanceof MultipartError)
      throw validationError([{ field: "body", message: `is not well-formed multipart/form-data: ${err.message}` }]);
    throw err;
  }
  if (!staged) throw validationError([{ field: FILE_FIELD, message: "is required: the file, in a part with its name as filename" }]);
  return staged;
}

/** What an upload means, for its Idempotency-Key's fingerprint: a retry's multipart boundary may differ, its file may not. */
export const uploadMeaning = (staged: StagedUpload) => JSON.stringify([staged.name, staged.contentType, staged.sizeBytes, staged.sha256]);

export const dataFilesListQuery = paged(z.strictObject({ ...paging }));
export type DataFilesListQuery = z.output<typeof dataFilesListQuery>;

/** A page of the account's data files, newest first, with its links (the list at `url`). */
export async function dataFilesPage(
  env: Bindings,
  accountId: string,
  q: DataFilesListQuery,
  url: string,
): Promise<LinkedPage<DataFileRow>> {
  const cursor = await openCursor(env, accountId, q.cursor);
  return linked(env, accountId, url, await listDataFiles(getDb(env.DB), accountId, q.page_size, cursor));
}

/** `attachment` with the name as RFC 6266 wants it: an ASCII fallback and the UTF-8 name. */
export function attachment(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A data file as a download: its bytes with its content type, as an attachment, never sniffed. */
export async function downloadDataFile(env: Bindings, row: DataFileRow, requestId: string): Promise<Response> {
  const blob = await getBlob(getDb(env.DB), row.accountId, row.sha256);
  const object = blob ? await env.FILES.get(blob.r2Key) : null;
  if (!object) throw notFound("data file");
  return new Response(object.body, {
    headers: {
      "Content-Type": row.contentType,
      "Content-Length": String(object.size),
      "Content-Disposition": attachment(row.name),
      ETag: `"${row.sha256}"`,
      "X-Content-Type-Options": "nosniff",
      "X-Request-Id": requestId,
    },
  });
}
