// newApp(): the Hono app — middleware order, routes, error handling. Used by index.ts and the tests.

import { Hono } from "hono";
import { newDashboard } from "./dashboard/index";
import { readiness } from "./domain/health";
import type { AppEnv } from "./http/context";
import { onError, onNotFound } from "./http/error-handler";
import { countedBy, identifyAndLimit, requireKey } from "./http/middleware/auth";
import { methodGuard } from "./http/middleware/methods";
import { noStore } from "./http/middleware/no-store";
import { describe } from "./http/openapi/describe";
import { documentOf } from "./http/openapi/document";
import { accountRoutes } from "./http/routes/account";
import { adminAuth, adminRoutes } from "./http/routes/admin";
import { benchRoutes } from "./http/routes/bench";
import { codeUploadsRoutes } from "./http/routes/code-uploads";
import { dataFilesRoutes } from "./http/routes/data-files";
import { deviceAuthRoutes } from "./http/routes/device-auth";
import { docsRoutes } from "./http/routes/docs";
import { importsRoutes } from "./http/routes/imports";
import { internalRunsRoutes } from "./http/routes/internal-runs";
import { resultsRoutes } from "./http/routes/results";
import { submissionsRoutes } from "./http/routes/submissions";
import { sweepsRoutes } from "./http/routes/sweeps";
import { webhooksRoutes } from "./http/routes/webhooks";
import { EnvironmentBody, Health, OpenApiDocument, SubmissionTypesBody } from "./http/validation/responses";
import { ENVIRONMENT } from "./model/environment";
import { submissionTypes } from "./operations/submissions";
import { requestId } from "./surface/request-id";

/** Paths of the machine interfaces (JSON errors); everything else is the dashboard (HTML pages). */
const MACHINE_PATHS = /^\/(api|admin|internal|__bench|__scheduled)(\/|$)/;

export function newApp() {
  const app = new Hono<AppEnv>({ strict: false });
  app.use("*", requestId);
  // Nothing an API or admin request answers is stored by a cache (docs/api.md#caching).
  app.use("/api/*", noStore);
  app.use("/admin/*", noStore);
  app.onError(onError);
  // Only the machine paths get here: every other path is the dashboard's, with its own 404 page (below).
  app.notFound(onNotFound);
  // How each route's per-minute count is taken, where it is not up front (docs/decisions.md#write-rate-count):
  // the admitted writes count in their admission call, GET /account gets its usage from its count.
  app.on(
    "POST",
    ["/api/v1/submissions", "/api/v1/submissions/:id/reexecute", "/api/v1/results/:id/continue", "/api/v1/sweeps"],
    countedBy("admission"),
  );
  app.on("GET", "/api/v1/account", countedBy("usage"));
  // The per-minute gate comes first for every API request, whatever happens to it next.
  app.use("/api/*", identifyAndLimit);

  // 405 for a method a path does not answer, before authentication: a wrong method reveals nothing. The
  // methods each path answers are read from the routes below once they are all registered.
  const methods = methodGuard("/api/v1/");
  app.use("/api/*", methods.middleware);
  app.get(
    "/api/v1/health",
    describe({
      operationId: "getHealth",
      tag: "Health",
      summary: "Readiness: the database, the files bucket and the GA worker",
      noKey: true,
      success: { 200: Health, 503: Health },
    }),
    async (c) => {
      const { ready, checks } = await readiness(c.env);
      const failing = Object.entries(checks)
        .filter(([, check]) => check.status === "down")
        .map(([part]) => part);
      return c.json(ready ? { status: "ok", checks } : { status: "unavailable", failing, checks }, ready ? 200 : 503);
    },
  );
  // What a run's code can import (docs/environment.md): the GA worker's environment, from the copy its own
  // code wrote (src/model/environment.json). No key, counted per IP like every request without one.
  app.get(
    "/api/v1/environment",
    describe({
      operationId: "getEnvironment",
      tag: "Environment",
      summary: "The libraries a fitness function can import: Python, each package and its version, threads, memory, data files",
      noKey: true,
      success: { 200: EnvironmentBody },
    }),
    (c) => c.json(ENVIRONMENT),
  );
  // The submission types (docs/api.md#quick-submission-types): each with its inputs as JSON Schema, made
  // from the zod schemas creation validates with. No key, as the environment.
  app.get(
    "/api/v1/submission-types",
    describe({
      operationId: "listSubmissionTypes",
      tag: "Submissions",
      summary: "The submission types: `new` and each quick type, with its inputs (JSON Schema), GA defaults and a description",
      noKey: true,
      success: { 200: SubmissionTypesBody },
    }),
    (c) => c.json(submissionTypes()),
  );
  // The OpenAPI documents, generated from these routes (src/http/openapi/; docs/architecture.md#openapi).
  app.get(
    "/api/v1/openapi.json",
    describe({
      operationId: "getOpenApiDocument",
      tag: "Documents",
      summary: "This API's OpenAPI 3.1 document (also docs/openapi.json)",
      noKey: true,
      success: { 200: OpenApiDocument },
    }),
    async (c) => c.json(await documentOf(app, "public")),
  );
  app.get(
    "/admin/v1/openapi.json",
    adminAuth,
    describe({
      operationId: "getAdminOpenApiDocument",
      tag: "Documents",
      summary: "The admin API's OpenAPI 3.1 document (also docs/openapi.admin.json)",
      success: { 200: OpenApiDocument },
    }),
    async (c) => c.json(await documentOf(app, "admin")),
  );
  app.route("/docs", docsRoutes);
  // No key: how a command-line client gets one (RFC 8628). Counted per IP like every request without a key.
  app.route("/api/v1/auth/device", deviceAuthRoutes);
  app.route("/internal/v1/runs", internalRunsRoutes);
  app.route("/admin/v1", adminRoutes);
  app.route("/__bench", benchRoutes);

  const api = new Hono<AppEnv>({ strict: false });
  api.use("*", requireKey);
  api.route("/account", accountRoutes);
  api.route("/submissions", submissionsRoutes);
  api.route("/sweeps", sweepsRoutes);
  api.route("/results", resultsRoutes);
  api.route("/webhooks", webhooksRoutes);
  api.route("/code-uploads", codeUploadsRoutes);
  api.route("/data-files", dataFilesRoutes);
  api.route("/imports", importsRoutes);
  app.route("/api/v1", api);

  // The dashboard, on the same origin (docs/dashboard.md); its own error pages.
  const web = newDashboard();
  app.use("*", async (c, next) => {
    if (MACHINE_PATHS.test(c.req.path)) return next();
    // The page shows (and logs) the same request id as the response header.
    const headers = new Headers(c.req.raw.headers);
    headers.set("X-Request-Id", c.get("requestId"));
    return web.fetch(new Request(c.req.raw, { headers }), c.env, c.executionCtx);
  });

  methods.learn(app.routes);
  return app;
}
