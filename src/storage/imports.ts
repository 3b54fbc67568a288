// The rows of an import (docs/api.md#imports): a submission, its one run (kind `import`, already
// succeeded, never charged), its result and the result's file records — one batch, so all or nothing.
import type { Db } from "./db";
import { resultFiles, results, runs, submissions } from "./schema";

export interface ImportRows {
  submission: typeof submissions.$inferInsert;
  run: typeof runs.$inferInsert;
  result: typeof results.$inferInsert;
  files: (typeof resultFiles.$inferInsert)[];
}

export async function insertImport(db: Db, rows: ImportRows): Promise<void> {
  await db.batch([
    db.insert(submissions).values(rows.submission),
    db.insert(runs).values(rows.run),
    db.insert(results).values(rows.result),
    ...rows.files.map((file) => db.insert(resultFiles).values(file)),
  ]);
}
