// /api/v1/webhooks: URL safety at create and PATCH (every address class), validation, the 20-per-account
// limit, scopes, ownership and methods.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LITERALS, RESOLVED } from "../helpers/address-classes";
import { call, env, expectError, failedFields, json, newAccount, newKey, type TestAccount } from "../helpers/api";
import { type FakeNet, fakeNet } from "../helpers/net";
import { WebClient } from "../helpers/web";

let account: TestAccount;
let net: FakeNet;

beforeEach(async () => {
  account = await newAccount();
  net = fakeNet({
    dns: {
      ...Object.fromEntries(RESOLVED.map(([, host, address]) => [host, [address]])),
      "mixed.example.com": ["93.184.215.14", "10.0.0.1"],
      "public.example.com": ["93.184.215.14"],
    },
  });
});
afterEach(() => net.restore());

const create = (url: string) => call("/api/v1/webhooks", { key: account.key, body: { url, events: ["submission.succeeded"] } });

describe("URL safety at create", () => {
  for (const [label, host, address] of RESOLVED) {
    it(`rejects a host resolving to ${label} (${address})`, async () => {
      const err = await expectError(await create(`https://${host}/hook`), 422, "invalid_webhook_url");
      expect(err.details.reason).toBe("non_public_address");
    });
  }
  for (const [label, url] of LITERALS) {
    it(`rejects ${label}: ${url}`, async () => {
      const err = await expectError(await create(url), 422, "invalid_webhook_url");
      expect(["non_public_address", "host_not_allowed"]).toContain(err.details.reason);
    });
  }
  for (const url of ["https://vm/hook", "https://vm./hook", "https://localhost./hook"]) {
    it(`rejects a single-label host, with or without the trailing dot: ${url}`, async () => {
      const err = await expectError(await create(url), 422, "invalid_webhook_url");
      expect(err.details.reason).toBe("host_not_allowed");
    });
  }
  it("rejects a host with one public and one private address", async () => {
    const err = await expectError(await create("https://mixed.example.com/"), 422, "invalid_webhook_url");
    expect(err.details).toMatchObject({ reason: "non_public_address", address: "10.0.0.1", range: "private" });
  });
  it("rejects http, other schemes, credentials, junk and unresolvable hosts", async () => {
    const cases: [string, string][] = [
      ["http://public.example.com/hook", "scheme_not_allowed"],
      ["ftp://public.example.com/hook", "scheme_not_allowed"],
      ["https://user:pw@public.example.com/hook", "credentials_not_allowed"],
      ["not a url", "invalid_url"],
      ["https://nxdomain.example.com/hook", "does_not_resolve"],
    ];
    for (const [url, reason] of cases) {
      const err = await expectError(await create(url), 422, "invalid_webhook_url");
      expect(err.details.reason, url).toBe(reason);
    }
  });
  it("accepts a public host and a public IP literal", async () => {
    expect((await create("https://public.example.com:8443/in?x=1")).status).toBe(201);
    expect((await create("https://93.184.215.14/in")).status).toBe(201);
    expect((await create("https://[2606:4700:4700::1111]/in")).status).toBe(201);
  });
});

describe("URL safety at PATCH", () => {
  it("rejects every non-public class and keeps the old URL", async () => {
    const created = await json(await create("https://public.example.com/ok"));
    const urls = [...RESOLVED.map(([, host]) => `https://${host}/x`), ...LITERALS.map(([, url]) => url), "http://public.example.com/x"];
    for (const url of urls) {
      const res = await call(`/api/v1/webhooks/${created.id}`, { key: account.key, method: "PATCH", body: { url } });
      await expectError(res, 422, "invalid_webhook_url");
    }
    expect((await json(await call(`/api/v1/webhooks/${created.id}`, { key: account.key }))).url).toBe("https://public.example.com/ok");
  });
});

describe("URLs with control characters, and the form stored", () => {
  // URL parsing drops TAB, CR and LF anywhere and C0 controls at either end: such a URL is not the one called.
  const HOSTILE = [
    "https://8.8.8.8/\r\nX-Injected: 1",
    "https://public.example.com/a\tb",
    "https://public.example.com/\n",
    "\u0000https://public.example.com/",
    "https://public.example.com/\u007f",
    "https://public.example.com/\u0085",
    "https://public.example.com/\u009f",
    "\thttps://public.example.com/in",
  ];
  it("refuses a URL holding a control character with 422 naming the field, at create and at PATCH, and keeps nothing", async () => {
    for (const url of HOSTILE) {
      const err = await expectError(await create(url), 422, "invalid_webhook_url");
      expect(err.details, JSON.stringify(url)).toMatchObject({ reason: "control_character", field: "url" });
      expect(err.message).toMatch(/^url: must not contain control characters \(U\+00[0-9A-F]{2} at position \d+\)/);
    }
    expect((await json(await call("/api/v1/webhooks", { key: account.key }))).results).toEqual([]);
    const created = await json(await create("https://public.example.com/ok"));
    for (const url of HOSTILE) {
      const res = await call(`/api/v1/webhooks/${created.id}`, { key: account.key, method: "PATCH", body: { url } });
      expect((await expectError(res, 422, "invalid_webhook_url")).details).toMatchObject({ reason: "control_character", field: "url" });
    }
    expect((await json(await call(`/api/v1/webhooks/${created.id}`, { key: account.key }))).url).toBe("https://public.example.com/ok");
  });

  it("stores the URL as it is checked and called (WHATWG serialisation), at create and at PATCH", async () => {
    const created = await create("HTTPS://Public.Example.COM:443/a/../in?x=1#frag");
    expect(created.status).toBe(201);
    const body = await json(created);
    expect(body.url).toBe("https://public.example.com/in?x=1#frag");
    expect((await json(await call(`/api/v1/webhooks/${body.id}`, { key: account.key }))).url).toBe(
      "https://public.example.com/in?x=1#frag",
    );
    const changed = await call(`/api/v1/webhooks/${body.id}`, {
      key: account.key,
      method: "PATCH",
      body: { url: "https://[2606:4700:4700:0::1111]" },
    });
    expect((await json(changed)).url).toBe("https://[2606:4700:4700::1111]/");
    const row = await env.DB.prepare("SELECT url FROM webhooks WHERE id = ?").bind(body.id).first<{ url: string }>();
    expect(row!.url).toBe("https://[2606:4700:4700::1111]/");
  });

  it("the dashboard refuses it next to the field and stores the normalised form", async () => {
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const refused = await web.post("/webhooks", { url: "https://public.example.com/a\r\nX-Injected: 1", events: ["submission.succeeded"] });
    expect(refused.status).toBe(422);
    const html = await refused.text();
    expect(html).toContain('id="w-url-error"');
    expect(html).toContain("must not contain control characters");
    expect((await json(await call("/api/v1/webhooks", { key: account.key }))).results).toEqual([]);
    const made = await web.post("/webhooks", {
      url: "https://PUBLIC.example.com/x/./y",
      events: ["submission.succeeded"],
      is_active: "true",
    });
    expect(made.status).toBe(200);
    const [hook] = (await json(await call("/api/v1/webhooks", { key: account.key }))).results;
    expect(hook.url).toBe("https://public.example.com/x/y");
    const edited = await web.post(`/webhooks/${hook.id}`, { url: "https://public.example.com/\tz", events: ["submission.succeeded"] });
    expect(edited.status).toBe(422);
    expect((await json(await call(`/api/v1/webhooks/${hook.id}`, { key: account.key }))).url).toBe("https://public.example.com/x/y");
  });
});

describe("validation", () => {
  it("400 for missing or bad fields, unknown fields and unknown event types", async () => {
    const bad: [unknown, string][] = [
      [{ events: ["submission.succeeded"] }, "url"],
      [{ url: "https://public.example.com/" }, "events"],
      [{ url: "https://public.example.com/", events: [] }, "events"],
      [{ url: "https://public.example.com/", events: ["submission.started"] }, "events.0"],
      [{ url: "https://public.example.com/", events: ["submission.succeeded"], is_active: "yes" }, "is_active"],
      [{ url: "https://public.example.com/", events: ["submission.succeeded"], description: "x".repeat(201) }, "description"],
      [{ url: "https://public.example.com/", events: ["submission.succeeded"], secret: "a".repeat(64) }, "secret"],
    ];
    for (const [body, field] of bad) {
      const err = await expectError(await call("/api/v1/webhooks", { key: account.key, body }), 400, "validation_failed");
      expect(failedFields(err), JSON.stringify(body)).toContain(field);
    }
  });
  it("415 for a non-JSON body, 400 for malformed JSON", async () => {
    await expectError(
      await call("/api/v1/webhooks", { key: account.key, method: "POST", rawBody: "url=x", headers: { "Content-Type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await call("/api/v1/webhooks", { key: account.key, method: "POST", rawBody: "{", headers: { "Content-Type": "application/json" } }),
      400,
      "malformed_json",
    );
  });
  it("400 for unknown list parameters and a forged cursor", async () => {
    await expectError(await call("/api/v1/webhooks?status=active", { key: account.key }), 400, "validation_failed");
    await expectError(await call("/api/v1/webhooks?cursor=bogus", { key: account.key }), 400, "validation_failed");
  });
});

describe("limit", () => {
  it("allows 20 webhooks per account, exactly, even when creates race", async () => {
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => create(`https://public.example.com/${i}`)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status === 422);
    expect(refused).toHaveLength(5);
    const err = await expectError(refused[0]!, 422, "webhook_limit_reached");
    expect(err.details.limit).toBe(20);
    // Another account is not affected.
    const other = await newAccount();
    expect(
      (await call("/api/v1/webhooks", { key: other.key, body: { url: "https://public.example.com/", events: ["webhook.test"] } })).status,
    ).toBe(201);
  });
});

describe("security", () => {
  it("needs webhooks:read to list and get, webhooks:write to change", async () => {
    const created = await json(await create("https://public.example.com/s"));
    const readOnly = await newKey(account, ["webhooks:read"]);
    const writeOnly = await newKey(account, ["webhooks:write"]);
    const none = await newKey(account, ["submissions:read", "submissions:write"]);
    expect((await call("/api/v1/webhooks", { key: readOnly })).status).toBe(200);
    expect((await call(`/api/v1/webhooks/${created.id}`, { key: readOnly })).status).toBe(200);
    for (const key of [writeOnly, none]) {
      const err = await expectError(await call("/api/v1/webhooks", { key }), 403, "scope_required");
      expect(err.details.required_scope).toBe("webhooks:read");
    }
    const writes = [
      () => call("/api/v1/webhooks", { key: readOnly, body: { url: "https://public.example.com/", events: ["webhook.test"] } }),
      () => call(`/api/v1/webhooks/${created.id}`, { key: readOnly, method: "PATCH", body: { is_active: false } }),
      () => call(`/api/v1/webhooks/${created.id}`, { key: readOnly, method: "DELETE" }),
      () => call(`/api/v1/webhooks/${created.id}/rotate-secret`, { key: readOnly, method: "POST" }),
    ];
    for (const write of writes) {
      const err = await expectError(await write(), 403, "scope_required");
      expect(err.details.required_scope).toBe("webhooks:write");
    }
    expect((await call(`/api/v1/webhooks/${created.id}`, { key: writeOnly, method: "PATCH", body: { is_active: false } })).status).toBe(
      200,
    );
  });

  it("401 without a key", async () => {
    await expectError(await call("/api/v1/webhooks"), 401, "unauthorized");
  });

  it("another account's webhook is 404 for every operation and is left unchanged", async () => {
    const created = await json(await create("https://public.example.com/mine"));
    const other = await newAccount();
    const ops = [
      () => call(`/api/v1/webhooks/${created.id}`, { key: other.key }),
      () => call(`/api/v1/webhooks/${created.id}`, { key: other.key, method: "PATCH", body: { is_active: false } }),
      () => call(`/api/v1/webhooks/${created.id}`, { key: other.key, method: "DELETE" }),
      () => call(`/api/v1/webhooks/${created.id}/rotate-secret`, { key: other.key, method: "POST" }),
    ];
    for (const op of ops) await expectError(await op(), 404, "not_found");
    expect((await json(await call("/api/v1/webhooks", { key: other.key }))).results).toEqual([]);
    const mine = await json(await call(`/api/v1/webhooks/${created.id}`, { key: account.key }));
    expect(mine.is_active).toBe(true);
  });

  it("405 with Allow for other methods", async () => {
    const res = await call("/api/v1/webhooks", { key: account.key, method: "DELETE" });
    await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toBe("GET, POST");
    const rotate = await call("/api/v1/webhooks/abcdefABCDEF/rotate-secret", { key: account.key });
    expect(rotate.status).toBe(405);
  });
});
