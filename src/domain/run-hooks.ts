// What else happens when a run ends, after domain/transitions.ts has written the end (exactly once):
// the admission gates get the run's slot back (gates/), and the webhook events written in the same
// batch are sent (webhooks/). Every hook is idempotent, so a retry after a crash is harmless.
import type { Bindings } from "../env";
import { accountGate } from "../gates/admission";
import type { EndedRun } from "./transitions";
import { enqueueRunDeliveries } from "../webhooks/outbox";

export async function afterRunEnded(env: Bindings, ended: EndedRun): Promise<void> {
  await Promise.all([releaseAdmission(env, ended), sendWebhookEvents(env, ended)]);
}

/** Enqueues the deliveries the run's end wrote (idempotent: each is claimed once; the cron sends any left). */
async function sendWebhookEvents(env: Bindings, ended: EndedRun): Promise<void> {
  if (ended.source !== "api" || ended.status === "deleted") return;
  await enqueueRunDeliveries(env, ended.run.id).catch((err) => console.error("webhook dispatch failed; the cron will send", ended.run.id, err));
}

/** The run's slot and in-flight place (its platform queue place went with its status, in D1). */
async function releaseAdmission(env: Bindings, ended: EndedRun): Promise<void> {
  await accountGate(env, ended.run.accountId).release(ended.run.id);
}
