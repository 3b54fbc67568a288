// The platform-wide count of queued runs (docs/api.md#limits, PLATFORM_QUEUE_CAP). Triggers on `runs`
// (migrations/0001_platform_queue.sql, redefined by 0008_sweeps.sql: a sweep's child awaiting a slot is not
// counted, and its admission is cap-checked as an insert is) keep the count and refuse a new queued run at the cap, inside
// the same D1 transaction as the run's own change; the Worker only states the cap in force.
import { and, eq, ne } from "drizzle-orm";
import type { Db } from "./db";
import { platformQueue } from "./schema";

/**
 * Put this first in the batch that inserts a queued run: the cap the insert's trigger checks. It writes
 * only when PLATFORM_QUEUE_CAP has changed, so a write does not rewrite the one shared row for nothing.
 */
export const platformCapStatement = (db: Db, cap: number) =>
  db
    .update(platformQueue)
    .set({ cap })
    .where(and(eq(platformQueue.id, 1), ne(platformQueue.cap, cap)));

/** Whether a failed batch was refused by the cap trigger (RAISE(ABORT, 'platform_at_capacity')). */
export function isPlatformAtCapacity(err: unknown): boolean {
  const message = typeof err === "object" && err !== null && "message" in err ? err.message : undefined;
  return /platform_at_capacity/.test(String(message ?? err));
}
