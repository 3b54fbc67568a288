// The delivery log and the dashboard's tools in the REST API (docs/webhooks.md#dashboard-tools):
// GET deliveries (status filter, paging), inspect, POST test, replay, resend — happy paths, errors,
// scopes and other accounts.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, env, json, newAccount, newKey, type TestAccount } from "../helpers/api";
import { attemptRows, consume, deliveryRow, holdDeliveryQueue, queuedIds } from "../helpers/deliveries";
import { type FakeNet, fakeNet } from "../helpers/net";

const HOOK = "https://hooks.example.com";
let account: TestAccount;
let net: FakeNet;
let hook: { id: string };
let queue: ReturnType<typeof holdDeliveryQueue>;
let answer = 200;

beforeEach(async () => {
  answer = 200;
  queue = holdDeliveryQueue();
  account = await newAccount();
  net = fakeNet({
    dns: { "hooks.example.com": ["93.184.215.14"] },
    receivers: { [HOOK]: () => new Response("received", { status: answer, headers: { "X-Receiver": "yes" } }) },
  });
  hook = await json(
    await call("/api/v1/webhooks", {
      key: account.key,
      body: { url: `${HOOK}/in`, events: ["submission.succeeded", "submission.failed"] },
    }),
  );
});
afterEach(() => {
  net.restore();
  queue.mockRestore();
});

const base = () => `/api/v1/webhooks/${hook.id}`;

async function fireTest(body?: unknown, key = account.key) {
  return call(`${base()}/test`, { key, method: "POST", body });
}

describe("POST /webhooks/{id}/test", () => {
  it("fires a synthetic event (202) that goes through the queue and the log; the data imitates the type asked for", async () => {
    const res = await fireTest({ event_type: "submission.failed" });
    expect(res.status).toBe(202);
    const fired = await json(res);
    expect(fired).toMatchObject({
      event_type: "webhook.test",
      delivery_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      event_id: expect.any(String),
    });
    expect(queuedIds(queue)).toEqual([fired.delivery_id]);
    await consume(fired.delivery_id);
    expect(JSON.parse(net.received[0]!.body).data).toMatchObject({ test: true, sample_of: "submission.failed", status: "failed" });
  });

  it("takes no body (webhook.test itself); refuses an unsubscribed type (400), an inactive webhook (409), unknown fields (400)", async () => {
    expect((await fireTest()).status).toBe(202);
    const unsubscribed = await fireTest({ event_type: "submission.cancelled" });
    expect(unsubscribed.status).toBe(400);
    expect((await json(unsubscribed)).error.details.fields[0].field).toBe("event_type");
    expect((await fireTest({ event_type: "webhook.test", extra: 1 })).status).toBe(400);
    await call(base(), { key: account.key, method: "PATCH", body: { is_active: false } });
    expect((await json(await fireTest())).error.code).toBe("invalid_state");
  });

  it("is limited to 10 per minute per account: the 11th is 429 with Retry-After and bucket webhook_test", async () => {
    for (let i = 0; i < 10; i++) expect((await fireTest()).status).toBe(202);
    const over = await fireTest();
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect((await json(over)).error).toMatchObject({ code: "rate_limited", details: { bucket: "webhook_test", limit: 10 } });
  });
});

describe("GET /webhooks/{id}/deliveries and inspect", () => {
  it("lists newest first with a status filter and cursor paging; inspect shows payload and every attempt", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await json(await fireTest())).delivery_id);
    answer = 500;
    await consume(ids[0]!);
    answer = 200;
    await consume(ids[1]!);
    const all = await json(await call(`${base()}/deliveries?page_size=2`, { key: account.key }));
    expect(all.results.map((d: any) => d.id)).toEqual([ids[2], ids[1]]);
    expect(all.results[0]).toMatchObject({ webhook_id: hook.id, status: "pending", is_test: true, resend_count: 0 });
    const second = await json(await call(`${base()}/deliveries${all.next}`, { key: account.key }));
    expect(second.results.map((d: any) => d.id)).toEqual([ids[0]]);
    expect(second.next).toBeNull();
    const succeeded = await json(await call(`${base()}/deliveries?status=succeeded`, { key: account.key }));
    expect(succeeded.results.map((d: any) => d.id)).toEqual([ids[1]]);
    const pendingOrSucceeded = await json(await call(`${base()}/deliveries?status=pending,succeeded`, { key: account.key }));
    expect(pendingOrSucceeded.results.map((d: any) => d.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect((await call(`${base()}/deliveries?status=lost`, { key: account.key })).status).toBe(400);

    const inspected = await json(await call(`${base()}/deliveries/${ids[0]}`, { key: account.key }));
    expect(inspected).toMatchObject({ id: ids[0], status: "pending", attempt_count: 1 });
    expect(JSON.parse(inspected.payload)).toMatchObject({ event_type: "webhook.test" });
    expect(inspected.attempts).toHaveLength(1);
    expect(inspected.attempts[0]).toMatchObject({
      attempt_no: 1,
      request_url: `${HOOK}/in`,
      response_status: 500,
      response_body: "received",
      network_error: null,
    });
    expect(inspected.attempts[0].request_headers["x-signature"] ?? inspected.attempts[0].request_headers["X-Signature"]).toMatch(
      /^sha256=/,
    );
    expect(inspected.attempts[0].response_headers["x-receiver"]).toBe("yes");
  });

  it("a delivery of another webhook of the same account is 404 under this one", async () => {
    const other = await json(
      await call("/api/v1/webhooks", { key: account.key, body: { url: `${HOOK}/other`, events: ["submission.succeeded"] } }),
    );
    const fired = await json(await fireTest());
    expect((await call(`/api/v1/webhooks/${other.id}/deliveries/${fired.delivery_id}`, { key: account.key })).status).toBe(404);
    expect((await call(`${base()}/deliveries/0000000000000000`, { key: account.key })).status).toBe(404);
  });
});

describe("replay and resend", () => {
  it("replay makes a new delivery with a fresh event id and the same data (replay_of names the original)", async () => {
    const fired = await json(await fireTest({ event_type: "submission.succeeded" }));
    await consume(fired.delivery_id);
    const res = await call(`${base()}/deliveries/${fired.delivery_id}/replay`, { key: account.key, method: "POST" });
    expect(res.status).toBe(202);
    const replay = await json(res);
    expect(replay.event_id).not.toBe(fired.event_id);
    expect(await deliveryRow(replay.delivery_id)).toMatchObject({ replay_of: fired.delivery_id, status: "pending" });
    await consume(replay.delivery_id);
    expect(JSON.parse(net.received[1]!.body).data).toEqual(JSON.parse(net.received[0]!.body).data);
  });

  it("resend restarts a failed delivery: same event id, a new series of attempts with the whole retry schedule", async () => {
    const fired = await json(await fireTest());
    answer = 500;
    await consume(fired.delivery_id);
    // Six failed attempts end a series; here the end is written directly (the schedule is tested in test/workers).
    await env.DB.prepare("UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ?").bind(fired.delivery_id).run();
    const notFailed = await json(await fireTest());
    expect((await call(`${base()}/deliveries/${notFailed.delivery_id}/resend`, { key: account.key, method: "POST" })).status).toBe(409);

    const sentBefore = queuedIds(queue).length;
    const res = await call(`${base()}/deliveries/${fired.delivery_id}/resend`, { key: account.key, method: "POST" });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ delivery_id: fired.delivery_id, event_id: fired.event_id });
    expect(await deliveryRow(fired.delivery_id)).toMatchObject({ status: "pending", series_base: 1, resend_count: 1 });
    // Sent on the queue again by the re-send itself.
    expect(queuedIds(queue).slice(sentBefore)).toEqual([fired.delivery_id]);
    const outcome = await consume(fired.delivery_id);
    // Attempt 2 is the first of the new series: its retry comes after 1 minute, not 5.
    expect(outcome.retried).toEqual({ delaySeconds: 60 });
    expect((await attemptRows(fired.delivery_id)).map((a) => a.attempt_no)).toEqual([1, 2]);
    expect(net.received.map((r) => r.headers["x-event-id"])).toEqual([fired.event_id, fired.event_id]);
    // Pending again: a second resend is refused until it has failed again.
    expect((await call(`${base()}/deliveries/${fired.delivery_id}/resend`, { key: account.key, method: "POST" })).status).toBe(409);
  });
});

describe("scopes, other accounts, methods", () => {
  it("reads need webhooks:read, tools need webhooks:write", async () => {
    const readOnly = await newKey(account, ["webhooks:read"]);
    const writeOnly = await newKey(account, ["webhooks:write"]);
    const fired = await json(await fireTest());
    expect((await call(`${base()}/deliveries`, { key: readOnly })).status).toBe(200);
    expect((await call(`${base()}/deliveries/${fired.delivery_id}`, { key: readOnly })).status).toBe(200);
    expect((await call(`${base()}/deliveries`, { key: writeOnly })).status).toBe(403);
    for (const path of [
      `${base()}/test`,
      `${base()}/deliveries/${fired.delivery_id}/replay`,
      `${base()}/deliveries/${fired.delivery_id}/resend`,
    ]) {
      const res = await call(path, { key: readOnly, method: "POST" });
      expect(res.status).toBe(403);
      expect((await json(res)).error.details.required_scope).toBe("webhooks:write");
    }
  });

  it("another account's webhook and deliveries are 404 everywhere", async () => {
    const fired = await json(await fireTest());
    const stranger = await newAccount();
    for (const [path, method] of [
      [`${base()}/deliveries`, "GET"],
      [`${base()}/deliveries/${fired.delivery_id}`, "GET"],
      [`${base()}/test`, "POST"],
      [`${base()}/deliveries/${fired.delivery_id}/replay`, "POST"],
      [`${base()}/deliveries/${fired.delivery_id}/resend`, "POST"],
    ] as const) {
      expect((await call(path, { key: stranger.key, method })).status, path).toBe(404);
    }
  });

  it("a wrong method is 405 with Allow; no key is 401", async () => {
    const res = await call(`${base()}/test`, { key: account.key, method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
    expect((await call(`${base()}/deliveries`)).status).toBe(401);
  });
});
