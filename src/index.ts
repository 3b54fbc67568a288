// The Worker's entry points: HTTP, queue consumers, cron, and the wiring of the container's outbound
// handler to the app. No logic here.
import { newApp } from "./app";
import type { Bindings, DeliveryMessage, RunMessage } from "./env";
import { requeueDueDeliveries } from "./events/outbox";
import { handleDeliveryBatch } from "./queues/deliveries";
import { handleRunBatch } from "./queues/runs";
import { reconcileRuns, reconcileSweeps, releaseEndedRuns } from "./queues/scheduled";

export { AccountGate } from "./do/account-gate/object";
export { Dispatcher } from "./do/dispatcher/object";
export { IpRateLimit } from "./do/ip-rate-limit/object";

import { GaRunner, GaRunnerWide, INTERNAL_HOST } from "./runner/container-runner";

export { ContainerProxy } from "@cloudflare/containers";
export { GaRunner, GaRunnerWide };

const app = newApp();

// The containers' reports (to http://allele.internal/...) are served by the same app.
GaRunner.outboundByHost = GaRunnerWide.outboundByHost = { [INTERNAL_HOST]: (req: Request, env: Bindings) => app.fetch(req, env) };

export default {
  fetch: app.fetch,
  async queue(batch, env) {
    if (batch.queue.startsWith("allele-runs")) return handleRunBatch(batch as MessageBatch<RunMessage>, env);
    if (batch.queue.startsWith("allele-deliveries")) return handleDeliveryBatch(batch as MessageBatch<DeliveryMessage>, env);
    console.error("message from an unknown queue", batch.queue);
  },
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(reconcileRuns(env).then(() => undefined));
    ctx.waitUntil(releaseEndedRuns(env).then(() => undefined));
    ctx.waitUntil(reconcileSweeps(env).then(() => undefined));
    ctx.waitUntil(requeueDueDeliveries(env).then(() => undefined));
  },
} satisfies ExportedHandler<Bindings>;
