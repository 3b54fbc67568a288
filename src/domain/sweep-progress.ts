// A sweep's progress without ending any run (docs/api.md#sweeps): its children waiting for a slot are
// admitted, in order, as the account's slots free, and the sweep ends — exactly once, with its
// `sweep.completed` event in the outbox — when its last child has ended. Both are called after every run's
// end (transitions.ts afterRunEnded), by a sweep's creation and cancel, and by the cron (nothing is lost
// when a Worker dies midway: D1 holds what waits, the account's gate admits atomically, and a repeated
// pass finds a half-done admission and finishes it).
import { admitChild, platformQueueCap } from "../admission/admission";
import { accountGate } from "../do/account-gate/client";
import type { GateError } from "../do/account-gate/object";
import type { Bindings } from "../env";
import { enqueueEventDeliveries, sweepEndOutboxStatements } from "../events/outbox";
import { nowIso } from "../lib/ids";
import { isLive } from "../model/runs";
import { compareCombinations } from "../model/sweeps";
import { getAccount } from "../storage/accounts";
import { getDb, rowsReturned } from "../storage/db";
import { isPlatformAtCapacity } from "../storage/platform-queue";
import { getRun } from "../storage/submissions";
import {
  endSweepStatement,
  getSweepById,
  hasLiveChild,
  markChildAdmitted,
  recordWaitingOn,
  sweepChildren,
  sweepEndedBy,
  waitingChildren,
} from "../storage/sweeps";
import { enqueueRun } from "./run-queue";
import { combinationSamples } from "./sweep-figures";

/** Children looked at per pass (a pass stops at the first one without a slot; the next run's end goes on). */
const PASS = 50;

/** The refusals that concern the whole account (no later child would pass either): the pass stops there. */
const ACCOUNT_WIDE = new Set<GateError["code"]>(["capacity_exceeded", "too_many_active_api_requests", "insufficient_credits"]);

/**
 * Admits the account's waiting children, oldest sweep first and each sweep's in its order, each through
 * the same admission call as a submission (admission.ts admitChild): its slot is taken in the account's
 * gate, then D1 records the admission (the child joins the platform queue) and the run goes on the runs
 * queue. The pass stops at the first refusal of the whole account (no slot, no in-flight place, credits);
 * a parameter cap refuses one child, which keeps waiting while the next ones are tried. Why a sweep's
 * child still waits is recorded on the sweep. Returns how many children were admitted.
 */
export async function admitWaiting(env: Bindings, accountId: string): Promise<number> {
  const db = getDb(env.DB);
  const waiting = await waitingChildren(db, accountId, PASS);
  if (!waiting.length) return 0;
  const account = await getAccount(db, accountId);
  if (!account) return 0;
  const gate = accountGate(env, accountId);
  let admitted = 0;
  const blocked = new Map<string, { code: string; message: string } | null>();
  // Why the sweeps of the children from `from` on wait: the refusal that stopped the pass.
  const stopAt = (from: number, on: { code: string; message: string }) => {
    for (const later of waiting.slice(from)) if (!blocked.get(later.sweepId)) blocked.set(later.sweepId, on);
  };
  for (const [i, child] of waiting.entries()) {
    const refusal = await admitChild(env, account, child.parameters, child.runId, child.paidWithCredits ? "credits" : "plan");
    if (refusal) {
      const on = { code: refusal.code, message: refusal.message };
      if (ACCOUNT_WIDE.has(refusal.code)) {
        stopAt(i, on);
        break;
      }
      if (!blocked.get(child.sweepId)) blocked.set(child.sweepId, on);
      continue;
    }
    let moved: boolean;
    try {
      moved = await markChildAdmitted(db, child.runId, nowIso(), platformQueueCap(env));
    } catch (err) {
      if (!isPlatformAtCapacity(err)) throw err;
      // The platform's queue is full: the slot goes back and the child waits (the cron tries again).
      await gate.release(child.runId);
      stopAt(i, { code: "capacity_exceeded", message: "The platform's queue is full; the children wait for it to drain." });
      break;
    }
    if (moved) {
      await enqueueRun(env, { id: child.runId, accountId, parameters: child.parameters });
      admitted++;
      if (!blocked.has(child.sweepId)) blocked.set(child.sweepId, null);
      continue;
    }
    // Not waiting any more: another pass admitted it (it keeps the slot it holds), or it was cancelled or
    // deleted meanwhile, or its sweep is being cancelled (the slot is given back).
    const run = await getRun(db, child.runId);
    if (!run || !isLive(run.status) || run.awaitingSlot) await gate.release(child.runId);
  }
  await Promise.all([...blocked].map(([sweepId, on]) => recordWaitingOn(db, sweepId, on)));
  return admitted;
}

/**
 * Ends the sweep if it is running and none of its children is live any more: `completed`, or `cancelled`
 * when a cancel was asked. The end and its `sweep.completed` event (an API sweep's; docs/webhooks.md#events)
 * are one D1 batch whose event statements apply only where this caller's end won, so racing callers end
 * it and fire its event once; the winner then sends the deliveries (the cron sends whatever is left).
 */
export async function finishSweep(env: Bindings, sweepId: string): Promise<boolean> {
  const db = getDb(env.DB);
  const sweep = await getSweepById(db, sweepId);
  if (sweep?.status !== "running" || (await hasLiveChild(db, sweepId))) return false;
  const children = await sweepChildren(db, sweepId);
  if (children.some((c) => isLive(c.status))) return false;
  const now = nowIso();
  const token = crypto.randomUUID();
  const eventId = crypto.randomUUID();
  const count = (status: string) => children.filter((c) => c.status === status).length;
  const { best } = compareCombinations(combinationSamples(sweep.combinations.length, children));
  const statements = [
    endSweepStatement(db, sweepId, token, now),
    ...(sweep.source === "api"
      ? sweepEndOutboxStatements(
          db,
          eventId,
          sweep.accountId,
          now,
          {
            sweepId,
            name: sweep.name,
            status: sweep.cancelRequestedAt ? "cancelled" : "completed",
            children: children.length,
            succeeded: count("succeeded"),
            failed: count("failed"),
            cancelled: count("cancelled"),
            bestCombination: best,
          },
          sweepEndedBy(sweepId, token),
        )
      : []),
  ];
  const [ended] = await db.batch(statements as [(typeof statements)[0], ...typeof statements]);
  if (rowsReturned(ended) !== 1) return false;
  if (sweep.source === "api") {
    await enqueueEventDeliveries(env, eventId).catch((err) => console.error("webhook dispatch failed; the cron will send", sweepId, err));
  }
  return true;
}
