// The runs queue consumer: a queued run asks the Dispatcher for a place; once it has one, it is claimed
// (queued → running) and started on a worker. A message is only a pointer (with the run's account and
// places as hints for the offer); D1 decides. A duplicate or late message, or one whose submission was
// deleted or cancelled, finds nothing to claim and is acknowledged (giving back the place or turn it held).
// A `lost` message (a container's stop signal) resumes its run instead, if it still runs that claim.

import { givePlaceBack, offerPlace, releasePlace } from "../do/dispatcher/client";
import type { Offer } from "../do/dispatcher/object";
import { recoverLostSegment } from "../domain/lost-runs";
import { claimRun, MissingInput, startRun, unclaimRun } from "../domain/runs";
import { endRun } from "../domain/transitions";
import type { Bindings, RunMessage } from "../env";
import { parallelWorkers } from "../model/parameters";
import { isLive } from "../model/runs";
import { getRunner, WorkerFull } from "../runner/runner";
import { getDb } from "../storage/db";
import { getRun } from "../storage/submissions";

/**
 * Start attempts before a run fails with worker_unavailable (the queue's max_retries is 10): with the
 * delays below, a run waits about six minutes for a worker — a deploy rolling every instance, or a
 * platform restarting a lost one, is over by then.
 */
export const MAX_START_ATTEMPTS = 10;
const retryDelay = (attempts: number) => Math.min(60, 5 * 2 ** (attempts - 1));

export async function handleRunMessage(env: Bindings, message: Message<RunMessage>): Promise<void> {
  const runId = message.body?.run_id;
  if (typeof runId !== "string") {
    console.error("runs queue: malformed message dropped", message.id);
    return message.ack();
  }
  if (message.body.lost) {
    // A container's stop signal: the run's segment was lost, and goes on from its last checkpoint at once
    // (the silent-run sweep's resume for this one run; src/runner/segment.ts).
    try {
      await recoverLostSegment(env, runId, message.body.lost.attempt);
      return message.ack();
    } catch (err) {
      console.error("runs queue: a lost run's resume failed; tried again", runId, err);
      return message.retry({ delaySeconds: 5 });
    }
  }
  const db = getDb(env.DB);
  if (message.body.granted !== true) {
    // A run asking for a place: only a queued run waits for one (a running run has its place). The
    // message names the run's account and places, so the offer goes first and the claim below decides
    // (a message without them, from an older build, reads them from the run).
    const { account_id: accountId, places } = message.body;
    let offer: Offer;
    if (typeof accountId === "string" && typeof places === "number") {
      offer = { runId, accountId, places };
    } else {
      const waiting = await getRun(db, runId);
      if (waiting?.status !== "queued") return message.ack();
      offer = { runId, accountId: waiting.accountId, places: parallelWorkers(waiting.parameters) };
    }
    if (!(await offerPlace(env, offer))) {
      // It waits in line for its grant — unless the message came late for a run no longer queued
      // (cancelled or deleted while waiting, or a duplicate): its turn goes back at once.
      const now = await getRun(db, runId);
      if (now?.status !== "queued") await releasePlace(env, runId);
      return message.ack();
    }
  }
  const claimed = await claimRun(env, runId);
  if (!claimed) {
    // Cancelled, deleted or ended meanwhile: its place goes to the next in line (a running run keeps it).
    const now = await getRun(db, runId);
    if (!now || !isLive(now.status)) await releasePlace(env, runId);
    return message.ack();
  }
  const { run } = claimed;

  try {
    await startRun(env, claimed);
  } catch (err) {
    if (err instanceof MissingInput) {
      await endRun(env, run.id, { status: "failed", error: { code: "invalid_state", message: err.message } });
      return message.ack();
    }
    if (err instanceof WorkerFull) {
      // The worker has fewer places than the books say: the run waits at the head of the line. Never a failure.
      await unclaimRun(env, run);
      await givePlaceBack(env, { runId, accountId: run.accountId, places: parallelWorkers(run.parameters) });
      return message.ack();
    }
    console.error("runs queue: start failed", runId, err);
    if (message.attempts >= MAX_START_ATTEMPTS) {
      await endRun(env, run.id, {
        status: "failed",
        error: {
          code: "worker_unavailable",
          message: run.resumes?.length
            ? "No worker could take the run to resume it from its checkpoint; only its earlier segments are billed."
            : "No worker could take the run; it was not started and is not billed.",
        },
      });
      return message.ack();
    }
    // A real fault (the worker cannot be reached): the run keeps its place and tries again later.
    await unclaimRun(env, run);
    return message.retry({ delaySeconds: retryDelay(message.attempts) });
  }

  // A cancel or delete that came while the worker was starting could not stop it: stop it now.
  const now = await getRun(db, run.id);
  if (now?.status !== "running")
    await getRunner(env)
      .cancel(run)
      .catch(() => null);
  message.ack();
}

export async function handleRunBatch(batch: MessageBatch<RunMessage>, env: Bindings): Promise<void> {
  await Promise.all(batch.messages.map((m) => handleRunMessage(env, m)));
}
