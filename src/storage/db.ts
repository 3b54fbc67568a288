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
