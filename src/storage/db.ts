// The drizzle database of a D1 binding, and what a batch's results say.
import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof getDb>;

export function getDb(d1: D1Database) {
  const db = drizzle(d1, { schema });
  // Work-around for drizzle-orm's open bug #2277 (still in 0.45): D1 `batch` binds each statement's
  // parameters on `stmt`, which a raw `db.run(sql`…`)` does not carry, so a raw statement with parameters
  // inside a batch threw "reading 'bind'". Give it its prepared statement. Remove when drizzle fixes it.
  const run = db.run.bind(db);
  db.run = ((query: Parameters<typeof run>[0]) => {
    const raw = run(query) as ReturnType<typeof run> & { stmt?: D1PreparedStatement; getQuery(): { sql: string } };
    raw.stmt = d1.prepare(raw.getQuery().sql);
    return raw;
  }) as typeof db.run;
  return db;
}

/** How many rows a statement of a batch changed (D1's `meta.changes`; 0 when it says nothing). */
export function rowsChanged(result: unknown): number {
  const meta = typeof result === "object" && result !== null && "meta" in result ? result.meta : null;
  return typeof meta === "object" && meta !== null && "changes" in meta && typeof meta.changes === "number" ? meta.changes : 0;
}

/** How many rows a statement with RETURNING gave back in a batch (D1's `results`). */
export function rowsReturned(result: unknown): number {
  const rows = typeof result === "object" && result !== null && "results" in result ? result.results : null;
  return Array.isArray(rows) ? rows.length : 0;
}

/** The cheapest statement there is: whether the database answers (readiness, the benchmarks' floor). */
export const probeDatabase = (d1: D1Database) => d1.prepare("SELECT 1 AS one").first<{ one: number }>();
