// The cron handler: nothing stays stuck. Safe to run twice (every change is conditional).

import { config } from "../config";
import { accountGate } from "../do/account-gate/client";
import { collectDataFiles } from "../domain/data-files";
import { recoverLostRun } from "../domain/lost-runs";
import { runMessage } from "../domain/run-queue";
import { admitWaiting, finishSweep } from "../domain/sweep-progress";
import { deleteSweep } from "../domain/sweeps";
import type { Bindings } from "../env";
import { runsQueue } from "../env";
import { nowIso } from "../lib/ids";
import { getDb } from "../storage/db";
import { recentlyEndedRuns, restampQueuedRun, silentRuns, staleQueuedRuns } from "../storage/runs";
import { accountsWithWaitingChildren, stalledDeletions, unendedSweeps } from "../storage/sweeps";

/** A running run whose worker has not reported for this long is lost (HEARTBEAT_TIMEOUT_SECONDS; test suites shorten it). */
export const HEARTBEAT_TIMEOUT_MS = 60_000;
/** A queued run not taken for this long is put on the queue again (local queues forget messages). */
export const QUEUED_TIMEOUT_MS = 120_000;
/** Runs that ended this recently have their slot and queue place released again (idempotent). */
export const RECENTLY_ENDED_MS = 15 * 60_000;
const BATCH = 100;

export async function reconcileRuns(env: Bindings, now = Date.now()): Promise<{ requeued: number; lost: number }> {
  const db = getDb(env.DB);
  let requeued = 0;
  let lost = 0;
  const stamp = nowIso();

  const silent = await silentRuns(db, new Date(now - (config(env).heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS)).toISOString(), BATCH);
  for (const run of silent) {
    // A lost worker: the run goes on from its last checkpoint, or fails past MAX_RESUMES (domain/lost-runs.ts).
    const outcome = await recoverLostRun(env, run);
    if (outcome === "failed") lost++;
    if (outcome === "resumed") requeued++;
  }

  const waiting = await staleQueuedRuns(db, new Date(now - QUEUED_TIMEOUT_MS).toISOString(), BATCH);
  for (const run of waiting) {
    if (await restampQueuedRun(db, run, stamp)) {
      await runsQueue(env).send(runMessage(run));
      requeued++;
    }
  }
  return { requeued, lost };
}

/**
 * Gives back the slot of every run that ended recently. Normally the run's end already did
 * (afterRunEnded, domain/transitions.ts) and this changes nothing; it matters when the Worker stopped between writing a
 * run's end and releasing its slot. (The AccountGate's alarm also frees slots whose run no longer
 * exists at all, such as a deleted submission's.)
 */
export async function releaseEndedRuns(env: Bindings, now = Date.now()): Promise<number> {
  const ended = await recentlyEndedRuns(getDb(env.DB), new Date(now - RECENTLY_ENDED_MS).toISOString(), 500);
  const released = await Promise.all(ended.map((run) => accountGate(env, run.accountId).release(run.id)));
  return released.filter(Boolean).length;
}

/**
 * Data files' bytes that nothing holds any more go (a deletion whose own sweep did not finish), and once an
 * hour R2 objects no row names (docs/decisions.md#data-files).
 */
export async function collectDataFileBytes(env: Bindings, now = Date.now()): Promise<number> {
  try {
    return await collectDataFiles(env, now);
  } catch (err) {
    console.error("the data files' sweep failed; the next cron tries again", err);
    return 0;
  }
}

/** A sweep's deletion not finished this long after it began is finished by the cron. */
export const STALLED_DELETION_MS = 60_000;

/**
 * The sweeps' part (docs/api.md#sweeps): deletions that stopped midway are finished, sweeps whose last
 * child ended without the sweep's end being written are ended (with their event, once), and every account
 * with children waiting for a slot gets an admission pass (a slot freed by a run whose end's follow-up
 * did not run, a platform queue that drained, credits topped up, an admission that died midway).
 */
export async function reconcileSweeps(env: Bindings, now = Date.now()): Promise<{ deleted: number; ended: number; admitted: number }> {
  const db = getDb(env.DB);
  let deleted = 0;
  let ended = 0;
  let admitted = 0;
  for (const sweep of await stalledDeletions(db, new Date(now - STALLED_DELETION_MS).toISOString(), 10)) {
    await deleteSweep(env, sweep);
    deleted++;
  }
  for (const id of await unendedSweeps(db, BATCH)) if (await finishSweep(env, id)) ended++;
  for (const accountId of await accountsWithWaitingChildren(db, BATCH)) admitted += await admitWaiting(env, accountId);
  return { deleted, ended, admitted };
}
