// What else happens when a run ends, after domain/transitions.ts has written the end (exactly once):
// the admission gates get the run's slot back (gates/), and the webhook events written in the same
// batch are sent (webhooks/). Every hook is idempotent, so a retry after a crash is harmless.
import type { Bindings } from "../env";
import { accountGate, platformQueue } from "../gates/admission";
import type { EndedRun } from "./transitions";

export async function afterRunEnded(env: Bindings, ended: EndedRun): Promise<void> {
  await Promise.all([releaseAdmission(env, ended)]);
}

/** The run's slot and in-flight place, and its platform queue place if it never started. */
async function releaseAdmission(env: Bindings, ended: EndedRun): Promise<void> {
  await Promise.all([accountGate(env, ended.run.accountId).release(ended.run.id), platformQueue(env).release(ended.run.id)]);
}
