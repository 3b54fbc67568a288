// /api/v1/code-uploads: upload a code field's source apart (the Vilvik SDK's client.code_uploads), get it
// back, list the account's uploads (docs/api.md#code-uploads). Uploads are inputs of submissions, so they
// take the submissions scopes.
import { Hono } from "hono";
import { z } from "zod";
import { createCodeUpload, isExpired } from "../../domain/code-uploads";
import { notFound } from "../../errors";
import { code } from "../../model/parameters";
import { openCursor, paged, pageLinks, paging } from "../../operations/paging";
import { type CodeUploadRow, getCodeUpload, listCodeUploads } from "../../storage/code-uploads";
import { getDb } from "../../storage/db";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { CodeUpload, CodeUploadWithContent, list } from "../validation/responses";
import { jsonBody, query } from "../validation/validate";

export const createCodeUploadSchema = z.strictObject({ content: code });
const listQuery = paged(z.strictObject({ ...paging }));

export function codeUploadView(row: CodeUploadRow, withContent: boolean) {
  return {
    code_id: row.id,
    ...(withContent ? { content: row.content } : {}),
    content_size: row.contentSize,
    content_sha256: row.contentSha256,
    created_at: row.createdAt,
    expires_at: row.expiresAt,
    is_expired: isExpired(row),
  };
}

export const codeUploadsRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({
      operationId: "listCodeUploads",
      tag: "Code uploads",
      summary: "List code uploads (without their content)",
      success: { 200: list(CodeUpload) },
    }),
    requireScope("submissions:read"),
    query(listQuery),
    async (c) => {
      const q = c.req.valid("query");
      const accountId = c.get("caller").accountId;
      const page = await listCodeUploads(getDb(c.env.DB), accountId, q.page_size, await openCursor(c.env, accountId, q.cursor));
      return c.json({
        results: page.rows.map((row) => codeUploadView(row, false)),
        ...(await pageLinks(c.env, accountId, c.req.url, page)),
      });
    },
  )
  .post(
    "/",
    describe({
      operationId: "createCodeUpload",
      tag: "Code uploads",
      summary: "Upload a code field's source, kept 24 hours, to reference as `<field>_id`",
      success: { 201: CodeUpload },
    }),
    requireScope("submissions:write"),
    jsonBody(createCodeUploadSchema),
    idempotent,
    async (c) => {
      const row = await createCodeUpload(getDb(c.env.DB), c.get("caller").accountId, c.req.valid("json").content);
      return c.json(codeUploadView(row, false), 201);
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getCodeUpload",
      tag: "Code uploads",
      summary: "Get a code upload with its content",
      success: { 200: CodeUploadWithContent },
      errors: ["not_found"],
    }),
    requireScope("submissions:read"),
    async (c) => {
      const row = await getCodeUpload(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
      if (!row) throw notFound("code upload");
      return c.json(codeUploadView(row, true));
    },
  );
