// /api/v1/webhooks: create, list, get, update, delete, rotate-secret — the expected paths.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, env, json, newAccount, type TestAccount } from "../helpers/api";
import { type FakeNet, fakeNet } from "../helpers/net";

let account: TestAccount;
let net: FakeNet;

beforeEach(async () => {
  account = await newAccount();
  net = fakeNet({
    dns: { "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"], "other.example.org": ["8.8.8.8"] },
  });
});
afterEach(() => net.restore());

const create = (body: Record<string, unknown>, key = account.key) => call("/api/v1/webhooks", { key, body });

describe("create", () => {
  it("is 201 with the webhook and a 64-hex secret shown this once", async () => {
    const res = await create({ url: "https://hooks.example.com/allele", events: ["submission.succeeded", "result.completed"] });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toMatchObject({
      url: "https://hooks.example.com/allele",
      events: ["submission.succeeded", "result.completed"],
      is_active: true,
      description: "",
      last_delivery_status: "",
      last_delivery_at: null,
    });
    expect(body.id).toMatch(/^[0-9A-Za-z]{12}$/);
    expect(body.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(body.created_at)).not.toBeNaN();
    expect(body.updated_at).toBe(body.created_at);
    // Resolved over DoH, both families.
    expect(net.dnsQueries).toEqual(expect.arrayContaining(["hooks.example.com A", "hooks.example.com AAAA"]));
  });

  it("accepts is_active and description, and de-duplicates events", async () => {
    const res = await create({
      url: "https://hooks.example.com/x",
      events: ["submission.failed", "submission.failed", "webhook.test"],
      is_active: false,
      description: "ops pager",
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ events: ["submission.failed", "webhook.test"], is_active: false, description: "ops pager" });
  });

  it("gives every webhook its own secret", async () => {
    const a = await json(await create({ url: "https://hooks.example.com/a", events: ["submission.succeeded"] }));
    const b = await json(await create({ url: "https://hooks.example.com/b", events: ["submission.succeeded"] }));
    expect(a.secret).not.toBe(b.secret);
  });
});

describe("list and get", () => {
  it("lists the caller's webhooks newest first, cursor-paginated, without secrets", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await json(await create({ url: `https://hooks.example.com/${i}`, events: ["submission.succeeded"] }))).id);
    const page1 = await json(await call("/api/v1/webhooks?page_size=2", { key: account.key }));
    expect(page1.results).toHaveLength(2);
    expect(page1.previous).toBeNull();
    expect(page1.next).toMatch(/^\?cursor=.+&page_size=2$/);
    const page2 = await json(await call(`/api/v1/webhooks${page1.next}`, { key: account.key }));
    const page3 = await json(await call(`/api/v1/webhooks${page2.next}`, { key: account.key }));
    expect(page3.next).toBeNull();
    const seen = [...page1.results, ...page2.results, ...page3.results];
    expect(seen.map((w: any) => w.id)).toEqual([...ids].reverse());
    for (const w of seen) expect(w).not.toHaveProperty("secret");
    const back = await json(await call(`/api/v1/webhooks${page2.previous}`, { key: account.key }));
    expect(back.results.map((w: any) => w.id)).toEqual(page1.results.map((w: any) => w.id));
  });

  it("gets one webhook without its secret", async () => {
    const created = await json(await create({ url: "https://hooks.example.com/one", events: ["submission.cancelled"] }));
    const res = await call(`/api/v1/webhooks/${created.id}`, { key: account.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    const { secret: _secret, ...withoutSecret } = created;
    expect(body).toEqual(withoutSecret);
    expect(JSON.stringify(body)).not.toContain(created.secret);
  });
});

describe("update", () => {
  it("PATCH changes only the fields sent and returns the updated webhook", async () => {
    const created = await json(await create({ url: "https://hooks.example.com/p", events: ["submission.succeeded"] }));
    const res = await call(`/api/v1/webhooks/${created.id}`, {
      key: account.key,
      method: "PATCH",
      body: { events: ["submission.failed"], is_active: false, description: "paused" },
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({
      id: created.id,
      url: created.url,
      events: ["submission.failed"],
      is_active: false,
      description: "paused",
    });
    expect(body).not.toHaveProperty("secret");
    expect(body.updated_at >= created.updated_at).toBe(true);
    const url = await json(
      await call(`/api/v1/webhooks/${created.id}`, { key: account.key, method: "PATCH", body: { url: "https://other.example.org/in" } }),
    );
    expect(url).toMatchObject({ url: "https://other.example.org/in", events: ["submission.failed"], is_active: false });
  });

  it("rotate-secret returns a new secret, and the stored one is the new one at once", async () => {
    const created = await json(await create({ url: "https://hooks.example.com/r", events: ["submission.succeeded"] }));
    const res = await call(`/api/v1/webhooks/${created.id}/rotate-secret`, { key: account.key, method: "POST" });
    expect(res.status).toBe(200);
    const rotated = await json(res);
    expect(rotated.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.secret).not.toBe(created.secret);
    const stored = await env.DB.prepare("SELECT secret FROM webhooks WHERE id = ?").bind(created.id).first<{ secret: string }>();
    expect(stored!.secret).toBe(rotated.secret);
  });
});

describe("delete", () => {
  it("is 204, then the webhook is gone", async () => {
    const created = await json(await create({ url: "https://hooks.example.com/d", events: ["submission.succeeded"] }));
    const res = await call(`/api/v1/webhooks/${created.id}`, { key: account.key, method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await call(`/api/v1/webhooks/${created.id}`, { key: account.key })).status).toBe(404);
    expect((await call(`/api/v1/webhooks/${created.id}`, { key: account.key, method: "DELETE" })).status).toBe(404);
  });
});
