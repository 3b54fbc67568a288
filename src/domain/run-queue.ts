// A queued run's way onto the runs queue: its message (the run, its account and its places) and the send
// that does not delay an answer. Apart from submissions.ts so that what admits runs without ending any
// (a sweep's waiting children: sweep-progress.ts) can use it below transitions.ts.
import type { Bindings, RunMessage } from "../env";
import { runsQueue } from "../env";
import { type GaParameters, parallelWorkers } from "../model/parameters";

/** What a run's queue message is made of. */
export interface QueuedRun {
  id: string;
  accountId: string;
  parameters: Pick<GaParameters, "parallel_processing">;
}

/** The runs queue's message for a run that asks for a place (its account and places ride along). */
export const runMessage = (run: QueuedRun): RunMessage => ({
  run_id: run.id,
  account_id: run.accountId,
  places: parallelWorkers(run.parameters),
});

/**
 * Puts an admitted run on the runs queue. The routes hand it to `waitUntil`, so the 202 does not wait
 * for the queue. The run's row is already written, so a failed send loses nothing: the cron puts every
 * run that stayed queued for QUEUED_TIMEOUT_MS on the queue again (queues/scheduled.ts).
 */
export async function enqueueRun(env: Bindings, run: QueuedRun): Promise<void> {
  try {
    await runsQueue(env).send(runMessage(run));
  } catch (err) {
    console.error("runs queue send failed; the cron will enqueue the run", run.id, err);
  }
}
