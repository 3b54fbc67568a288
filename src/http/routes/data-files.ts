// /api/v1/data-files: a user's own files, read-only at /data/<name> in the runs that name them
// (docs/api.md#data-files). Inputs of submissions, so they take the submissions scopes, as code uploads do.
import { type Context, Hono } from "hono";
import { deleteDataFile, discardStaged, recordUpload } from "../../domain/data-files";
import { notFound } from "../../errors";
import { dataFilesListQuery, dataFilesPage, downloadDataFile, receiveDataFile, uploadMeaning } from "../../operations/data-files";
import { type DataFileRow, getDataFile } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotentStreamed, streamedOnce } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { DataFile, DataFileUpload, list } from "../validation/responses";
import { query } from "../validation/validate";

export function dataFileView(row: DataFileRow) {
  return {
    id: row.id,
    name: row.name,
    size_bytes: row.sizeBytes,
    sha256: row.sha256,
    content_type: row.contentType,
    created_at: row.createdAt,
  };
}

async function ownDataFile(c: Context<AppEnv>, id: string) {
  const row = await getDataFile(getDb(c.env.DB), c.get("caller").accountId, id);
  if (!row) throw notFound("data file");
  return row;
}

export const dataFilesRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({
      operationId: "listDataFiles",
      tag: "Data files",
      summary: "List your data files, newest first",
      success: { 200: list(DataFile) },
    }),
    requireScope("submissions:read"),
    query(dataFilesListQuery),
    async (c) => {
      const accountId = c.get("caller").accountId;
      const page = await dataFilesPage(c.env, accountId, c.req.valid("query"), c.req.url);
      return c.json({ results: page.rows.map(dataFileView), next: page.next, previous: page.previous });
    },
  )
  .post(
    "/",
    describe({
      operationId: "createDataFile",
      tag: "Data files",
      summary: "Upload a data file (multipart/form-data, the file in a part named `file`; its filename is its name)",
      description:
        "The file is read-only at `/data/<name>` in every run whose `data_files` names its id. At most the account's `max_data_file_bytes`, within its `data_storage_bytes` (413 `data_file_limit_exceeded`); a name of 1..128 bytes without `/`, `\\`, control characters, `.` or `..` (422 `invalid_data_file_name`).",
      success: { 201: DataFile },
      errors: ["unsupported_media_type", "invalid_data_file_name", "data_file_limit_exceeded"],
      body: { schema: DataFileUpload, required: true, mediaTypes: ["multipart/form-data"] },
    }),
    requireScope("submissions:write"),
    idempotentStreamed,
    async (c) => {
      const account = c.get("caller").account;
      const staged = await receiveDataFile(c.env, account, c.req.raw);
      return streamedOnce(
        c,
        uploadMeaning(staged),
        async () => c.json(dataFileView(await recordUpload(c.env, account, staged)), 201),
        () => discardStaged(c.env.FILES, staged),
      );
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getDataFile",
      tag: "Data files",
      summary: "Get a data file's listing",
      success: { 200: DataFile },
      errors: ["not_found"],
    }),
    requireScope("submissions:read"),
    async (c) => c.json(dataFileView(await ownDataFile(c, c.req.param("id")))),
  )
  .get(
    "/:id/content",
    describe({
      operationId: "getDataFileContent",
      tag: "Data files",
      summary: "Download a data file",
      success: {
        200: {
          raw: ["*/*"],
          description: "The file as it was uploaded, with the content type it was uploaded with (any), as an attachment",
        },
      },
      errors: ["not_found"],
    }),
    requireScope("submissions:read"),
    async (c) => downloadDataFile(c.env, await ownDataFile(c, c.req.param("id")), c.get("requestId")),
  )
  .delete(
    "/:id",
    describe({
      operationId: "deleteDataFile",
      tag: "Data files",
      summary: "Delete a data file's listing (submissions that name it keep reading it)",
      success: { 204: null },
      errors: ["not_found"],
    }),
    requireScope("submissions:write"),
    async (c) => {
      if (!(await deleteDataFile(c.env, await ownDataFile(c, c.req.param("id"))))) throw notFound("data file");
      return c.body(null, 204);
    },
  );
