// The operator's surface /admin/v1 (docs/api.md#admin-api): accounts, keys, credits, overrides.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newApp } from "../../src/app";
import { ADMIN_TOKEN, admin, BASE, call, env, expectError, failedFields, job, json, newAccount } from "../helpers/api";

const KEY = /^alk_[0-9A-Za-z]{8}_[0-9A-Za-z]{40}$/;
const email = () => `admin-${crypto.randomUUID()}@Example.com`;

async function sha256Hex(text: string) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("POST /admin/v1/accounts", () => {
  it("creates an account (201) and shows an all-scopes key once", async () => {
    const address = email();
    const res = await admin("/accounts", { body: { email: address, plan: "trial", credits: 12.5 } });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(["account", "key"]);
    expect(body.key).toMatch(KEY);
    expect(body.account).toMatchObject({
      email: address.toLowerCase(),
      plan: "trial",
      overrides: {},
      balances: { free: 0, paid: 12.5, total: 12.5 },
    });
    expect(body.account.id).toMatch(/^[0-9A-Za-z]{12}$/);
    // The key works on every API scope.
    expect((await call("/api/v1/submissions/", { key: body.key })).status).toBe(200);
    expect((await call("/api/v1/results/", { key: body.key })).status).toBe(200);
    expect((await call("/api/v1/submissions/", { key: body.key, body: job() })).status).toBe(202);
    const got = await json(await admin(`/accounts/${body.account.id}`));
    expect(got.keys).toHaveLength(1);
    expect(got.keys[0]).toMatchObject({
      prefix: body.key.slice(0, 12),
      name: "default",
      scopes: ["submissions:read", "submissions:write", "results:read", "results:write", "webhooks:read", "webhooks:write"],
      expires_at: null,
      revoked_at: null,
    });
  });

  it("credits default to 0", async () => {
    const body = await json(await admin("/accounts", { body: { email: email(), plan: "free" } }));
    expect(body.account.balances).toEqual({ free: 0, paid: 0, total: 0 });
  });

  it("an email that exists (in any case) is 409 already_exists", async () => {
    const address = email();
    expect((await admin("/accounts", { body: { email: address, plan: "free" } })).status).toBe(201);
    await expectError(await admin("/accounts", { body: { email: address.toUpperCase(), plan: "premium" } }), 409, "already_exists");
  });

  it.each([
    ["no email", { plan: "free" }, "email"],
    ["a bad email", { email: "not-an-email", plan: "free" }, "email"],
    ["an unknown plan", { email: "x@example.com", plan: "gold" }, "plan"],
    ["negative credits", { email: "x@example.com", plan: "free", credits: -5 }, "credits"],
    ["credits as a string", { email: "x@example.com", plan: "free", credits: "5" }, "credits"],
    ["an unknown field", { email: "x@example.com", plan: "free", admin: true }, "admin"],
  ])("%s is 400", async (_label, body, field) => {
    const err = await expectError(await admin("/accounts", { body }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("malformed JSON 400, non-JSON 415", async () => {
    await expectError(
      await admin("/accounts", { method: "POST", rawBody: "{", headers: { "Content-Type": "application/json" } }),
      400,
      "malformed_json",
    );
    await expectError(
      await admin("/accounts", { method: "POST", rawBody: "email=x", headers: { "Content-Type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
  });
});

describe("GET /admin/v1/accounts/{id}", () => {
  it("shows keys by prefix only — never a key or its hash", async () => {
    const acc = await newAccount("premium", 3);
    const second = await json(await admin(`/accounts/${acc.id}/keys`, { body: { name: "ci", scopes: ["results:read"] } }));
    const res = await admin(`/accounts/${acc.id}`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const body = JSON.parse(text);
    expect(body.account).toMatchObject({ id: acc.id, plan: "premium", balances: { free: 0, paid: 3, total: 3 } });
    expect(body.keys.map((k: any) => k.prefix)).toEqual([acc.key.slice(0, 12), second.key.slice(0, 12)]);
    for (const k of body.keys) {
      expect(Object.keys(k).sort()).toEqual(["created_at", "expires_at", "last_used_at", "name", "prefix", "revoked_at", "scopes"]);
      expect(k.prefix).toMatch(/^alk_[0-9A-Za-z]{8}$/);
    }
    for (const secret of [
      acc.key,
      second.key,
      await sha256Hex(acc.key),
      await sha256Hex(second.key),
      acc.key.slice(13),
      second.key.slice(13),
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/hash/i);
  });

  it("an unknown account is 404", async () => {
    await expectError(await admin("/accounts/AAAAAAAAAAAA"), 404, "not_found");
  });
});

describe("PATCH /admin/v1/accounts/{id}", () => {
  it("changes the plan and overrides; null clears one override and keeps the others", async () => {
    const acc = await newAccount("free");
    const patch = (body: unknown) => admin(`/accounts/${acc.id}`, { method: "PATCH", body });

    const planned = await json(await patch({ plan: "trial" }));
    expect(planned.account).toMatchObject({ id: acc.id, plan: "trial", overrides: {} });

    const set = await json(await patch({ overrides: { max_num_generations: 50, daily_quota: 7, negative_balance_cap: 2.5 } }));
    expect(set.account.overrides).toEqual({ max_num_generations: 50, daily_quota: 7, negative_balance_cap: 2.5 });
    expect(set.account.limits).toMatchObject({ max_num_generations: 50, daily_quota: 7, negative_balance_cap: 2.5 });

    const cleared = await json(await patch({ overrides: { max_num_generations: null } }));
    expect(cleared.account.overrides).toEqual({ daily_quota: 7, negative_balance_cap: 2.5 });
    expect(cleared.account.limits.max_num_generations).toBe(10_000); // API runs: Premium caps

    const read = await json(await admin(`/accounts/${acc.id}`));
    expect(read.account).toMatchObject({ plan: "trial", overrides: { daily_quota: 7, negative_balance_cap: 2.5 } });
  });

  it.each([
    ["an unknown plan", { plan: "enterprise" }, "plan"],
    ["a negative override", { overrides: { daily_quota: -1 } }, "overrides.daily_quota"],
    ["a fractional override", { overrides: { max_num_genes: 1.5 } }, "overrides.max_num_genes"],
    ["an unknown override", { overrides: { max_sol_per_pop: 5 } }, "overrides.max_sol_per_pop"],
    ["an unknown field", { credits: 5 }, "credits"],
  ])("%s is 400", async (_label, body, field) => {
    const acc = await newAccount();
    const err = await expectError(await admin(`/accounts/${acc.id}`, { method: "PATCH", body }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("an unknown account is 404", async () => {
    await expectError(await admin("/accounts/AAAAAAAAAAAA", { method: "PATCH", body: { plan: "free" } }), 404, "not_found");
  });
});

describe("POST /admin/v1/accounts/{id}/credits", () => {
  it("adds and removes paid and free credits and answers with the balances", async () => {
    const acc = await newAccount("premium", 100);
    const credits = (body: unknown) => admin(`/accounts/${acc.id}/credits`, { body });
    let res = await credits({ amount: 5.5 });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ balances: { free: 0, paid: 105.5, total: 105.5 } });
    expect(await json(await credits({ amount: 2, kind: "free" }))).toEqual({ balances: { free: 2, paid: 105.5, total: 107.5 } });
    expect(await json(await credits({ amount: -10.25 }))).toEqual({ balances: { free: 2, paid: 95.25, total: 97.25 } });
    res = await credits({ amount: -3, kind: "free" });
    expect(await json(res)).toEqual({ balances: { free: -1, paid: 95.25, total: 94.25 } });
    const ledger = await env.DB.prepare("SELECT count(*) AS n FROM credit_ledger WHERE account_id = ? AND kind = 'grant'")
      .bind(acc.id)
      .first("n");
    expect(ledger).toBe(5); // the initial 100 and four changes
  });

  it.each([
    ["no amount", {}, "amount"],
    ["a string amount", { amount: "5" }, "amount"],
    ["an unknown kind", { amount: 5, kind: "bonus" }, "kind"],
    ["an absurd amount", { amount: 1e12 }, "amount"],
  ])("%s is 400", async (_label, body, field) => {
    const acc = await newAccount();
    const err = await expectError(await admin(`/accounts/${acc.id}/credits`, { body }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("an unknown account is 404", async () => {
    await expectError(await admin("/accounts/AAAAAAAAAAAA/credits", { body: { amount: 1 } }), 404, "not_found");
  });
});

describe("keys: create with scopes and expiry, revoke", () => {
  it("creates a key (201) limited to its scopes, with an expiry", async () => {
    const acc = await newAccount();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const res = await admin(`/accounts/${acc.id}/keys`, {
      body: { name: "reader", scopes: ["submissions:read", "results:read"], expires_at: expiresAt },
    });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      key: body.key,
      prefix: body.key.slice(0, 12),
      name: "reader",
      scopes: ["submissions:read", "results:read"],
      expires_at: expiresAt,
    });
    expect(body.key).toMatch(KEY);
    expect((await call("/api/v1/submissions/", { key: body.key })).status).toBe(200);
    await expectError(await call("/api/v1/submissions/", { key: body.key, body: job() }), 403, "scope_required");
    const listed = (await json(await admin(`/accounts/${acc.id}`))).keys.find((k: any) => k.prefix === body.prefix);
    expect(listed).toMatchObject({ name: "reader", scopes: ["submissions:read", "results:read"], expires_at: expiresAt, revoked_at: null });
  });

  it("an expiry with an offset is stored in UTC", async () => {
    const acc = await newAccount();
    const local = new Date(Date.now() + 86_400_000);
    const withOffset = new Date(local.getTime() + 2 * 3600_000).toISOString().replace(/\.\d+Z$/, "+02:00");
    const body = await json(
      await admin(`/accounts/${acc.id}/keys`, { body: { name: "tz", scopes: ["results:read"], expires_at: withOffset } }),
    );
    expect(body.expires_at).toBe(new Date(Date.parse(withOffset)).toISOString());
  });

  it.each([
    ["no scopes", { name: "k", scopes: [] }, "scopes"],
    ["an unknown scope", { name: "k", scopes: ["admin"] }, "scopes.0"],
    ["a repeated scope", { name: "k", scopes: ["results:read", "results:read"] }, "scopes"],
    ["an expiry in the past", { name: "k", scopes: ["results:read"], expires_at: "2000-01-01T00:00:00Z" }, "expires_at"],
    ["an expiry that is not a date", { name: "k", scopes: ["results:read"], expires_at: "tomorrow" }, "expires_at"],
    ["no name", { scopes: ["results:read"] }, "name"],
    ["a name over 100 characters", { name: "n".repeat(101), scopes: ["results:read"] }, "name"],
  ])("%s is 400", async (_label, body, field) => {
    const acc = await newAccount();
    const err = await expectError(await admin(`/accounts/${acc.id}/keys`, { body }), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
  });

  it("a key for an unknown account is 404", async () => {
    await expectError(await admin("/accounts/AAAAAAAAAAAA/keys", { body: { name: "k", scopes: ["results:read"] } }), 404, "not_found");
  });

  it("revoking (200) makes the key 401 at once; revoking again is still 200; an unknown prefix 404", async () => {
    const acc = await newAccount();
    const prefix = acc.key.slice(0, 12);
    const res = await admin(`/keys/${prefix}/revoke`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ prefix, revoked: true, revoked_dependents: [] });
    const denied = await call("/api/v1/submissions/", { key: acc.key });
    await expectError(denied, 401, "unauthorized");
    expect(denied.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    const listed = (await json(await admin(`/accounts/${acc.id}`))).keys[0];
    expect(listed.revoked_at).toMatch(/Z$/);
    expect((await admin(`/keys/${prefix}/revoke`, { method: "POST" })).status).toBe(200);
    expect((await json(await admin(`/accounts/${acc.id}`))).keys[0].revoked_at).toBe(listed.revoked_at);
    await expectError(await admin("/keys/alk_NOSUCHKY/revoke", { method: "POST" }), 404, "not_found");
  });
});

describe("admin authentication", () => {
  it.each([
    ["no token", undefined],
    ["a wrong token", "Bearer wrong-token"],
    ["the token with another scheme", `Basic ${ADMIN_TOKEN}`],
    ["the token with a suffix", `Bearer ${ADMIN_TOKEN}x`],
  ])("%s is 401 with WWW-Authenticate", async (_label, authorization) => {
    const res = await call("/admin/v1/accounts/AAAAAAAAAAAA", { headers: authorization ? { Authorization: authorization } : {} });
    await expectError(res, 401, "unauthorized");
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
  });

  it("an API key is not an admin token", async () => {
    const acc = await newAccount();
    await expectError(await call(`/admin/v1/accounts/${acc.id}`, { key: acc.key }), 401, "unauthorized");
  });

  it("every admin path is 404 when no ADMIN_TOKEN is configured", async () => {
    const app = newApp();
    for (const [method, path] of [
      ["GET", "/admin/v1/accounts/AAAAAAAAAAAA"],
      ["POST", "/admin/v1/accounts"],
      ["POST", "/admin/v1/keys/alk_AAAAAAAA/revoke"],
    ]) {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request(`${BASE}${path}`, {
          method,
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        }),
        { ...env, ADMIN_TOKEN: undefined },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      await expectError(res, 404, "not_found");
    }
  });
});
