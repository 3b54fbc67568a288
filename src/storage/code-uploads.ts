// Code upload rows: insert, get and list of an account's uploads (docs/api.md#code-uploads).
import { and, eq } from "drizzle-orm";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { codeUploads } from "./schema";

export type CodeUploadRow = typeof codeUploads.$inferSelect;

const NEWEST_FIRST: Ordering = { key: codeUploads.createdAt, id: codeUploads.id, descending: true, valueOf: (r) => r.createdAt as string };

export async function insertCodeUpload(db: Db, row: CodeUploadRow): Promise<void> {
  await db.insert(codeUploads).values(row);
}

export async function getCodeUpload(db: Db, accountId: string, id: string): Promise<CodeUploadRow | undefined> {
  return db
    .select()
    .from(codeUploads)
    .where(and(eq(codeUploads.id, id), eq(codeUploads.accountId, accountId)))
    .get();
}

export async function listCodeUploads(db: Db, accountId: string, pageSize: number, cursor?: string): Promise<Page<CodeUploadRow>> {
  const req = { orderingName: "code-uploads:-created_at", ordering: NEWEST_FIRST, cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(codeUploads)
    .where(and(eq(codeUploads.accountId, accountId), plan.where))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}
