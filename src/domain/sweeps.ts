// A sweep's cancel and deletion (docs/api.md#sweeps): each acts on every child. The children still
// waiting for a slot never start: they are ended together, in one batch with the request that stops any
// more of them being admitted; the admitted ones that are live are stopped and billed one by one, as a
// submission's cancel or delete does. A cancel then ends the sweep (`cancelled`, with its event); a
// deletion removes the children and the sweep (their results stay) and fires nothing.
import type { Bindings } from "../env";
import { ApiError } from "../errors";
import { nowIso } from "../lib/ids";
import { getDb } from "../storage/db";
import {
  cancelWaitingStatements,
  childrenWithLiveRun,
  deleteSweepRows,
  liveAdmittedChildRuns,
  markDeletingStatement,
  requestCancelStatement,
  type SweepRow,
} from "../storage/sweeps";
import { cancelRun, deleteSubmission } from "./submissions";
import { finishSweep } from "./sweep-progress";

/** Cancels a running sweep: 409 once it has ended. Its children's events are not sent; the sweep's is. */
export async function cancelSweep(env: Bindings, sweep: SweepRow): Promise<void> {
  if (sweep.status !== "running") throw new ApiError("invalid_state", `The sweep has already ${sweep.status}; there is nothing to cancel.`);
  const db = getDb(env.DB);
  const now = nowIso();
  await db.batch([requestCancelStatement(db, sweep.id, now), ...cancelWaitingStatements(db, sweep.id, crypto.randomUUID(), now)]);
  for (const run of await liveAdmittedChildRuns(db, sweep.id)) await cancelRun(env, run, true);
  await finishSweep(env, sweep.id);
}

/** Deletes a sweep, every child of it first (live ones stopped and billed), then the sweep. Their results stay. */
export async function deleteSweep(env: Bindings, sweep: SweepRow): Promise<void> {
  const db = getDb(env.DB);
  const now = nowIso();
  await db.batch([markDeletingStatement(db, sweep.id, now), ...cancelWaitingStatements(db, sweep.id, crypto.randomUUID(), now)]);
  for (const child of await childrenWithLiveRun(db, sweep.id)) await deleteSubmission(env, child);
  await deleteSweepRows(db, sweep.id);
}
