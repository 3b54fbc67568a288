// The runs queue consumer: claim a queued run (queued → running) and start it on a worker.
// A message is only a pointer; D1 decides. A duplicate or late message, or one whose submission was
// deleted or cancelled, finds nothing to claim and is acknowledged.
import type { Bindings } from "../env";
import { claimRun, MissingPopulation, startRun, unclaimRun } from "../domain/runs";
import { endRun } from "../domain/transitions";
import { getRunner } from "../runner/runner";
import { getDb } from "../storage/db";
import { getRun } from "../storage/submissions";
import type { RunMessage } from "../env";

/** Start attempts before a run fails with worker_unavailable (the queue's max_retries is higher). */
export const MAX_START_ATTEMPTS = 5;
const retryDelay = (attempts: number) => Math.min(60, 5 * 2 ** (attempts - 1));

export async function handleRunMessage(env: Bindings, message: Message<RunMessage>): Promise<void> {
  const runId = message.body?.run_id;
  if (typeof runId !== "string") {
    console.error("runs queue: malformed message dropped", message.id);
    return message.ack();
  }
  const claimed = await claimRun(env, runId);
  if (!claimed) return message.ack();
  const { run } = claimed;

  try {
    await startRun(env, claimed);
  } catch (err) {
    if (err instanceof MissingPopulation) {
      await endRun(env, run.id, { status: "failed", error: { code: "invalid_state", message: err.message } });
      return message.ack();
    }
    console.error("runs queue: start failed", runId, err);
    if (message.attempts >= MAX_START_ATTEMPTS) {
      await endRun(env, run.id, {
        status: "failed",
        error: { code: "worker_unavailable", message: "No worker could take the run; it was not started and is not billed." },
      });
      return message.ack();
    }
    await unclaimRun(env, run);
    return message.retry({ delaySeconds: retryDelay(message.attempts) });
  }

  // A cancel or delete that came while the worker was starting could not stop it: stop it now.
  const now = await getRun(getDb(env.DB), run.id);
  if (!now || now.status !== "running") await getRunner(env).cancel(run.id).catch(() => null);
  message.ack();
}

export async function handleRunBatch(batch: MessageBatch<RunMessage>, env: Bindings): Promise<void> {
  await Promise.all(batch.messages.map((m) => handleRunMessage(env, m)));
}
