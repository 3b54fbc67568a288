// Credentials (401 in every form), scopes on every route (403 scope_required), 404 and 405 (docs/api.md#identifiers, docs/api.md#errors).
import { beforeEach, describe, expect, it } from "vitest";
import { newApp } from "../../src/app";
import {
  admin,
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  freshIp,
  getSubmission,
  job,
  json,
  newKey,
  newResult,
  newRoomyAccount,
  type TestAccount,
} from "../helpers/api";

const SCOPES = ["submissions:read", "submissions:write", "results:read", "results:write", "webhooks:read", "webhooks:write"];
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const fakeKey = (prefix = "alk_Zz9Zz9Zz") => `${prefix}_${Array.from({ length: 40 }, (_, i) => B62[(i * 7) % 62]).join("")}`;

let a: TestAccount;
beforeEach(async () => {
  a = await newRoomyAccount();
});

async function expectUnauthorized(res: Response) {
  await expectError(res, 401, "unauthorized");
  expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer\b/);
}

describe("401 unauthorized", () => {
  const credentials: [string, () => Record<string, string>][] = [
    ["no Authorization header", () => ({})],
    ["an empty header", () => ({ Authorization: "" })],
    ["Bearer without a token", () => ({ Authorization: "Bearer " })],
    ["the Basic scheme", () => ({ Authorization: `Basic ${btoa("user:pass")}` })],
    ["the key without a scheme", () => ({ Authorization: a.key })],
    ["a token that is not a key", () => ({ Authorization: "Bearer not-a-key" })],
    ["a key with a short secret", () => ({ Authorization: `Bearer ${a.key.slice(0, -1)}` })],
    ["a key with trailing junk", () => ({ Authorization: `Bearer ${a.key}x` })],
    ["two tokens", () => ({ Authorization: `Bearer ${a.key} ${a.key}` })],
    ["an unknown well-formed key", () => ({ Authorization: `Bearer ${fakeKey()}` })],
    ["a known prefix with a wrong secret", () => ({ Authorization: `Bearer ${fakeKey(a.key.slice(0, 12))}` })],
    ["the admin token", () => ({ Authorization: "Bearer test-admin-token-0123456789" })],
  ];

  it.each(credentials)("%s", async (_label, headers) => {
    await expectUnauthorized(await call("/api/v1/submissions/", { headers: headers(), ip: freshIp() }));
  });

  it("is answered before the body is looked at", async () => {
    const ip = freshIp();
    await expectUnauthorized(
      await call("/api/v1/submissions/", { method: "POST", rawBody: "{", headers: { "Content-Type": "application/json" }, ip }),
    );
    await expectUnauthorized(await call("/api/v1/submissions/", { body: job(), headers: { Authorization: "Bearer nope" }, ip }));
  });

  it("a revoked key", async () => {
    const key = await newKey(a, ["submissions:read"]);
    expect((await call("/api/v1/submissions/", { key })).status).toBe(200);
    expect((await admin(`/keys/${key.slice(0, 12)}/revoke`, { method: "POST" })).status).toBe(200);
    await expectUnauthorized(await call("/api/v1/submissions/", { key, ip: freshIp() }));
    // The account's other keys are untouched.
    expect((await call("/api/v1/submissions/", { key: a.key })).status).toBe(200);
  });

  it("an expired key (and one that has not expired yet works)", async () => {
    const key = await newKey(a, ["submissions:read"], new Date(Date.now() + 3_600_000).toISOString());
    expect((await call("/api/v1/submissions/", { key })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE prefix = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), key.slice(0, 12))
      .run();
    await expectUnauthorized(await call("/api/v1/submissions/", { key, ip: freshIp() }));
  });

  it("a key that expires while in use", async () => {
    const key = await newKey(a, ["submissions:read"], new Date(Date.now() + 1500).toISOString());
    expect((await call("/api/v1/submissions/", { key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    await expectUnauthorized(await call("/api/v1/submissions/", { key, ip: freshIp() }));
  });

  it("on every kind of route", async () => {
    const ip = freshIp();
    for (const [method, path] of [
      ["GET", "/api/v1/submissions/AAAAAAAAAAAA"],
      ["DELETE", "/api/v1/submissions/AAAAAAAAAAAA"],
      ["POST", "/api/v1/submissions/AAAAAAAAAAAA/cancel"],
      ["POST", "/api/v1/submissions/AAAAAAAAAAAA/reexecute"],
      ["GET", "/api/v1/results/"],
      ["GET", "/api/v1/results/AAAAAAAAAAAA"],
      ["PATCH", "/api/v1/results/AAAAAAAAAAAA"],
      ["DELETE", "/api/v1/results/AAAAAAAAAAAA"],
      ["GET", "/api/v1/results/AAAAAAAAAAAA/files/result.json"],
      ["POST", "/api/v1/results/AAAAAAAAAAAA/continue"],
    ]) {
      await expectUnauthorized(await call(path!, { method, ip }));
    }
  });

  it("the key's last use is recorded", async () => {
    const key = await newKey(a, ["submissions:read"]);
    expect((await call("/api/v1/submissions/", { key })).status).toBe(200);
    let lastUsed: string | null = null;
    for (let i = 0; i < 20 && !lastUsed; i++) {
      lastUsed = await env.DB.prepare("SELECT last_used_at FROM api_keys WHERE prefix = ?").bind(key.slice(0, 12)).first("last_used_at");
      if (!lastUsed) await new Promise((r) => setTimeout(r, 10));
    }
    expect(lastUsed).toMatch(/Z$/);
  });
});

describe("403 scope_required on every route", () => {
  // Each route, its scope, a way to make a target that the full-scope key owns, and the status a key
  // with only that scope gets (the full success, not just "past the scope check").
  type Route = { method: string; path: (ids: Ids) => string; scope: string; body?: unknown; ok: number };
  type Ids = { queued: string; finished: string; result: string; resultForContinue: string };

  const routes: Route[] = [
    { method: "GET", path: () => "/api/v1/submissions/", scope: "submissions:read", ok: 200 },
    { method: "POST", path: () => "/api/v1/submissions/", scope: "submissions:write", body: job(), ok: 202 },
    { method: "GET", path: (i) => `/api/v1/submissions/${i.queued}`, scope: "submissions:read", ok: 200 },
    { method: "POST", path: (i) => `/api/v1/submissions/${i.queued}/cancel`, scope: "submissions:write", ok: 202 },
    { method: "POST", path: (i) => `/api/v1/submissions/${i.finished}/reexecute`, scope: "submissions:write", ok: 202 },
    { method: "DELETE", path: (i) => `/api/v1/submissions/${i.queued}`, scope: "submissions:write", ok: 204 },
    { method: "GET", path: () => "/api/v1/results/", scope: "results:read", ok: 200 },
    { method: "GET", path: (i) => `/api/v1/results/${i.result}`, scope: "results:read", ok: 200 },
    { method: "GET", path: (i) => `/api/v1/results/${i.result}/files/result.json`, scope: "results:read", ok: 200 },
    { method: "PATCH", path: (i) => `/api/v1/results/${i.result}`, scope: "results:write", body: { name: "x" }, ok: 200 },
    { method: "POST", path: (i) => `/api/v1/results/${i.resultForContinue}/continue`, scope: "submissions:write", ok: 202 },
    { method: "DELETE", path: (i) => `/api/v1/results/${i.result}`, scope: "results:write", ok: 204 },
  ];

  async function targets(acc: TestAccount): Promise<Ids> {
    const queued = await createSubmission(acc.key);
    const finished = await createSubmission(acc.key);
    await completeRun((await getSubmission(acc.key, finished)).latest_run.id, { status: "failed" });
    const { resultId: result } = await newResult(acc.key);
    const { resultId: resultForContinue } = await newResult(acc.key);
    return { queued, finished, result, resultForContinue };
  }

  it.each(
    routes.map(
      (r) => [`${r.method} ${r.path({ queued: "{id}", finished: "{id}", result: "{id}", resultForContinue: "{id}" })}`, r] as const,
    ),
  )("%s", async (_label, route) => {
    const acc = await newRoomyAccount();
    const ids = await targets(acc);
    const without = await newKey(
      acc,
      SCOPES.filter((s) => s !== route.scope),
    );
    const only = await newKey(acc, [route.scope]);

    const denied = await call(route.path(ids), { key: without, method: route.method, body: route.body });
    const err = await expectError(denied, 403, "scope_required");
    expect(err.details).toEqual({ required_scope: route.scope });

    const allowed = await call(route.path(ids), { key: only, method: route.method, body: route.body });
    expect(allowed.status, await allowed.clone().text()).toBe(route.ok);
  });

  it("a key with no API scopes but webhooks ones is refused everywhere it is not allowed", async () => {
    const key = await newKey(a, ["webhooks:read", "webhooks:write"]);
    const err = await expectError(await call("/api/v1/results/", { key }), 403, "scope_required");
    expect(err.details.required_scope).toBe("results:read");
  });

  it("the scope is checked before the body (a bad body with a read-only key is 403, not 400)", async () => {
    const key = await newKey(a, ["submissions:read"]);
    const err = await expectError(
      await call("/api/v1/submissions/", { key, method: "POST", rawBody: "{", headers: { "Content-Type": "application/json" } }),
      403,
      "scope_required",
    );
    expect(err.details.required_scope).toBe("submissions:write");
  });
});

describe("404 not_found", () => {
  it.each([
    ["GET", "/api/v1/submissions/AAAAAAAAAAAA"],
    ["GET", "/api/v1/submissions/short"],
    ["GET", `/api/v1/submissions/${"z".repeat(2000)}`],
    ["GET", "/api/v1/submissions/%00%FF"],
    ["GET", "/api/v1/submissions/..%2F..%2Fadmin"],
    ["DELETE", "/api/v1/submissions/AAAAAAAAAAAA"],
    ["POST", "/api/v1/submissions/AAAAAAAAAAAA/cancel"],
    ["POST", "/api/v1/submissions/AAAAAAAAAAAA/reexecute"],
    ["GET", "/api/v1/results/AAAAAAAAAAAA"],
    ["DELETE", "/api/v1/results/AAAAAAAAAAAA"],
    ["GET", "/api/v1/results/AAAAAAAAAAAA/files/result.json"],
    ["POST", "/api/v1/results/AAAAAAAAAAAA/continue"],
    ["GET", "/api/v1/nothing-here"],
    ["GET", "/api/v2/submissions/"],
  ])("%s %s", async (method, path) => {
    await expectError(await call(path, { key: a.key, method }), 404, "not_found");
  });

  it("PATCH of an unknown result with a valid body", async () => {
    await expectError(await call("/api/v1/results/AAAAAAAAAAAA", { key: a.key, method: "PATCH", body: { name: "x" } }), 404, "not_found");
  });
});

describe("405 with Allow", () => {
  it.each([
    ["PUT", "/api/v1/submissions/", "GET, POST"],
    ["DELETE", "/api/v1/submissions", "GET, POST"],
    ["PATCH", "/api/v1/submissions/AAAAAAAAAAAA", "GET, DELETE"],
    ["POST", "/api/v1/submissions/AAAAAAAAAAAA", "GET, DELETE"],
    ["GET", "/api/v1/submissions/AAAAAAAAAAAA/cancel", "POST"],
    ["DELETE", "/api/v1/submissions/AAAAAAAAAAAA/reexecute", "POST"],
    ["POST", "/api/v1/results/", "GET"],
    ["PUT", "/api/v1/results/AAAAAAAAAAAA", "GET, PATCH, DELETE"],
    ["GET", "/api/v1/results/AAAAAAAAAAAA/continue", "POST"],
    ["DELETE", "/api/v1/results/AAAAAAAAAAAA/files/result.json", "GET"],
    ["POST", "/api/v1/health", "GET"],
    ["TRACE", "/api/v1/account", "GET"],
    ["QUERY", "/api/v1/submissions", "GET, POST"],
    ["POST", "/api/v1/openapi.json", "GET"],
    ["GET", "/api/v1/imports", "POST"],
    ["PUT", "/api/v1/webhooks/AAAAAAAAAAAA/deliveries", "GET"],
    ["GET", "/api/v1/webhooks/AAAAAAAAAAAA/deliveries/0123456789abcdef/replay/", "POST"],
    ["GET", "/api/v1/auth/device/token", "POST"],
  ])("%s %s", async (method, path, allow) => {
    // With and without a key: a wrong method reveals nothing either way.
    for (const key of [a.key, undefined]) {
      const res = await call(path, { key, method, ip: freshIp() });
      const err = await expectError(res, 405, "method_not_allowed");
      expect(res.headers.get("Allow")).toBe(allow);
      expect(err.details.allowed).toEqual(allow.split(", "));
    }
  });

  it("every path the app registers under /api/v1 refuses a method it has no route for (the 405s are read from the routes)", async () => {
    const byPath = new Map<string, Set<string>>();
    for (const route of newApp().routes) {
      if (route.method === "ALL" || !route.path.startsWith("/api/v1/")) continue;
      const path = route.path.replace(/\/+$/, "").replace(/:\w+/g, "AAAAAAAAAAAA");
      byPath.set(path, (byPath.get(path) ?? new Set()).add(route.method));
    }
    expect(byPath.size).toBeGreaterThan(20);
    for (const [path, methods] of byPath) {
      if (methods.has("PUT")) continue;
      const res = await call(path, { key: a.key, method: "PUT", ip: freshIp() });
      await expectError(res, 405, "method_not_allowed");
      expect(res.headers.get("Allow")!.split(", ").sort(), path).toEqual([...methods].sort());
    }
  });
});

describe("request ids", () => {
  it("every response carries X-Request-Id; a well-formed incoming one is echoed", async () => {
    const ok = await call("/api/v1/submissions/", { key: a.key });
    expect(ok.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
    const echoed = await call("/api/v1/submissions/AAAAAAAAAAAA", { key: a.key, headers: { "X-Request-Id": "client-req-12345" } });
    expect(echoed.headers.get("X-Request-Id")).toBe("client-req-12345");
    expect((await expectError(echoed, 404, "not_found")).request_id).toBe("client-req-12345");
    const hostile = await call("/api/v1/submissions/", { key: a.key, headers: { "X-Request-Id": "<script>" } });
    expect(hostile.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
    const created = await call("/api/v1/submissions/", { key: a.key, body: job() });
    expect(created.headers.get("X-Request-Id")).toBeTruthy();
    expect((await json(created)).status).toBe("queued");
  });
});
