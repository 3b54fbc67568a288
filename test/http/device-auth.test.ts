// RFC 8628 device login (docs/dashboard.md#device-login): /api/v1/auth/device/code and /token, and the
// dashboard's approval page.
import { describe, expect, it } from "vitest";
import { call, env, json, newAccount, newKey } from "../helpers/api";
import { WebClient } from "../helpers/web";

async function start(body: unknown = {}) {
  const res = await call("/api/v1/auth/device/code", { body });
  expect(res.status).toBe(200);
  return json(res);
}

const poll = (deviceCode: string, extra: Record<string, unknown> = {}) =>
  call("/api/v1/auth/device/token", { body: { device_code: deviceCode, ...extra } });

/** Lets the device's interval pass (the test moves the last poll back instead of waiting). */
const waitInterval = (_deviceCode: string) =>
  env.DB.prepare("UPDATE device_codes SET last_polled_at = ? WHERE status IN ('pending','approved','denied')")
    .bind(new Date(Date.now() - 60_000).toISOString())
    .run();

async function approve(web: WebClient, userCode: string, scopes: string[], decision = "approve") {
  const confirm = await web.post("/device", { user_code: userCode });
  expect(confirm.status).toBe(200);
  const html = await confirm.text();
  const id = /name="id" value="([^"]+)"/.exec(html)![1]!;
  return web.post("/device/decide", { id, user_code: userCode, decision, key_name: "laptop", scopes });
}

describe("device authorization", () => {
  it("issues a code without a key; the fields the Vilvik SDK reads", async () => {
    const started = await start();
    expect(started).toMatchObject({
      device_code: expect.stringMatching(/^[0-9A-Za-z]{40}$/),
      user_code: expect.stringMatching(/^[B-Z]{4}-[B-Z]{4}$/),
      verification_uri: "https://allele.test/device",
      expires_in: 900,
      interval: 5,
    });
    expect(started.verification_uri_complete).toBe(`https://allele.test/device?user_code=${started.user_code}`);
    // Stored hashed only.
    const row = await env.DB.prepare("SELECT * FROM device_codes WHERE user_code = ?")
      .bind(started.user_code.replace("-", ""))
      .first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain(started.device_code);
  });

  it("pending, then slow_down when polled faster than the interval (which grows by 5 s), then the key once approved — an ordinary key", async () => {
    const account = await newAccount();
    const started = await start();
    const pending = await poll(started.device_code);
    expect(pending.status).toBe(400);
    expect(await json(pending)).toMatchObject({ error: "authorization_pending" });
    const fast = await poll(started.device_code);
    expect(await json(fast)).toMatchObject({ error: "slow_down" });
    expect(
      (await env.DB.prepare("SELECT interval_seconds FROM device_codes WHERE user_code = ?")
        .bind(started.user_code.replace("-", ""))
        .first<{ interval_seconds: number }>())!.interval_seconds,
    ).toBe(10);

    const web = new WebClient();
    await web.signInWithKey(account.key);
    const decided = await approve(web, started.user_code.toLowerCase(), ["submissions:read", "results:read"]);
    expect(decided.status).toBe(303);
    await waitInterval(started.device_code);
    const issued = await poll(started.device_code);
    expect(issued.status).toBe(200);
    const body = await json(issued);
    expect(body).toMatchObject({ token_type: "Bearer", scope: "submissions:read results:read", key_name: "laptop" });
    expect(body.api_key).toBe(body.access_token);
    const me = await json(await call("/api/v1/account", { key: body.api_key }));
    expect(me).toMatchObject({ id: account.id, key: { scopes: ["submissions:read", "results:read"] } });
    expect((await call("/api/v1/webhooks", { key: body.api_key })).status).toBe(403);
    // The key is listed with the account's others, and the code works once.
    await waitInterval(started.device_code);
    expect(await json(await poll(started.device_code))).toMatchObject({ error: "invalid_grant" });
  });

  it("a client that adds 5 s to its own interval at each slow_down (vilvik.login(poll_interval=2)) catches up: the server's interval grows once", async () => {
    const started = await start();
    const code = started.user_code.replace("-", "");
    const intervalNow = async () =>
      (await env.DB.prepare("SELECT interval_seconds FROM device_codes WHERE user_code = ?")
        .bind(code)
        .first<{ interval_seconds: number }>())!.interval_seconds;
    /** A poll `seconds` after the previous one (the test moves the previous poll back instead of waiting). */
    const pollAfter = async (seconds: number) => {
      await env.DB.prepare("UPDATE device_codes SET last_polled_at = ? WHERE user_code = ?")
        .bind(new Date(Date.now() - seconds * 1000).toISOString(), code)
        .run();
      return (await json(await poll(started.device_code))).error as string;
    };
    expect(await json(await poll(started.device_code))).toMatchObject({ error: "authorization_pending" });
    // The SDK: 2 s, then 5 s more at each slow_down (7, 12, …), as RFC 8628 §3.5 tells a client.
    const answers: string[] = [];
    for (let wait = 2; answers.length < 8 && answers.at(-1) !== "authorization_pending"; wait += 5) answers.push(await pollAfter(wait));
    expect(answers).toEqual(["slow_down", "slow_down", "authorization_pending"]);
    expect(await intervalNow()).toBe(10);
    // More early polls get slow_down and leave the interval where it is.
    expect(await pollAfter(1)).toBe("slow_down");
    expect(await pollAfter(9)).toBe("slow_down");
    expect(await intervalNow()).toBe(10);
    expect(await pollAfter(10)).toBe("authorization_pending");
  });

  it("denied, expired, unknown and malformed requests; form-encoded bodies work too", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const denied = await start();
    expect((await approve(web, denied.user_code, [], "deny")).status).toBe(303);
    expect(await json(await poll(denied.device_code))).toMatchObject({ error: "access_denied" });

    const expired = await start();
    await env.DB.prepare("UPDATE device_codes SET expires_at = ? WHERE user_code = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), expired.user_code.replace("-", ""))
      .run();
    expect(await json(await poll(expired.device_code))).toMatchObject({ error: "expired_token" });
    const late = await web.post("/device", { user_code: expired.user_code });
    expect(late.status).toBe(404);
    expect(await late.text()).toContain("No pending request has this code");

    expect(await json(await poll("x".repeat(40)))).toMatchObject({ error: "invalid_grant" });
    expect(await json(await call("/api/v1/auth/device/token", { body: {} }))).toMatchObject({ error: "invalid_request" });
    expect(await json(await poll(denied.device_code, { grant_type: "password" }))).toMatchObject({ error: "unsupported_grant_type" });
    expect((await call("/api/v1/auth/device/code", { rawBody: "[1]", headers: { "Content-Type": "application/json" } })).status).toBe(400);
    // RFC 8628's parameters are strings: another type is invalid_request and starts nothing (found by schemathesis).
    const before = (await env.DB.prepare("SELECT count(*) AS n FROM device_codes").first<{ n: number }>())!.n;
    const typed = await call("/api/v1/auth/device/code", { body: { client_id: ["cli"], scope: false } });
    expect(typed.status).toBe(400);
    expect(await json(typed)).toMatchObject({ error: "invalid_request", error_description: expect.stringContaining("client_id") });
    expect((await env.DB.prepare("SELECT count(*) AS n FROM device_codes").first<{ n: number }>())!.n).toBe(before);

    const form = await call("/api/v1/auth/device/code", {
      rawBody: "client_id=cli",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    const formStarted = await json(form);
    const formPoll = await call("/api/v1/auth/device/token", {
      rawBody: `grant_type=${encodeURIComponent("urn:ietf:params:oauth:grant-type:device_code")}&device_code=${formStarted.device_code}`,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(await json(formPoll)).toMatchObject({ error: "authorization_pending" });
    expect((await call("/api/v1/auth/device/token", { method: "GET" })).status).toBe(405);
  });

  it("approval needs a session, grants only the session's scopes, and a wrong code counts as a failed sign-in", async () => {
    const account = await newAccount();
    const started = await start();
    const anonymous = await new WebClient().request(`/device?user_code=${started.user_code}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("Location")).toContain("/sign-in?next=");

    const limited = new WebClient();
    await limited.signInWithKey(await newKey(account, ["submissions:read"]));
    const refused = await approve(limited, started.user_code, ["submissions:read", "webhooks:write"]);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("cannot grant");
    expect(await json(await poll(started.device_code))).toMatchObject({ error: "authorization_pending" });

    const guesser = new WebClient("203.0.113.90");
    await guesser.signInWithKey(account.key);
    for (let i = 0; i < 10; i++) expect((await guesser.post("/device", { user_code: "BBBB-BBBB" })).status).toBe(404);
    expect((await guesser.post("/device", { user_code: started.user_code })).status).toBe(429);
  });
});
