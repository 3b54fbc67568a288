// The OpenAPI documents (docs/architecture.md#openapi): what the Worker serves is what is committed, and
// every route the app registers is an operation of one of them, and every operation a registered route.
import { describe, expect, it } from "vitest";
import committedAdmin from "../../docs/openapi.admin.json";
import committedPublic from "../../docs/openapi.json";
import { newApp } from "../../src/app";
import { API_ROOT, generateDocument } from "../../src/http/openapi/document";
import { ADMIN_TOKEN, call, json } from "../helpers/api";

/**
 * Registered routes that are not part of either API, each with its reason. A route added anywhere else
 * must be declared with describe() (docs/architecture.md#openapi) or listed here.
 */
const NOT_IN_THE_API = [
  { prefix: "/internal/v1/", why: "the GA worker's callbacks, authenticated per run" },
  { prefix: "/__bench/", why: "the benchmarks' probes, off unless BENCH_ROUTES is set" },
  { prefix: "/docs", why: "the interactive docs page and its assets (HTML, not API)" },
];

/** Every method and path the app answers with a handler of its own (middleware, 405s included, aside). */
function registeredOperations(): Set<string> {
  const ops = new Set<string>();
  for (const route of newApp().routes) {
    if (route.method === "ALL") continue; // middleware (app.use), and the 405s of each path
    const path = route.path.length > 1 ? route.path.replace(/\/+$/, "") : route.path;
    if (NOT_IN_THE_API.some((x) => path.startsWith(x.prefix))) continue;
    ops.add(`${route.method} ${path.replace(/:(\w+)/g, "{$1}")}`);
  }
  return ops;
}

/** Every operation of the documents the code generates now (what `npm run openapi` would write). */
async function documentedOperations(): Promise<Set<string>> {
  const app = newApp();
  const ops = new Set<string>();
  for (const kind of ["public", "admin"] as const) {
    const doc = await generateDocument(app, kind);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) ops.add(`${method.toUpperCase()} ${API_ROOT[kind]}${path}`);
    }
  }
  return ops;
}

/** The error responses documented in RFC 6749 §5.2's shape instead of the API's envelope. */
const OAUTH_SHAPED = ["startDeviceAuthorization 400", "pollDeviceToken 400"];

describe("the OpenAPI documents", () => {
  it("GET /api/v1/openapi.json serves docs/openapi.json exactly, without a key (run `npm run openapi` after changing a route)", async () => {
    const res = await call("/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual(committedPublic);
  });

  it("GET /admin/v1/openapi.json serves docs/openapi.admin.json exactly, to the admin token only", async () => {
    expect((await call("/admin/v1/openapi.json")).status).toBe(401);
    expect(await json(await call("/admin/v1/openapi.json", { key: ADMIN_TOKEN }))).toEqual(committedAdmin);
  });

  it("every route the app registers is an operation of a document, and every operation a registered route", async () => {
    const registered = registeredOperations();
    const documented = await documentedOperations();
    const undocumented = [...registered].filter((op) => !documented.has(op));
    const unregistered = [...documented].filter((op) => !registered.has(op));
    expect(
      undocumented,
      "routes missing from the OpenAPI document: start their handler chain with describe({...}) (src/http/openapi/describe.ts), then `npm run openapi`",
    ).toEqual([]);
    expect(unregistered, "operations in the document that the app does not register").toEqual([]);
    expect(registered.size).toBeGreaterThan(30);
  });

  it("every operation names its id, its scope (or none), and each error status with its codes", () => {
    const ids = new Set<string>();
    for (const item of Object.values(committedPublic.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        expect(op.security).toBeDefined();
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          if (Number(status) < 400) continue;
          const schema = response.content["application/json"].schema;
          if (op.operationId === "getHealth" && status === "503") continue; // the readiness body, not an error
          // The device login answers its 400s in RFC 6749's shape {error, error_description}, as device clients read them.
          const codes = OAUTH_SHAPED.includes(`${op.operationId} ${status}`)
            ? schema.properties.error.enum
            : schema.allOf[1].properties.error.properties.code.enum;
          expect(codes.length, `${op.operationId} ${status}`).toBeGreaterThan(0);
        }
      }
    }
    expect(Object.keys(committedPublic.webhooks)).toEqual([
      "submission.succeeded",
      "submission.failed",
      "submission.cancelled",
      "result.completed",
      "run.resumed",
      "sweep.completed",
      "webhook.test",
    ]);
  });
});
