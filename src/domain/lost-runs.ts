// A run whose worker was lost (docs/architecture.md#durable-runs-issue-28): it goes on from its last
// checkpoint on any worker, at most MAX_RESUMES times; the next loss fails it with `worker_lost`. Two
// paths find a loss and both come here: the cron's silent-run sweep (no report for
// HEARTBEAT_TIMEOUT_SECONDS) and a container's stop signal (a GaRunner instance whose container stopped
// while its segment was live: a `lost` message on the runs queue).
import { MAX_RESUMES } from "../admission/limits";
import type { Bindings } from "../env";
import { runsQueue } from "../env";
import { getDb } from "../storage/db";
import { getRun, type RunRow } from "../storage/submissions";
import { runMessage } from "./run-queue";
import { resumeRun } from "./runs";
import { endRun } from "./transitions";

/**
 * Resumes a running run whose worker was lost (back in line, its resume and `run.resumed` recorded in
 * one batch, billed once at its end), or fails it past MAX_RESUMES. Conditional like every change of a
 * run: a run that ended, was cancelled or deleted, or moved since `run` was read is left alone (null).
 */
export async function recoverLostRun(env: Bindings, run: RunRow): Promise<"resumed" | "failed" | null> {
  if ((run.resumes?.length ?? 0) >= MAX_RESUMES) {
    const ended = await endRun(env, run.id, {
      status: "failed",
      error: {
        code: "worker_lost",
        message: `The worker running this job was lost ${MAX_RESUMES + 1} times; the run was abandoned.`,
      },
    });
    return ended ? "failed" : null;
  }
  // Its submission shows `queued` again, as after any other unclaim; from generation 0 without a checkpoint.
  if (!(await resumeRun(env, run))) return null;
  await runsQueue(env).send(runMessage(run));
  return "resumed";
}

/**
 * A container's stop signal: the segment its instance ran (claim `attempt`) was lost. Only a run still
 * `running` that attempt is recovered, at once; one handed back by a drain, claimed again, ended,
 * cancelled or deleted meanwhile is not (null) — so a second stop event, or the sweep coming first,
 * resumes it once.
 */
export async function recoverLostSegment(env: Bindings, runId: string, attempt: number): Promise<"resumed" | "failed" | null> {
  const run = await getRun(getDb(env.DB), runId);
  if (run?.status !== "running" || run.attempts !== attempt) return null;
  return recoverLostRun(env, run);
}
