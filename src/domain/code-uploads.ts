// Code uploads: a code field's source stored apart, for 24 hours, and referenced at creation as
// `<field>_id` (docs/api.md#code-uploads). A submission stores the source itself, so an upload's expiry
// never breaks its reruns.
import { ApiError, validationError } from "../errors";
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso } from "../lib/ids";
import { type CodeUploadRow, getCodeUpload, insertCodeUpload } from "../storage/code-uploads";
import type { Db } from "../storage/db";

export const CODE_UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;

export async function createCodeUpload(db: Db, accountId: string, content: string): Promise<CodeUploadRow> {
  const now = nowIso();
  const row: CodeUploadRow = {
    id: newId(),
    accountId,
    content,
    contentSize: new TextEncoder().encode(content).byteLength,
    contentSha256: await sha256Hex(content),
    createdAt: now,
    expiresAt: new Date(Date.parse(now) + CODE_UPLOAD_TTL_MS).toISOString(),
  };
  await insertCodeUpload(db, row);
  return row;
}

export const isExpired = (row: CodeUploadRow, now = Date.now()) => Date.parse(row.expiresAt) <= now;

/**
 * The body with every `<field>_id` replaced by the upload's source as `<field>`: both given is 400,
 * an unknown or another account's upload 422 `code_upload_not_found`, an expired one 422
 * `code_upload_expired` (each naming the field).
 */
export async function resolveCodeUploads<T extends Record<string, unknown>>(
  db: Db,
  accountId: string,
  body: T,
  fields: readonly string[],
): Promise<T> {
  const resolved: Record<string, unknown> = { ...body };
  for (const field of fields) {
    const id = body[`${field}_id`];
    delete resolved[`${field}_id`];
    if (id === undefined) continue;
    if (body[field] !== undefined) throw validationError([{ field: `${field}_id`, message: `send ${field} or ${field}_id, not both` }]);
    const upload = await getCodeUpload(db, accountId, String(id));
    if (!upload)
      throw new ApiError("code_upload_not_found", `${field}_id "${String(id)}" is not a code upload of this account.`, {
        field: `${field}_id`,
      });
    if (isExpired(upload))
      throw new ApiError("code_upload_expired", `The code upload ${upload.id} expired at ${upload.expiresAt}; upload the code again.`, {
        field: `${field}_id`,
        expired_at: upload.expiresAt,
      });
    resolved[field] = upload.content;
  }
  return resolved as T;
}
