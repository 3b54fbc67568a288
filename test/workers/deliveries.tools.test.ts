// The dashboard tools' engine: Test, Replay (10 per minute per account each, exact under races) and Inspect.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { deliveryLog, fireTest, inspectDelivery, replayDelivery } from "../../src/webhooks/tools";
import { call, createSubmission, env, json, newAccount, type TestAccount } from "../helpers/api";
import { consume, deliveryRow, holdDeliveryQueue, queuedIds } from "../helpers/deliveries";
import { type FakeNet, fakeNet } from "../helpers/net";

const HOOK = "https://hooks.example.com";
let account: TestAccount;
let net: FakeNet;
let hook: any;
let queue: ReturnType<typeof holdDeliveryQueue>;

beforeEach(async () => {
  queue = holdDeliveryQueue();
  account = await newAccount();
  net = fakeNet({ dns: { "hooks.example.com": ["93.184.215.14"] }, receivers: { [HOOK]: () => new Response("thanks", { status: 200 }) } });
  hook = await json(
    await call("/api/v1/webhooks", {
      key: account.key,
      body: { url: `${HOOK}/in`, events: ["submission.succeeded", "submission.cancelled"] },
    }),
  );
});
afterEach(() => {
  net.restore();
  queue.mockRestore();
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected an ApiError");
}

describe("Test", () => {
  it("fires a synthetic webhook.test through the pipeline: sample data, fixed occurred_at, signed, logged", async () => {
    const fired = await fireTest(env, account.id, hook.id, "submission.succeeded");
    expect(fired.event_type).toBe("webhook.test");
    const row = await deliveryRow(fired.delivery_id);
    expect(row).toMatchObject({ status: "pending", is_test: 1, webhook_id: hook.id });
    expect(row!.enqueued_at).not.toBeNull();
    expect(queuedIds(queue)).toEqual([fired.delivery_id]);
    await consume(fired.delivery_id);
    const [received] = net.received;
    const body = JSON.parse(received!.body);
    expect(body).toMatchObject({ event_id: fired.event_id, event_type: "webhook.test", occurred_at: "2000-01-01T00:00:00.000000+00:00" });
    expect(body.data).toMatchObject({
      test: true,
      sample_of: "submission.succeeded",
      status: "succeeded",
      best_solution_fitness: "-0.0123",
    });
    expect(Object.keys(body.data).sort()).toEqual(
      [
        ...[
          "test",
          "sample_of",
          "submission_id",
          "result_id",
          "status",
          "execution_duration_ms",
          "cpu_seconds_used",
          "peak_memory_mb",
          "hit_memory_cap",
          "hit_time_cap",
        ],
        ...["best_solution_fitness", "num_objectives", "best_solution_objectives", "pareto_front_size"],
      ].sort(),
    );
    expect(received!.headers["x-event-type"]).toBe("webhook.test");
    const log = await deliveryLog(env, account.id, hook.id);
    expect(log.rows[0]).toMatchObject({ id: fired.delivery_id, status: "succeeded", is_test: true });
  });

  it("accepts webhook.test itself and any subscribed type; refuses others, inactive webhooks and strangers", async () => {
    const plain = await fireTest(env, account.id, hook.id);
    await consume(plain.delivery_id);
    expect(JSON.parse(net.received[0]!.body).data).toEqual({ test: true, sample_of: "webhook.test" });
    expect((await rejection(fireTest(env, account.id, hook.id, "submission.failed"))).code).toBe("validation_failed");
    const stranger = await newAccount();
    expect((await rejection(fireTest(env, stranger.id, hook.id))).code).toBe("not_found");
    await call(`/api/v1/webhooks/${hook.id}`, { key: account.key, method: "PATCH", body: { is_active: false } });
    expect((await rejection(fireTest(env, account.id, hook.id))).code).toBe("invalid_state");
  });

  it("is limited to 10 per minute per account, exactly under a race, with retry_after and bucket", async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 14 }, () => fireTest(env, account.id, hook.id)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(10);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected").map((o) => o.reason as ApiError);
    expect(refused).toHaveLength(4);
    for (const err of refused) {
      expect(err.code).toBe("rate_limited");
      expect(err.status).toBe(429);
      expect(err.details).toMatchObject({ bucket: "webhook_test" });
      expect(err.details.retry_after).toBeGreaterThanOrEqual(1);
      expect(err.details.retry_after).toBeLessThanOrEqual(60);
      expect(err.headers["Retry-After"]).toBe(String(err.details.retry_after));
    }
    // Replay has its own bucket; another account is unaffected.
    const other = await newAccount();
    const theirs = await json(await call("/api/v1/webhooks", { key: other.key, body: { url: `${HOOK}/o`, events: ["webhook.test"] } }));
    await expect(fireTest(env, other.id, theirs.id)).resolves.toMatchObject({ event_type: "webhook.test" });
    // The window rolls: move the account's tests back in time and it may test again.
    await env.DB.prepare("UPDATE events SET created_at = '2000-01-01T00:00:00.000Z' WHERE account_id = ? AND origin = 'test'")
      .bind(account.id)
      .run();
    await expect(fireTest(env, account.id, hook.id)).resolves.toBeTruthy();
  });
});

describe("Replay and Inspect", () => {
  async function failedDelivery() {
    net.receivers[HOOK] = () => new Response("nope", { status: 500, headers: { "X-Why": "down" } });
    const submissionId = await createSubmission(account.key);
    await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" });
    const row = await env.DB.prepare("SELECT * FROM deliveries WHERE webhook_id = ?").bind(hook.id).first<Record<string, any>>();
    await consume(row!.id);
    return { submissionId, delivery: row! };
  }

  it("Inspect shows the request, the original payload and each attempt's response", async () => {
    const { delivery } = await failedDelivery();
    const view = await inspectDelivery(env, account.id, hook.id, delivery.id);
    expect(view).toMatchObject({
      id: delivery.id,
      webhook_id: hook.id,
      event_type: "submission.cancelled",
      status: "pending",
      attempt_count: 1,
      payload: delivery.body,
    });
    expect(view.attempts).toHaveLength(1);
    const [attempt] = view.attempts;
    expect(attempt).toMatchObject({
      attempt_no: 1,
      request_url: `${HOOK}/in`,
      response_status: 500,
      response_body: "nope",
      network_error: null,
    });
    expect(attempt!.request_headers).toMatchObject({ "X-Event-Type": "submission.cancelled", "User-Agent": "Allele-Webhook/1.0" });
    expect(attempt!.response_headers).toMatchObject({ "x-why": "down" });
    expect(attempt!.duration_ms).toBeGreaterThanOrEqual(0);
    expect((await rejection(inspectDelivery(env, (await newAccount()).id, hook.id, delivery.id))).code).toBe("not_found");
  });

  it("Replay sends the same type and data under a fresh event id, occurred_at and signature", async () => {
    const { delivery } = await failedDelivery();
    net.receivers[HOOK] = () => new Response("ok");
    const replay = await replayDelivery(env, account.id, hook.id, delivery.id);
    expect(replay.event_id).not.toBe(delivery.event_id);
    expect(await deliveryRow(replay.delivery_id)).toMatchObject({ replay_of: delivery.id, event_type: "submission.cancelled" });
    await consume(replay.delivery_id);
    const original = JSON.parse(delivery.body);
    const sent = JSON.parse(net.received.at(-1)!.body);
    expect(sent.event_id).toBe(replay.event_id);
    expect(sent.event_type).toBe(original.event_type);
    expect(sent.data).toEqual(original.data);
    expect(sent.occurred_at).not.toBe(original.occurred_at);
    expect(sent.occurred_at).toMatch(/\.\d{6}\+00:00$/);
    expect(net.received.at(-1)!.headers["x-signature"]).not.toBe(net.received[0]!.headers["x-signature"]);
    expect((await deliveryRow(replay.delivery_id))!.status).toBe("succeeded");
  });

  it("Replay is limited to 10 per minute per account (bucket webhook_replay)", async () => {
    const { delivery } = await failedDelivery();
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => replayDelivery(env, account.id, hook.id, delivery.id)));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(10);
    const err = (outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult).reason as ApiError;
    expect(err.code).toBe("rate_limited");
    expect(err.details.bucket).toBe("webhook_replay");
    // Test still has its own allowance.
    await expect(fireTest(env, account.id, hook.id)).resolves.toBeTruthy();
  });
});
