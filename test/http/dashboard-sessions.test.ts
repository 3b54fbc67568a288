// Dashboard sign-in, sessions, CSRF and the failed sign-in limit (docs/dashboard.md#sessions).
import { describe, expect, it } from "vitest";
import { admin, call, env, json, newAccount, newKey } from "../helpers/api";
import { WebClient } from "../helpers/web";

const sha256 = async (s: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

async function link(accountId: string, ttl?: number): Promise<string> {
  const res = await admin(`/accounts/${accountId}/sign-in-links`, { body: ttl ? { ttl_minutes: ttl } : {} });
  expect(res.status).toBe(201);
  return new URL((await json(res)).url).pathname;
}

describe("sign in with an API key", () => {
  it("starts a server-side session: an HttpOnly, Secure, SameSite cookie whose token D1 keeps only hashed", async () => {
    const account = await newAccount();
    const web = new WebClient();
    const res = await web.signInWithKey(account.key);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/submissions");
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-allele_session="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Secure/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    const token = web.cookies.get("__Host-allele_session")!;
    const row = await env.DB.prepare("SELECT * FROM sessions WHERE account_id = ?").bind(account.id).first<Record<string, string>>();
    expect(row!.token_hash).toBe(await sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(Date.parse(row!.expires_at)).toBeGreaterThan(Date.now());
    const page = await web.request("/submissions");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Submissions");
    // Pages come only with this origin's scripts, are never framed by another site, and keep their Referer in.
    expect(page.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    expect(page.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("X-Frame-Options")).toBe("DENY");
    expect(page.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(page.headers.get("Cache-Control")).toBe("no-store");
  });

  it("refuses a wrong key with a 401 page and no session; pages without a session send to the sign-in page", async () => {
    const web = new WebClient();
    const res = await web.signInWithKey(`alk_AAAAAAAA_${"B".repeat(40)}`);
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("not valid");
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
    const page = await web.request("/results?is_shared=true");
    expect(page.status).toBe(303);
    expect(page.headers.get("Location")).toBe("/sign-in?next=%2Fresults%3Fis_shared%3Dtrue");
  });

  it("the session has the key's scopes and ends when the key is revoked", async () => {
    const account = await newAccount();
    const key = await newKey(account, ["submissions:read"]);
    const web = new WebClient();
    await web.signInWithKey(key);
    expect((await web.request("/submissions")).status).toBe(200);
    const results = await web.request("/results");
    expect(results.status).toBe(403);
    expect(await results.text()).toContain("results:read");
    const prefix = key.slice(0, 12);
    await admin(`/keys/${prefix}/revoke`, { method: "POST" });
    expect((await web.request("/submissions")).status).toBe(303);
  });
});

describe("a session signed in with an expiring key", () => {
  // Its session ends with the key; the keys it issues must too, or a key meant to last a day could mint
  // one that lasts for ever (the scopes were already bounded by the session's).
  it("issues keys that expire no later than its key (by default exactly then) and approves no device login", async () => {
    const account = await newAccount();
    const expiresAt = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const web = new WebClient();
    await web.signInWithKey(await newKey(account, ["submissions:read", "results:read"], expiresAt));
    const unbounded = await web.post("/account/keys", { name: "forever", scopes: "results:read", expires_at: "2099-01-01" });
    expect(unbounded.status).toBe(400);
    expect(await unbounded.text()).toContain("no later than the key you signed in with");
    expect((await web.post("/account/keys", { name: "default-expiry", scopes: "results:read" })).status).toBe(201);
    expect(
      (
        await web.post("/account/keys", {
          name: "sooner",
          scopes: "results:read",
          expires_at: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
        })
      ).status,
    ).toBe(201);
    const keys: { name: string; expires_at: string | null }[] = (await json(await admin(`/accounts/${account.id}`))).keys;
    expect(keys.find((k) => k.name === "forever")).toBeUndefined();
    expect(keys.find((k) => k.name === "default-expiry")!.expires_at).toBe(expiresAt);
    expect(Date.parse(keys.find((k) => k.name === "sooner")!.expires_at!)).toBeLessThanOrEqual(Date.parse(expiresAt));
    // A device login's key never expires: such a session cannot approve one.
    const started = await json(await call("/api/v1/auth/device/code", { body: {} }));
    const confirm = await web.post("/device", { user_code: started.user_code });
    const id = /name="id" value="([^"]+)"/.exec(await confirm.text())![1]!;
    const refused = await web.post("/device/decide", {
      id,
      user_code: started.user_code,
      decision: "approve",
      key_name: "laptop",
      scopes: "results:read",
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("expires");
    expect((await json(await admin(`/accounts/${account.id}`))).keys.length).toBe(keys.length);
  });
});

describe("sign in with a one-time link", () => {
  it("a GET shows a button and signs nobody in; the POST signs in once; a second use is refused", async () => {
    const account = await newAccount();
    const path = await link(account.id);
    const web = new WebClient();
    const page = await web.request(path);
    expect(page.status).toBe(200);
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
    const res = await web.request(path, { form: { _csrf: WebClient.csrfOf(await page.text()) } });
    expect(res.status).toBe(303);
    expect(web.cookies.has("__Host-allele_session")).toBe(true);
    const account_page = await web.request("/account");
    expect(await account_page.text()).toContain(account.id);

    const again = new WebClient();
    const used = await again.request(path);
    expect(used.status).toBe(410);
    expect(await used.text()).toContain("already used");
  });

  it("an expired link is refused; the admin call needs the admin token and an existing account", async () => {
    const account = await newAccount();
    const path = await link(account.id, 5);
    await env.DB.prepare("UPDATE sign_in_links SET expires_at = ? WHERE account_id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), account.id)
      .run();
    const web = new WebClient();
    expect((await web.request(path)).status).toBe(410);
    expect((await admin("/accounts/NoSuchAccnt1/sign-in-links", { body: {} })).status).toBe(404);
    expect((await admin(`/accounts/${account.id}/sign-in-links`, { body: { ttl_minutes: 0 } })).status).toBe(400);
  });
});

describe("sign out and expiry", () => {
  it("sign-out revokes the session in D1: the old cookie no longer works", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const token = web.cookies.get("__Host-allele_session")!;
    const res = await web.post("/sign-out");
    expect(res.status).toBe(303);
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
    const row = await env.DB.prepare("SELECT revoked_at FROM sessions WHERE token_hash = ?")
      .bind(await sha256(token))
      .first<{ revoked_at: string | null }>();
    expect(row!.revoked_at).not.toBeNull();
    const replay = new WebClient();
    replay.cookies.set("__Host-allele_session", token);
    expect((await replay.request("/submissions")).status).toBe(303);
  });

  it("an expired session sends to the sign-in page", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE account_id = ?")
      .bind(new Date(Date.now() - 1).toISOString(), account.id)
      .run();
    expect((await web.request("/account")).status).toBe(303);
  });
});

describe("CSRF", () => {
  it("every state change needs the session's token and this origin; refused changes change nothing", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const keysBefore = (await json(await admin(`/accounts/${account.id}`))).keys.length;
    const form = { name: "from-elsewhere", scopes: "results:read" };
    const missing = await web.request("/account/keys", { form });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("did not come from this site");
    expect((await web.request("/account/keys", { form: { ...form, _csrf: "x".repeat(32) } })).status).toBe(400);
    const token = await web.csrf();
    expect(
      (await web.request("/account/keys", { form: { ...form, _csrf: token }, headers: { Origin: "https://evil.example" } })).status,
    ).toBe(400);
    expect((await web.request("/sign-out", { form: {} })).status).toBe(400);
    expect((await json(await admin(`/accounts/${account.id}`))).keys.length).toBe(keysBefore);
    // Another session's token is not this session's.
    const other = new WebClient();
    await other.signInWithKey(account.key);
    expect((await web.request("/account/keys", { form: { ...form, _csrf: await other.csrf() } })).status).toBe(400);
    const ok = await web.request("/account/keys", { form: { ...form, _csrf: token }, headers: { Origin: "https://allele.test" } });
    expect(ok.status).toBe(201);
    expect((await json(await admin(`/accounts/${account.id}`))).keys.length).toBe(keysBefore + 1);
  });

  it("the sign-in form needs its double-submit token", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.request("/sign-in");
    const res = await web.request("/sign-in", { form: { api_key: account.key } });
    expect(res.status).toBe(400);
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
  });
});

describe("failed sign-ins are limited per IP", () => {
  it("after 10 failures in 15 minutes an IP is refused (429), even with a right key; another IP is not", async () => {
    const account = await newAccount();
    const web = new WebClient("203.0.113.77");
    for (let i = 0; i < 10; i++) expect((await web.signInWithKey(`alk_AAAAAAAA_${"C".repeat(40)}`)).status).toBe(401);
    const blocked = await web.signInWithKey(account.key);
    expect(blocked.status).toBe(429);
    expect(await blocked.text()).toContain("Too many failed sign-ins");
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
    // Used links count too, and the limit holds for them.
    const path = await link(account.id);
    const page = await web.request(path);
    const viaLink = await web.request(path, { form: { _csrf: WebClient.csrfOf(await page.text()) } });
    expect(viaLink.status).toBe(303);
    expect(viaLink.headers.get("Location")).toBe("/sign-in");
    expect(web.cookies.has("__Host-allele_session")).toBe(false);
    expect((await new WebClient("203.0.113.78").signInWithKey(account.key)).status).toBe(303);
  });
});
