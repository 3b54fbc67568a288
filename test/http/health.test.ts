import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { call, env, json } from "../helpers/api";

/** GET /api/v1/health against the Worker with some of its bindings replaced. */
const healthWith = (changes: Record<string, unknown>) =>
  worker.fetch!(new Request("https://allele.test/api/v1/health") as never, { ...env, ...changes } as never, createExecutionContext());

describe("health, request ids, 404 and 405", () => {
  it("answers health with a request id", async () => {
    const res = await call("/api/v1/health");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      status: "ok",
      checks: { database: { status: "ok" }, files: { status: "ok" }, runner: { status: "ok" } },
    });
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
