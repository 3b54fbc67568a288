// Webhook events and their delivery inside workerd: the outbox written with a run's end, the consumer's
// attempts against stand-in receivers (signature, retry schedule, timeout, exhaustion, rotation,
// delivery-time URL checks, deactivation and deletion) and the cron's re-enqueue.
// @ts-expect-error -- Node's Buffer and crypto run here under nodejs_compat; the Worker tsconfig carries no Node types.
import { Buffer } from "node:buffer";
// @ts-expect-error -- as above
import { createHmac, timingSafeEqual } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { requeueDueDeliveries } from "../../src/events/outbox";
import { LITERALS, RESOLVED } from "../helpers/address-classes";
import { call, createSubmission, env, finishSubmission, json, latestRunId, newAccount, type TestAccount } from "../helpers/api";
import { attemptRows, Clock, consume, deliveriesOf, deliveryRow, holdDeliveryQueue, queuedIds, seedDelivery } from "../helpers/deliveries";
import { type FakeNet, fakeNet, hangingReceiver, type Received } from "../helpers/net";

const HOOK = "https://hooks.example.com";
let account: TestAccount;
let net: FakeNet;
let answers: number[];
let queue: ReturnType<typeof holdDeliveryQueue>;

beforeEach(async () => {
  queue = holdDeliveryQueue();
  account = await newAccount();
  answers = [];
  net = fakeNet({
    dns: { "hooks.example.com": ["93.184.215.14"] },
    receivers: { [HOOK]: () => new Response("ok", { status: answers.shift() ?? 200, headers: { "X-Receiver": "test" } }) },
  });
});
afterEach(() => {
  net.restore();
  queue.mockRestore();
});

async function webhook(
  events = ["submission.succeeded", "result.completed", "submission.failed", "submission.cancelled"],
  extra: Record<string, unknown> = {},
) {
  const res = await call("/api/v1/webhooks", { key: account.key, body: { url: `${HOOK}/in`, events, ...extra } });
  expect(res.status).toBe(201);
  return json(res);
}

/** Node's crypto, independently of src/: the receiver's check over the exact received bytes. */
function verifies(secret: string, r: Received): boolean {
  const expected = `sha256=${createHmac("sha256", secret).update(`${r.headers["x-signature-timestamp"]}.`).update(Buffer.from(r.body, "utf8")).digest("hex")}`;
  const got = Buffer.from(r.headers["x-signature"] ?? "");
  return got.length === expected.length && timingSafeEqual(got, Buffer.from(expected));
}

const MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("events of a run's end (outbox)", () => {
  it("a succeeded api run writes submission.succeeded and result.completed, enqueued, and delivers them signed", async () => {
    const hook = await webhook();
    const submissionId = await createSubmission(account.key);
    const resultId = await finishSubmission(account.key, submissionId, { fitness: -1.5e-7 });
    const rows = await deliveriesOf(hook.id);
    expect(rows.map((r) => r.event_type).sort()).toEqual(["result.completed", "submission.succeeded"]);
    for (const row of rows) {
      expect(row).toMatchObject({ status: "pending", attempt_count: 0 });
      expect(row.enqueued_at).not.toBeNull();
      expect(row.id).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(queuedIds(queue).sort()).toEqual(rows.map((r) => r.id).sort());

    for (const row of rows) expect(await consume(row.id)).toEqual({ retried: undefined, acked: true });
    expect(net.received).toHaveLength(2);
    const byType = Object.fromEntries(net.received.map((r) => [r.headers["x-event-type"], r]));
    for (const r of net.received) {
      expect(r.url).toBe(`${HOOK}/in`);
      expect(verifies(hook.secret, r)).toBe(true);
      expect(r.headers).toMatchObject({ "content-type": "application/json", "user-agent": "Allele-Webhook/1.0" });
      expect(r.headers["user-agent"]).toMatch(/^[A-Za-z]+-Webhook\/[\d.]+$/);
      expect(Math.abs(Number(r.headers["x-signature-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).toEqual(["event_id", "event_type", "occurred_at", "data"]);
      expect(body.event_id).toMatch(UUID);
      expect(body.event_id).toBe(r.headers["x-event-id"]);
      expect(body.event_type).toBe(r.headers["x-event-type"]);
      expect(body.occurred_at).toMatch(MICROS);
      // The stored bytes are the sent bytes.
      expect(rows.find((row) => row.event_type === body.event_type)!.body).toBe(r.body);
    }
    const runId = await latestRunId(account.key, submissionId);
    const run = await env.DB.prepare("SELECT * FROM runs WHERE id = ?").bind(runId).first<Record<string, any>>();
    expect(JSON.parse(byType["submission.succeeded"]!.body).data).toEqual({
      submission_id: submissionId,
      result_id: resultId,
      status: "succeeded",
      execution_duration_ms: 700,
      cpu_seconds_used: 0.5,
      peak_memory_mb: 60,
      hit_memory_cap: false,
      hit_time_cap: false,
      best_solution_fitness: "-0.00000015",
      num_objectives: 1,
      best_solution_objectives: null,
      pareto_front_size: null,
    });
    expect(JSON.parse(byType["result.completed"]!.body).data).toEqual({
      submission_id: submissionId,
      result_id: resultId,
      best_solution_fitness: "-0.00000015",
      num_objectives: 1,
      best_solution_objectives: null,
      pareto_front_size: null,
      generations_completed: 4,
    });
    expect(JSON.parse(byType["submission.succeeded"]!.body).occurred_at).toBe(run!.finished_at.replace("Z", "000+00:00"));
    const after = await json(await call(`/api/v1/webhooks/${hook.id}`, { key: account.key }));
    expect(after.last_delivery_status).toBe("succeeded");
    expect(Date.parse(after.last_delivery_at)).not.toBeNaN();
    expect(after).not.toHaveProperty("secret");
  });

  it("a failed run writes submission.failed with the error; a cancel writes submission.cancelled", async () => {
    const hook = await webhook();
    const failed = await createSubmission(account.key);
    await finishSubmission(account.key, failed, {
      status: "failed",
      error: { code: "code_error", message: "line 3: boom" },
      metrics: { hit_time_cap: true },
    });
    const cancelled = await createSubmission(account.key);
    expect((await call(`/api/v1/submissions/${cancelled}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    const rows = await deliveriesOf(hook.id);
    expect(rows.map((r) => r.event_type)).toEqual(["submission.failed", "submission.cancelled"]);
    expect(JSON.parse(rows[0]!.body).data).toEqual({
      submission_id: failed,
      status: "failed",
      error: { code: "code_error", message: "line 3: boom" },
      execution_duration_ms: 700,
      cpu_seconds_used: 0.5,
      peak_memory_mb: 60,
      hit_memory_cap: false,
      hit_time_cap: true,
    });
    const data = JSON.parse(rows[1]!.body).data;
    expect(Object.keys(data).sort()).toEqual(["cpu_seconds_used", "execution_duration_ms", "status", "submission_id"]);
    expect(data).toMatchObject({ submission_id: cancelled, status: "cancelled" });
  });

  it("only subscribed, active webhooks of the account get a delivery; a deleted submission fires nothing", async () => {
    const all = await webhook();
    const onlyFailed = await webhook(["submission.failed"]);
    const inactive = await webhook(["submission.succeeded"], { is_active: false });
    const stranger = await newAccount();
    const theirs = await json(
      await call("/api/v1/webhooks", { key: stranger.key, body: { url: `${HOOK}/x`, events: ["submission.succeeded"] } }),
    );
    await finishSubmission(account.key, await createSubmission(account.key));
    expect(await deliveriesOf(all.id)).toHaveLength(2);
    expect(await deliveriesOf(onlyFailed.id)).toHaveLength(0);
    expect(await deliveriesOf(inactive.id)).toHaveLength(0);
    expect(await deliveriesOf(theirs.id)).toHaveLength(0);
    const deleted = await createSubmission(account.key);
    expect((await call(`/api/v1/submissions/${deleted}`, { key: account.key, method: "DELETE" })).status).toBe(204);
    expect(await deliveriesOf(all.id)).toHaveLength(2);
  });

  it("runs of web submissions fire no events", async () => {
    const hook = await webhook();
    const submissionId = await createSubmission(account.key);
    await env.DB.prepare("UPDATE submissions SET source = 'web' WHERE id = ?").bind(submissionId).run();
    await finishSubmission(account.key, submissionId);
    expect(await deliveriesOf(hook.id)).toEqual([]);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE submission_id = ?")
      .bind(submissionId)
      .first<{ n: number }>();
    expect(events!.n).toBe(0);
  });

  it("the cron re-enqueues a due delivery that was never sent, once", async () => {
    const hook = await webhook(["submission.cancelled"]);
    const seeded = await seedDelivery(account.id, hook.id);
    expect(await requeueDueDeliveries(env)).toBeGreaterThanOrEqual(1);
    expect(queuedIds(queue)).toContain(seeded.id);
    expect((await deliveryRow(seeded.id))!.enqueued_at).not.toBeNull();
    queue.mockClear();
    await requeueDueDeliveries(env);
    expect(queuedIds(queue)).not.toContain(seeded.id);
    // A message lost after a retry (due long ago, not moved since) is sent again.
    await env.DB.prepare("UPDATE deliveries SET next_attempt_at = ?, enqueued_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 600_000).toISOString(), new Date(Date.now() - 900_000).toISOString(), seeded.id)
      .run();
    await requeueDueDeliveries(env);
    expect(queuedIds(queue)).toContain(seeded.id);
  });
});

describe("delivery attempts", () => {
  async function oneDelivery(events = ["submission.cancelled"]) {
    const hook = await webhook(events);
    const submissionId = await createSubmission(account.key);
    expect((await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    const [row] = await deliveriesOf(hook.id);
    return { hook, delivery: row! };
  }

  it("a receiver that answers 500 then 200: retried after 1 minute with the same body and event id, fresh signature", async () => {
    const { hook, delivery } = await oneDelivery();
    answers = [500, 200];
    const clock = new Clock();
    expect(await consume(delivery.id, clock)).toEqual({ retried: { delaySeconds: 60 }, acked: false });
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "pending", attempt_count: 1 });
    expect((await json(await call(`/api/v1/webhooks/${hook.id}`, { key: account.key }))).last_delivery_status).toBe("failed");
    clock.advance(60);
    expect(await consume(delivery.id, clock, { attempts: 2 })).toEqual({ retried: undefined, acked: true });
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "succeeded", attempt_count: 2 });
    const [first, second] = net.received;
    expect(second!.body).toBe(first!.body);
    expect(second!.headers["x-event-id"]).toBe(first!.headers["x-event-id"]);
    expect(Number(second!.headers["x-signature-timestamp"]) - Number(first!.headers["x-signature-timestamp"])).toBeGreaterThanOrEqual(59);
    expect(second!.headers["x-signature"]).not.toBe(first!.headers["x-signature"]);
    expect(verifies(hook.secret, first!) && verifies(hook.secret, second!)).toBe(true);
    const attempts = await attemptRows(delivery.id);
    expect(attempts.map((a) => [a.attempt_no, a.response_status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(attempts[0]).toMatchObject({ request_url: `${HOOK}/in`, response_body: "ok", network_error: null });
    expect(attempts[0]!.request_headers["X-Event-Id"]).toBe(delivery.event_id);
    expect(attempts[0]!.response_headers["x-receiver"]).toBe("test");
    expect((await json(await call(`/api/v1/webhooks/${hook.id}`, { key: account.key }))).last_delivery_status).toBe("succeeded");
  });

  it("follows the retry schedule 1 min, 5 min, 30 min, 2 h, 12 h, then marks the delivery failed (past 24 h of trying)", async () => {
    const { hook, delivery } = await oneDelivery();
    answers = [500, 502, 503, 404, 400, 500];
    const clock = new Clock();
    const delays: (number | undefined)[] = [];
    for (let attempt = 1; attempt <= 6; attempt++) {
      const { retried, acked } = await consume(delivery.id, clock, { attempts: attempt });
      delays.push(retried?.delaySeconds);
      expect(acked).toBe(attempt === 6);
      if (retried) {
        const row = await deliveryRow(delivery.id);
        expect(Date.parse(row!.next_attempt_at) - clock.now()).toBeGreaterThan((retried.delaySeconds - 5) * 1000);
        clock.advance(retried.delaySeconds);
      }
    }
    expect(delays).toEqual([60, 300, 1800, 7200, 43200, undefined]);
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "failed", attempt_count: 6, next_attempt_at: null });
    expect(new Set(net.received.map((r) => r.headers["x-event-id"]))).toEqual(new Set([delivery.event_id]));
    expect(new Set(net.received.map((r) => r.body)).size).toBe(1);
    expect((await attemptRows(delivery.id)).map((a) => a.response_status)).toEqual([500, 502, 503, 404, 400, 500]);
    expect((await json(await call(`/api/v1/webhooks/${hook.id}`, { key: account.key }))).last_delivery_status).toBe("failed");
    // Another message for it changes nothing.
    expect(await consume(delivery.id, clock)).toEqual({ retried: undefined, acked: true });
    expect(net.received).toHaveLength(6);
  });

  it("a delivery still pending 24 hours after its event is marked failed without another attempt", async () => {
    const { delivery } = await oneDelivery();
    const clock = new Clock();
    clock.advance(24 * 3600 + 60);
    expect(await consume(delivery.id, clock)).toEqual({ retried: undefined, acked: true });
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "failed", attempt_count: 0 });
    expect(net.received).toHaveLength(0);
  });

  it("a receiver that hangs past 10 s is a failed attempt (timeout), retried", { timeout: 30_000 }, async () => {
    const { delivery } = await oneDelivery();
    net.receivers[HOOK] = hangingReceiver;
    const started = Date.now();
    expect(await consume(delivery.id)).toEqual({ retried: { delaySeconds: 60 }, acked: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_900);
    expect(Date.now() - started).toBeLessThan(15_000);
    const [attempt] = await attemptRows(delivery.id);
    expect(attempt).toMatchObject({ response_status: null, network_error: "timeout: no answer within 10 s" });
    expect(attempt!.duration_ms).toBeGreaterThanOrEqual(9_900);
  });

  it("a redirect is not followed and counts as a failure; a network error too", async () => {
    const { delivery } = await oneDelivery();
    net.receivers[HOOK] = () => new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/" } });
    expect((await consume(delivery.id)).retried).toEqual({ delaySeconds: 60 });
    expect(net.received).toHaveLength(1);
    net.receivers[HOOK] = () => {
      throw new Error("connection refused");
    };
    const clock = new Clock();
    clock.advance(61);
    expect((await consume(delivery.id, clock)).retried).toEqual({ delaySeconds: 300 });
    const attempts = await attemptRows(delivery.id);
    expect(attempts[0]).toMatchObject({ response_status: 302, network_error: null });
    expect(attempts[1]).toMatchObject({ response_status: null });
    expect(attempts[1]!.network_error).toMatch(/^network error: .*connection refused/);
  });

  it("keeps the first 8 KB of a response body", async () => {
    const { delivery } = await oneDelivery();
    net.receivers[HOOK] = () => new Response("x".repeat(20_000), { status: 200 });
    await consume(delivery.id);
    const [attempt] = await attemptRows(delivery.id);
    expect(attempt!.response_body).toHaveLength(8192);
  });

  it("rotating the secret mid-retry: the next attempt is signed with the new secret only", async () => {
    const { hook, delivery } = await oneDelivery();
    answers = [500, 200];
    const clock = new Clock();
    await consume(delivery.id, clock);
    const rotated = await json(await call(`/api/v1/webhooks/${hook.id}/rotate-secret`, { key: account.key, method: "POST" }));
    clock.advance(60);
    await consume(delivery.id, clock);
    const [first, second] = net.received;
    expect(verifies(hook.secret, first!)).toBe(true);
    expect(verifies(rotated.secret, second!)).toBe(true);
    expect(verifies(hook.secret, second!)).toBe(false);
  });

  it("a duplicate message is harmless: one request per attempt", async () => {
    const { delivery } = await oneDelivery();
    await Promise.all([consume(delivery.id), consume(delivery.id), consume(delivery.id)]);
    expect(net.received).toHaveLength(1);
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "succeeded", attempt_count: 1 });
    expect(await attemptRows(delivery.id)).toHaveLength(1);
  });

  it("a message that comes before the retry is due is dropped without an attempt", async () => {
    const { delivery } = await oneDelivery();
    answers = [500];
    await consume(delivery.id);
    expect(await consume(delivery.id)).toEqual({ retried: undefined, acked: true });
    expect(net.received).toHaveLength(1);
  });

  it("deactivating stops delivery: a pending delivery is not sent and no new ones are written", async () => {
    const { hook, delivery } = await oneDelivery();
    answers = [500];
    const clock = new Clock();
    await consume(delivery.id, clock);
    await call(`/api/v1/webhooks/${hook.id}`, { key: account.key, method: "PATCH", body: { is_active: false } });
    clock.advance(60);
    expect(await consume(delivery.id, clock)).toEqual({ retried: undefined, acked: true });
    expect(net.received).toHaveLength(1);
    expect((await deliveryRow(delivery.id))!.status).toBe("failed");
    const another = await createSubmission(account.key);
    await call(`/api/v1/submissions/${another}/cancel`, { key: account.key, method: "POST" });
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
  });

  it("deleting stops delivery: its pending deliveries go with it", async () => {
    const { hook, delivery } = await oneDelivery();
    expect((await call(`/api/v1/webhooks/${hook.id}`, { key: account.key, method: "DELETE" })).status).toBe(204);
    expect(await consume(delivery.id)).toEqual({ retried: undefined, acked: true });
    expect(net.received).toHaveLength(0);
    expect(await deliveryRow(delivery.id)).toBeNull();
  });
});

describe("URL safety at delivery", () => {
  it("a host that resolved public at create and private later is not contacted; the attempt fails and is retried", async () => {
    const hook = await webhook(["submission.cancelled"]);
    for (const [label, , address] of RESOLVED) {
      net.dns["hooks.example.com"] = [address];
      const seeded = await seedDelivery(account.id, hook.id);
      const outcome = await consume(seeded.id);
      expect(outcome.retried, label).toEqual({ delaySeconds: 60 });
      const [attempt] = await attemptRows(seeded.id);
      expect(attempt!.network_error, label).toMatch(/^blocked \(non_public_address\)/);
      expect(attempt!.response_status).toBeNull();
    }
    expect(net.received).toHaveLength(0);
    net.dns["hooks.example.com"] = ["93.184.215.14"];
    const ok = await seedDelivery(account.id, hook.id);
    expect((await consume(ok.id)).acked).toBe(true);
    expect(net.received).toHaveLength(1);
  });

  it("a stored URL that is an IP literal or a local name in any notation is not contacted", async () => {
    const hook = await webhook(["submission.cancelled"]);
    for (const [label, url] of [...LITERALS, ["http scheme", `http://hooks.example.com/in`] as [string, string]]) {
      await env.DB.prepare("UPDATE webhooks SET url = ? WHERE id = ?").bind(url, hook.id).run();
      const seeded = await seedDelivery(account.id, hook.id);
      expect((await consume(seeded.id)).retried, label).toEqual({ delaySeconds: 60 });
      const [attempt] = await attemptRows(seeded.id);
      expect(attempt!.network_error, label).toMatch(/^blocked \((non_public_address|host_not_allowed|scheme_not_allowed)\)/);
    }
    expect(net.received).toHaveLength(0);
  });
});
