import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ServiceStatus } from "../../src/dashboard/account/page";
import { Health } from "../../src/http/validation/responses";
import worker from "../../src/index";
import { type IsolationFlags, isolationKey, observeIsolation } from "../../src/runner/isolation";
import { call, env, json, newAccount } from "../helpers/api";
import { WebClient } from "../helpers/web";

/** The shape of the GA worker's sandbox measures (its own GET /health's `isolation`). */
const FLAGS = {
  user: expect.any(Boolean),
  network: expect.any(Boolean),
  pid_namespace: expect.any(Boolean),
  minimal_root: expect.any(Boolean),
  syscall_filter: expect.any(Boolean),
  memory_tree: expect.any(Boolean),
  cpu_tree: expect.any(Boolean),
  pids: expect.any(Boolean),
  rlimits: expect.any(Array),
  notes: expect.any(Array),
};

/** GET /api/v1/health against the Worker with some of its bindings replaced. */
const healthWith = (changes: Record<string, unknown>) =>
  worker.fetch!(new Request("https://allele.test/api/v1/health") as never, { ...env, ...changes } as never, createExecutionContext());

describe("health, request ids, 404 and 405", () => {
  it("answers health with a request id, and the standing GA worker's sandbox measures", async () => {
    const res = await call("/api/v1/health");
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual({
      status: "ok",
      checks: { database: { status: "ok" }, files: { status: "ok" }, runner: { status: "ok", isolation: expect.objectContaining(FLAGS) } },
    });
    // They are the worker's own, as its /health reports them.
    const own = (await (await fetch(new URL("/health", env.RUNNER_URL))).json()) as { isolation: unknown };
    expect(body.checks.runner.isolation).toEqual(own.isolation);
    // The body is what the OpenAPI document says (docs/openapi.json's Health).
    expect(Health.safeParse(body).error).toBeUndefined();
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it("answers 503 naming the GA worker when it is down", async () => {
    const res = await healthWith({ RUNNER_URL: "http://127.0.0.1:9" });
    expect(res.status).toBe(503);
    const body = await json(res as unknown as Response);
    expect(body).toMatchObject({
      status: "unavailable",
      failing: ["runner"],
      checks: { database: { status: "ok" }, runner: { status: "down" } },
    });
  });

  it("answers 503 naming the database when it fails", async () => {
    const broken = { prepare: () => ({ first: () => Promise.reject(new Error("D1 is down")), bind: () => broken }) };
    const res = await healthWith({ DB: broken });
    expect(res.status).toBe(503);
    expect(await json(res as unknown as Response)).toMatchObject({
      status: "unavailable",
      failing: ["database"],
      checks: { files: { status: "ok" } },
    });
  });

  it("answers 503 naming the files bucket when it fails", async () => {
    const res = await healthWith({ FILES: { head: () => Promise.reject(new Error("R2 is down")) } });
    expect(res.status).toBe(503);
    expect(await json(res as unknown as Response)).toMatchObject({ failing: ["files"] });
  });

  it("reports a container runner as started on demand (production)", async () => {
    const res = await healthWith({ RUNNER_URL: "" });
    expect(res.status).toBe(200);
    expect(await json(res as unknown as Response)).toMatchObject({ checks: { runner: { status: "on_demand" } } });
  });

  it("in production shows the flags the latest started instance reported, with when and its class; none before any started", async () => {
    await env.FILES.delete([isolationKey("GaRunner"), isolationKey("GaRunnerWide")]);
    const before = await json((await healthWith({ RUNNER_URL: "" })) as unknown as Response);
    expect(before.checks.runner).toEqual({ status: "on_demand" });
    // An instance once started is asked as GaRunner.startRun asks it (here: the real GA worker process).
    const own = await (await fetch(new URL("/health", env.RUNNER_URL))).json();
    expect(await observeIsolation(() => fetch(new URL("/health", env.RUNNER_URL)), env.FILES, "GaRunnerWide")).toBe(true);
    const after = await json((await healthWith({ RUNNER_URL: "" })) as unknown as Response);
    expect(after.checks.runner).toEqual({
      status: "on_demand",
      isolation: (own as { isolation: unknown }).isolation,
      observed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      class: "GaRunnerWide",
    });
    expect(Health.safeParse(after).error).toBeUndefined();
    expect(Health.safeParse(before).error).toBeUndefined();
    // A later observation of the other class is the one shown; one with a measure missing shows it missing.
    const missing = { ...(own as { isolation: Record<string, unknown> }).isolation, cgroup: null, minimal_root: false };
    const body = JSON.stringify({ status: "ok", isolation: missing });
    expect(await observeIsolation(async () => new Response(body), env.FILES, "GaRunner")).toBe(true);
    const latest = await json((await healthWith({ RUNNER_URL: "" })) as unknown as Response);
    expect(latest.checks.runner).toMatchObject({ class: "GaRunner", isolation: { cgroup: null, minimal_root: false } });
    // A health answer that is not one keeps the observation before; nothing is made up.
    expect(await observeIsolation(async () => new Response(JSON.stringify({ isolation: { user: "yes" } })), env.FILES, "GaRunner")).toBe(
      false,
    );
    expect(await observeIsolation(async () => new Response("down", { status: 503 }), env.FILES, "GaRunner")).toBe(false);
    expect((await json((await healthWith({ RUNNER_URL: "" })) as unknown as Response)).checks.runner).toEqual(latest.checks.runner);
    await env.FILES.delete([isolationKey("GaRunner"), isolationKey("GaRunnerWide")]);
  });

  it("the dashboard's account page shows the service status: the GA worker and its sandbox measures, an absent one named", async () => {
    const web = new WebClient();
    expect((await web.signInWithKey((await newAccount()).key)).status).toBe(303);
    const page = await (await web.request("/account")).text();
    expect(page).toContain("Service status");
    const own = (await (await fetch(new URL("/health", env.RUNNER_URL))).json()) as { isolation: IsolationFlags };
    const absent = (["user", "network", "syscall_filter", "pid_namespace", "minimal_root", "cgroup"] as const).filter(
      (m) => !own.isolation[m],
    );
    if (absent.length) for (const m of absent) expect(page).toMatch(new RegExp(`absent: [^<]*\\b${m}\\b`));
    else expect(page).toContain("all enforced");
    // In production: the latest instance's flags, a missing one named; none before any instance started.
    const flags: IsolationFlags = { ...own.isolation, user: true, network: true, syscall_filter: true, cgroup: null, minimal_root: false };
    const html = async (runner: Parameters<typeof ServiceStatus>[0]["runner"]) => String(await ServiceStatus({ runner }).toString());
    const seen = await html({ status: "on_demand", isolation: flags, observed_at: "2026-11-27T03:00:00.000Z", class: "GaRunner" });
    expect(seen).toMatch(/absent: minimal_root \([^)]*\), cgroup \(/);
    expect(seen).toContain("GaRunner");
    expect(seen).not.toMatch(/absent:[^<]*\buser\b/);
    expect(await html({ status: "on_demand" })).toContain("not reported yet");
    expect(await html({ status: "on_demand", isolation: { ...flags, cgroup: "v2", minimal_root: true, pid_namespace: true } })).toContain(
      "all enforced",
    );
    expect(await html({ status: "down", reason: "GA worker unreachable" })).toContain("down: GA worker unreachable");
  });

  it("answers an unknown path of the machine interfaces with the error body, and any other with the dashboard's 404 page", async () => {
    const res = await call("/internal/v1/nope");
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error.code).toBe("not_found");
    expect(body.error.request_id).toBe(res.headers.get("X-Request-Id"));
    const page = await call("/nope");
    expect(page.status).toBe(404);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    expect(await page.text()).toContain(page.headers.get("X-Request-Id")!);
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const res = await call("/api/v1/health", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
    expect((await json(res)).error.code).toBe("method_not_allowed");
  });
});
