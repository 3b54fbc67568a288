// The TypeScript client (clients/typescript) against `wrangler dev` + the real GA worker: create →
// waitFor → result, a failing run's error, iterate across pages, downloads, automatic idempotency keys,
// a 429's retryAfter, verifyWebhook on a real delivery captured by a local receiver, the webhook tools
// (log, Test, Inspect, Replay, re-send) and the device login approved in the dashboard.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  Allele,
  AlleleError,
  DeviceLoginError,
  RateLimitError,
  RunFailedError,
  verifyWebhook,
  WebhookVerificationError,
} from "../../clients/typescript/src/index";
import { baseUrl, call, job, newAccount } from "./client";

const JOB = { ...job(), num_generations: 15, sol_per_pop: 8, num_genes: 4 } as Parameters<Allele["submissions"]["create"]>[0];
let client: Allele;
const sent: { method: string; url: string; headers: Headers }[] = [];

beforeAll(async () => {
  const account = await newAccount();
  await call(`/admin/v1/accounts/${account.id}`, {
    method: "PATCH",
    token: inject("adminToken"),
    body: { overrides: { concurrent_submissions: 100, inflight_api_runs: 100 } },
  });
  const recording: typeof fetch = async (input, init) => {
    sent.push({ method: init?.method ?? "GET", url: String(input), headers: new Headers(init?.headers) });
    return fetch(input, init);
  };
  client = new Allele({ apiKey: account.key, baseUrl: `${baseUrl()}/api/v1`, fetch: recording });
});

describe("the TypeScript client", () => {
  it("create → waitFor → the result, with its files downloadable; writes carry an Idempotency-Key", async () => {
    const created = await client.submissions.create({ ...JOB, name: "ts client", random_seed: 3 });
    expect(created).toMatchObject({ status: "queued", name: "ts client", submission_type: "new" });
    const post = sent.find((r) => r.method === "POST" && r.url.endsWith("/api/v1/submissions"))!;
    expect(post.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);
    const result = await client.waitFor(created.id, { timeoutMs: 120_000, intervalMs: 200 });
    expect(result.submission_id).toBe(created.id);
    expect(result.best_solution).toHaveLength(4);
    expect(result.generations_completed).toBe(15);
    const csv = await (await client.results.download(result.id, "fitness_history.csv")).text();
    expect(csv.split("\n")[0]).toBe("generation,best_fitness,mean_fitness,median_fitness,worst_fitness");
    const summary = (await (await client.results.download(result.id, "result.json")).json()) as { result_id: string };
    expect(summary.result_id).toBe(result.id);
    await expect(client.results.download(result.id, "nope.txt")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("a quick type: the types listed, a subset sum created with its generated integers, its interpretation typed", async () => {
    const { results: types } = await client.submissions.types();
    expect(types.map((t) => t.name)).toContain("quick_binary_subset_sum");
    const created = await client.submissions.create({ submission_type: "quick_binary_subset_sum", num_integers: 12, random_seed: 2 });
    expect(created.submission_type).toBe("quick_binary_subset_sum");
    const integers = created.generated?.integers as number[];
    expect(integers).toHaveLength(12);
    const result = await client.waitFor(created.id, { timeoutMs: 120_000, intervalMs: 200 });
    expect(result.interpretation).toMatchObject({
      submission_type: "quick_binary_subset_sum",
      target: created.generated?.target,
      reaches_target: true,
    });
  });

  it("waitFor throws the run's own error when the run fails", async () => {
    const created = await client.submissions.create({ ...JOB, fitness_func: "def fitness(ga, solution, idx):\n    return 1 / 0\n" });
    const failure = await client.waitFor(created.id, { timeoutMs: 120_000, intervalMs: 200 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailedError);
    expect(failure).toMatchObject({ submissionId: created.id, status: "failed", code: "code_error" });
    expect((failure as RunFailedError).message).toContain("ZeroDivisionError");
  });

  it("iterate walks every page of a list; an API error is typed with code, details and request id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await client.submissions.create({ ...JOB, name: `page ${i}` })).id);
    const walked: string[] = [];
    for await (const item of client.iterate("listSubmissions", { page_size: "2", name_contains: "page " } as never)) walked.push(item.id);
    expect(new Set(walked)).toEqual(ids);
    const pages = sent.filter((r) => r.url.includes("/api/v1/submissions?") && r.url.includes("name_contains=page"));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    const error = await client.submissions.get("AAAAAAAAAAAA").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AlleleError);
    expect(error).toMatchObject({ status: 404, code: "not_found", details: {} });
    expect((error as AlleleError).requestId).toMatch(/^req_/);
    const invalid = await client.submissions.create({ ...JOB, num_genes: 0 }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: "validation_failed" });
    expect((invalid as AlleleError).details.fields).toEqual([{ field: "num_genes", message: expect.any(String) }]);
  });

  it("sweeps: create (with an Idempotency-Key) → waitForSweep → the statistics; list and a refusal, typed", async () => {
    const { name: _name, ...base } = JOB;
    const created = await client.sweeps.create({
      name: "ts sweep",
      base: { ...base, num_generations: 10 },
      grid: { sol_per_pop: [6, 10] },
      seeds: 2,
    });
    expect(created).toMatchObject({ status: "running", children: 4 });
    const post = sent.find((r) => r.method === "POST" && r.url.endsWith("/api/v1/sweeps"))!;
    expect(post.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);
    const sweep = await client.waitForSweep(created.id, { timeoutMs: 180_000, intervalMs: 300 });
    expect(sweep.status).toBe("completed");
    expect(sweep.combinations.map((c) => c.statistics.n)).toEqual([2, 2]);
    expect(sweep.best_combination).not.toBeNull();
    expect(sweep.combinations.filter((c) => c.comparison !== null)).toHaveLength(1);
    expect((await client.sweeps.list()).results.map((s) => s.id)).toContain(created.id);
    const refused = await client.sweeps.create({ name: "bad", base, grid: {}, seeds: 1 }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: "validation_failed", details: { fields: [{ field: "grid" }] } });
    await expect(client.sweeps.cancel(created.id)).rejects.toMatchObject({ status: 409, code: "invalid_state" });
  });

  it("a 429 surfaces retryAfter (the daily quota's next unit)", async () => {
    const limited = await newAccount();
    await call(`/admin/v1/accounts/${limited.id}`, {
      method: "PATCH",
      token: inject("adminToken"),
      body: { overrides: { daily_quota: 1 } },
    });
    const own = new Allele({ apiKey: limited.key, baseUrl: `${baseUrl()}/api/v1` });
    await own.submissions.create(JOB);
    const refused = await own.submissions.create(JOB).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: "capacity_exceeded", details: { reason: "daily_quota" } });
    expect((refused as RateLimitError).retryAfter).toBeGreaterThan(86_000);
  });
});

describe("verifyWebhook", () => {
  let server: Server;
  const received: { headers: IncomingHttpHeaders; raw: Buffer }[] = [];
  /** Answers 500 to `/failing` while set (the webhook tools' test makes a delivery fail for good). */
  let failing = true;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(req.url === "/failing" && failing ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("accepts a real delivery and rejects a tampered body, a wrong secret and an old timestamp", async () => {
    const port = (server.address() as { port: number }).port;
    const hook = await client.webhooks.create({ url: `http://127.0.0.1:${port}/hook`, events: ["submission.succeeded"] });
    const created = await client.submissions.create({ ...JOB, name: "signed" });
    await client.waitFor(created.id, { timeoutMs: 120_000, intervalMs: 200 });
    // The account's earlier submissions may end while the webhook exists: take this submission's delivery.
    const ours = () =>
      received.find((d) => (JSON.parse(d.raw.toString("utf8")) as { data: { submission_id?: string } }).data.submission_id === created.id);
    const deadline = Date.now() + 30_000;
    while (!ours() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const delivery = ours()!;
    expect(delivery, "the receiver got the delivery").toBeDefined();
    const headers = delivery.headers as Record<string, string>;

    const event = await verifyWebhook(delivery.raw, headers, hook.secret);
    expect(event.event_type).toBe("submission.succeeded");
    expect(event.event_type === "submission.succeeded" && event.data).toMatchObject({
      submission_id: created.id,
      num_objectives: 1,
      best_solution_objectives: null,
      pareto_front_size: null,
    });
    expect((await verifyWebhook(delivery.raw.toString("utf8"), new Headers(headers), hook.secret)).event_id).toBe(headers["x-event-id"]);

    const reason = (p: Promise<unknown>) =>
      p.then(
        () => "accepted",
        (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e)),
      );
    const tampered = Buffer.from(delivery.raw.toString("utf8").replace('"submission.succeeded"', '"submission.failed"'));
    expect(await reason(verifyWebhook(tampered, headers, hook.secret))).toBe("bad_signature");
    expect(await reason(verifyWebhook(delivery.raw, headers, "0".repeat(64)))).toBe("bad_signature");
    const sixMinutesLater = (Number(headers["x-signature-timestamp"]) + 360) * 1000;
    expect(await reason(verifyWebhook(delivery.raw, headers, hook.secret, { now: sixMinutesLater }))).toBe("timestamp_out_of_tolerance");
    expect(await reason(verifyWebhook(delivery.raw, headers, hook.secret, { now: sixMinutesLater, toleranceSeconds: 600 }))).toBe(
      "accepted",
    );
    expect(await reason(verifyWebhook(delivery.raw, { "x-signature": headers["x-signature"]! }, hook.secret))).toBe("missing_headers");
  });

  it("the webhook tools: Test, the log, Inspect, Replay, and re-send of a failed delivery", { timeout: 120_000 }, async () => {
    const port = (server.address() as { port: number }).port;
    const hook = await client.webhooks.create({ url: `http://127.0.0.1:${port}/failing`, events: ["result.completed"] });
    const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const value = await read();
        if (done(value) || Date.now() > deadline) return value;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const fired = await client.webhooks.test(hook.id, "result.completed");
    expect(fired.event_type).toBe("webhook.test");
    // The receiver answers 500 until the retries (1 s apart in this suite) run out: the delivery fails for good.
    const failed = await until(
      () => client.webhooks.delivery(hook.id, fired.delivery_id),
      (d) => d.status === "failed",
    );
    expect(failed).toMatchObject({ id: fired.delivery_id, event_id: fired.event_id, status: "failed", is_test: true });
    expect(failed.attempts.length).toBeGreaterThan(1);
    expect(failed.attempts[0]).toMatchObject({ attempt_no: 1, response_status: 500, request_url: `http://127.0.0.1:${port}/failing` });
    expect(JSON.parse(failed.payload)).toMatchObject({
      event_id: fired.event_id,
      data: { test: true, sample_of: "result.completed", num_objectives: 1 },
    });

    const log = await client.webhooks.deliveries(hook.id, { status: "failed" });
    expect(log.results.map((d) => d.id)).toEqual([fired.delivery_id]);
    const walked: string[] = [];
    for await (const d of client.webhooks.iterateDeliveries(hook.id, { page_size: "1" } as never)) walked.push(d.id);
    expect(walked).toEqual([fired.delivery_id]);

    failing = false;
    const resent = await client.webhooks.resend(hook.id, fired.delivery_id);
    expect(resent).toEqual({ delivery_id: fired.delivery_id, event_id: fired.event_id, event_type: "webhook.test" });
    const delivered = await until(
      () => client.webhooks.delivery(hook.id, fired.delivery_id),
      (d) => d.status === "succeeded",
    );
    expect(delivered).toMatchObject({ status: "succeeded", resend_count: 1 });
    await expect(client.webhooks.resend(hook.id, fired.delivery_id)).rejects.toMatchObject({ status: 409, code: "invalid_state" });

    const replayed = await client.webhooks.replay(hook.id, fired.delivery_id);
    expect(replayed.event_id).not.toBe(fired.event_id);
    const copy = await until(
      () => client.webhooks.delivery(hook.id, replayed.delivery_id),
      (d) => d.status === "succeeded",
    );
    expect(copy).toMatchObject({ replay_of: fired.delivery_id, is_test: true });
    await expect(client.webhooks.delivery(hook.id, "0000000000000000")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("Allele.deviceLogin", () => {
  /** Approves a device code in the dashboard, over HTTP, signed in with a one-time link of `accountId`. */
  async function approveInDashboard(accountId: string, userCode: string) {
    const cookies = new Map<string, string>();
    const web = async (path: string, form?: Record<string, string | string[]>) => {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(form ?? {})) for (const value of [v].flat()) body.append(k, value);
      const res = await fetch(path.startsWith("http") ? path : `${baseUrl()}${path}`, {
        method: form ? "POST" : "GET",
        redirect: "manual",
        headers: {
          Cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
          ...(form ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
        },
        body: form ? body : undefined,
      });
      for (const line of res.headers.getSetCookie()) {
        const pair = line.split(";")[0]!;
        cookies.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
      }
      return res;
    };
    const link = await call(`/admin/v1/accounts/${accountId}/sign-in-links`, { token: inject("adminToken"), body: {} });
    expect(link.status).toBe(201);
    const linkPage = await (await web(link.body.url)).text(); // a GET never signs in: its button posts
    await web(link.body.url, { _csrf: /name="_csrf" value="([^"]+)"/.exec(linkPage)![1]! });
    const page = await (await web(`/device?user_code=${userCode}`)).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const confirm = await (await web("/device", { _csrf: csrf, user_code: userCode })).text();
    const id = /name="id" value="([^"]+)"/.exec(confirm)![1]!;
    const decided = await web("/device/decide", {
      _csrf: csrf,
      id,
      user_code: userCode,
      decision: "approve",
      key_name: "ts client",
      scopes: ["submissions:read", "results:read"],
    });
    expect(decided.status).toBe(303);
  }

  it("gets a key with the RFC 8628 device flow once the code is approved in the dashboard; a used code is DeviceLoginError invalid_grant", {
    timeout: 60_000,
  }, async () => {
    const account = await newAccount();
    let shown: { userCode: string; verificationUri: string } | null = null;
    const token = await Allele.deviceLogin({
      baseUrl: `${baseUrl()}/api/v1`,
      onCode: async (code) => {
        shown = code;
        await approveInDashboard(account.id, code.userCode);
      },
    });
    expect(shown!.verificationUri).toBe(`${baseUrl()}/device`);
    expect(token).toMatchObject({ token_type: "Bearer", key_name: "ts client", scope: "submissions:read results:read" });
    const own = new Allele({ apiKey: token.api_key, baseUrl: `${baseUrl()}/api/v1` });
    expect((await own.account.get()).id).toBe(account.id);
    await expect(own.webhooks.list()).rejects.toMatchObject({ status: 403, code: "scope_required" });

    const unknown = await client.call("pollDeviceToken", { body: { device_code: "x".repeat(40) } }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(DeviceLoginError);
    expect(unknown).toMatchObject({ status: 400, code: "invalid_grant" });
    expect((unknown as DeviceLoginError).requestId).toMatch(/^req_/);
  });
});
