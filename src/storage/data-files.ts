// Data files (docs/api.md#data-files): the account's listings, the bytes they and its submissions hold
// (one row per account and sha256), what each submission's runs read, and the sweep of bytes nothing
// holds any more. The lifetime of the bytes: docs/decisions.md#data-files.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "./db";
import { finishPage, type Ordering, type Page, planPage } from "./pagination";
import { dataBlobs, dataFiles, submissionDataFiles } from "./schema";

export type DataFileRow = typeof dataFiles.$inferSelect;
export type DataBlobRow = typeof dataBlobs.$inferSelect;
export type SubmissionDataFileRow = typeof submissionDataFiles.$inferSelect;

const NEWEST_FIRST: Ordering = { key: dataFiles.createdAt, id: dataFiles.id, descending: true, valueOf: (r) => r.createdAt as string };

/** Nothing holds these bytes: no listing and no submission's runs (the condition of every sweep). */
const unheld = sql`NOT EXISTS (SELECT 1 FROM data_files f WHERE f.account_id = data_blobs.account_id AND f.sha256 = data_blobs.sha256)
  AND NOT EXISTS (SELECT 1 FROM submission_data_files s WHERE s.account_id = data_blobs.account_id AND s.sha256 = data_blobs.sha256)`;

/** The bytes the account keeps now: every distinct content a listing or a submission holds (its storage). */
export async function dataStorageUsed(db: Db, accountId: string): Promise<number> {
  const row = await db
    .select({ used: sql<number>`coalesce(sum(${dataBlobs.sizeBytes}), 0)` })
    .from(dataBlobs)
    .where(eq(dataBlobs.accountId, accountId))
    .get();
  return Number(row?.used ?? 0);
}

/**
 * Records an upload whose bytes are in R2 at `blob.r2Key`, in one batch: its bytes (unless the account
 * already keeps the same ones, or keeping them would take its storage past `storageLimit`) and, where the
 * bytes are kept, the listing. Answers whether the listing was made and the key the bytes are kept under
 * (another upload's, when they were there before: then `blob.r2Key` is not needed).
 */
export async function insertDataFile(
  db: Db,
  row: DataFileRow,
  blob: DataBlobRow,
  storageLimit: number,
): Promise<{ listed: boolean; keptKey: string | null }> {
  const [, listed, kept] = await db.batch([
    db.run(sql`
      INSERT INTO data_blobs (account_id, sha256, size_bytes, r2_key, created_at)
      SELECT ${blob.accountId}, ${blob.sha256}, ${blob.sizeBytes}, ${blob.r2Key}, ${blob.createdAt}
      WHERE NOT EXISTS (SELECT 1 FROM data_blobs WHERE account_id = ${blob.accountId} AND sha256 = ${blob.sha256})
        AND (SELECT coalesce(sum(size_bytes), 0) FROM data_blobs WHERE account_id = ${blob.accountId}) + ${blob.sizeBytes} <= ${storageLimit}`),
    db.run(sql`
      INSERT INTO data_files (id, account_id, name, content_type, size_bytes, sha256, created_at)
      SELECT ${row.id}, ${row.accountId}, ${row.name}, ${row.contentType}, ${row.sizeBytes}, ${row.sha256}, ${row.createdAt}
      WHERE EXISTS (SELECT 1 FROM data_blobs WHERE account_id = ${row.accountId} AND sha256 = ${row.sha256})`),
    db
      .select({ r2Key: dataBlobs.r2Key })
      .from(dataBlobs)
      .where(and(eq(dataBlobs.accountId, blob.accountId), eq(dataBlobs.sha256, blob.sha256))),
  ]);
  const changes = (listed as { meta?: { changes?: number } }).meta?.changes ?? 0;
  return { listed: changes === 1, keptKey: kept[0]?.r2Key ?? null };
}

export async function getDataFile(db: Db, accountId: string, id: string): Promise<DataFileRow | undefined> {
  return db
    .select()
    .from(dataFiles)
    .where(and(eq(dataFiles.id, id), eq(dataFiles.accountId, accountId)))
    .get();
}

/** The listings of `ids` that belong to the account. */
export async function dataFilesByIds(db: Db, accountId: string, ids: string[]): Promise<DataFileRow[]> {
  if (!ids.length) return [];
  return db
    .select()
    .from(dataFiles)
    .where(and(eq(dataFiles.accountId, accountId), inArray(dataFiles.id, ids)))
    .all();
}

export async function listDataFiles(db: Db, accountId: string, pageSize: number, cursor?: string): Promise<Page<DataFileRow>> {
  const req = { orderingName: "data-files:-created_at", ordering: NEWEST_FIRST, cursor, pageSize };
  const plan = planPage(req);
  const rows = await db
    .select()
    .from(dataFiles)
    .where(and(eq(dataFiles.accountId, accountId), plan.where))
    .orderBy(...plan.orderBy)
    .limit(plan.limit)
    .all();
  return finishPage(req, plan, rows);
}

/** The account's newest listings, at most `limit` (the dashboard's form offers them). */
export async function recentDataFiles(db: Db, accountId: string, limit: number): Promise<DataFileRow[]> {
  return db
    .select()
    .from(dataFiles)
    .where(eq(dataFiles.accountId, accountId))
    .orderBy(desc(dataFiles.createdAt), desc(dataFiles.id))
    .limit(limit)
    .all();
}

/**
 * Deletes a listing and, in the same batch, its bytes when nothing else holds them; answers the R2 keys
 * whose rows went (to delete from R2), or null when there was no such listing.
 */
export async function deleteDataFileRow(db: Db, row: DataFileRow): Promise<string[] | null> {
  const [deleted, swept] = await db.batch([
    db
      .delete(dataFiles)
      .where(and(eq(dataFiles.id, row.id), eq(dataFiles.accountId, row.accountId)))
      .returning({ id: dataFiles.id }),
    sweepStatement(db, row.accountId, row.sha256),
  ]);
  if (!deleted.length) return null;
  return swept.map((r) => r.r2Key);
}

/** Deletes the bytes (account, sha256) when nothing holds them, RETURNING their R2 key. */
function sweepStatement(db: Db, accountId: string, sha256: string) {
  return db
    .delete(dataBlobs)
    .where(and(eq(dataBlobs.accountId, accountId), eq(dataBlobs.sha256, sha256), unheld))
    .returning({ r2Key: dataBlobs.r2Key });
}

/** Deletes the bytes of these contents that nothing holds any more (after a submission was deleted); their R2 keys. */
export async function sweepContents(db: Db, accountId: string, sha256s: string[]): Promise<string[]> {
  if (!sha256s.length) return [];
  const results = await db.batch(sha256s.map((sha) => sweepStatement(db, accountId, sha)) as [ReturnType<typeof sweepStatement>]);
  return results.flat().map((r) => r.r2Key);
}

/** Up to `limit` rows of bytes nothing holds (any account): deleted, their R2 keys answered. */
export async function sweepUnheld(db: Db, limit: number): Promise<string[]> {
  const rows = await db.all<{ r2_key: string }>(sql`
    DELETE FROM data_blobs WHERE rowid IN (SELECT rowid FROM data_blobs WHERE ${unheld} LIMIT ${limit})
    RETURNING r2_key`);
  return rows.map((r) => r.r2_key);
}

/** Which of these R2 keys a row of bytes still names. */
export async function keptKeys(db: Db, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await db.select({ r2Key: dataBlobs.r2Key }).from(dataBlobs).where(inArray(dataBlobs.r2Key, keys)).all();
  return new Set(rows.map((r) => r.r2Key));
}

export async function getBlob(db: Db, accountId: string, sha256: string): Promise<DataBlobRow | undefined> {
  return db
    .select()
    .from(dataBlobs)
    .where(and(eq(dataBlobs.accountId, accountId), eq(dataBlobs.sha256, sha256)))
    .get();
}

/** What a submission's runs may read: every data file any of its runs named, by the id they named it with. */
export async function submissionDataFilesOf(db: Db, submissionId: string): Promise<SubmissionDataFileRow[]> {
  return db
    .select()
    .from(submissionDataFiles)
    .where(eq(submissionDataFiles.submissionId, submissionId))
    .orderBy(submissionDataFiles.createdAt, submissionDataFiles.name)
    .all();
}

/** What every child of a sweep recorded (their contents: the bytes to look at once the children are deleted). */
export async function sweepChildrenDataFiles(db: Db, sweepId: string): Promise<SubmissionDataFileRow[]> {
  return db
    .select()
    .from(submissionDataFiles)
    .where(inArray(submissionDataFiles.submissionId, sql`(SELECT id FROM submissions WHERE sweep_id = ${sweepId})`))
    .all();
}

/**
 * The statements that record what `rows` stand for with their submission (a run that names them is being
 * added in the same batch). An id the submission has already is left as it is. The bytes must still be
 * kept (a foreign key): a listing deleted and swept since it was read fails the whole batch.
 */
export function submissionDataFileStatements(db: Db, rows: SubmissionDataFileRow[]) {
  return rows.map((row) => db.insert(submissionDataFiles).values(row).onConflictDoNothing());
}

/**
 * The statement that records `files` with every child submission of a sweep (written in the sweep's own
 * batch, after its children): one statement whatever the number of children. As above, the bytes must
 * still be kept, or the whole batch fails on the foreign key.
 */
export function sweepDataFilesStatement(
  db: Db,
  sweepId: string,
  files: Pick<SubmissionDataFileRow, "dataFileId" | "name" | "contentType" | "sizeBytes" | "sha256">[],
  now: string,
) {
  return db.run(sql`
    INSERT INTO submission_data_files (submission_id, data_file_id, account_id, name, content_type, size_bytes, sha256, created_at)
    SELECT s.id, j.value ->> '$.dataFileId', s.account_id, j.value ->> '$.name', j.value ->> '$.contentType',
      j.value ->> '$.sizeBytes', j.value ->> '$.sha256', ${now}
    FROM submissions s JOIN json_each(${JSON.stringify(files)}) j
    WHERE s.sweep_id = ${sweepId}`);
}

/** Whether a database error is a foreign key's refusal (the bytes of a data file went while it was named). */
export const isForeignKeyFailure = (err: unknown): boolean =>
  err instanceof Error && /FOREIGN KEY constraint failed/i.test(`${err.message} ${String((err as { cause?: unknown }).cause ?? "")}`);
