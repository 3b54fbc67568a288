import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api";

describe("health, request ids, 404 and 405", () => {
  it("answers health with a request id", async () => {
    const res = await call("/api/v1/health");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: "ok" });
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it("answers an unknown path with the error body", async () => {
    const res = await call("/nope");
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error.code).toBe("not_found");
    expect(body.error.request_id).toBe(res.headers.get("X-Request-Id"));
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const res = await call("/api/v1/health", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("GET");
    expect((await json(res)).error.code).toBe("method_not_allowed");
  });
});
