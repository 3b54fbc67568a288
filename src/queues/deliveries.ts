// The deliveries queue consumer: each message names one delivery; D1 decides what to do. A failed
// attempt puts the message back with the schedule's delay (the queue's retry-with-delay); success,
// the final failure, or a message that finds nothing to do is acknowledged.
import type { Bindings, DeliveryMessage } from "../env";
import { attemptDelivery, type DeliveryDeps, defaultDeps } from "../webhooks/deliver";

export async function handleDeliveryMessage(
  env: Bindings,
  message: Message<DeliveryMessage>,
  deps: DeliveryDeps = defaultDeps(env),
): Promise<void> {
  const deliveryId = message.body?.delivery_id;
  if (typeof deliveryId !== "string") {
    console.error("deliveries queue: malformed message dropped", message.id);
    return message.ack();
  }
  try {
    const outcome = await attemptDelivery(env, deliveryId, deps);
    if (outcome.kind === "retry") return message.retry({ delaySeconds: outcome.delaySeconds });
    message.ack();
  } catch (err) {
    // Our own failure (D1 unavailable): try again soon; the attempt claim keeps this harmless.
    console.error("deliveries queue: attempt failed", deliveryId, err);
    message.retry({ delaySeconds: 30 });
  }
}

export async function handleDeliveryBatch(batch: MessageBatch<DeliveryMessage>, env: Bindings): Promise<void> {
  const deps = defaultDeps(env);
  await Promise.all(batch.messages.map((m) => handleDeliveryMessage(env, m, deps)));
}
