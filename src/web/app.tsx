/** @jsxImportSource hono/jsx */
// The dashboard: every page under `/` of the same Worker (the API stays under /api/v1). Server-rendered
// Hono JSX; the assets under /assets are files of the Worker's static assets (built by
// scripts/build-web.mjs from web/client), so nothing comes from another host (docs/architecture.md#dashboard).
import { type Context, Hono } from "hono";
import { contextStorage } from "hono/context-storage";
import { ApiError, translate } from "../errors";
import { requestId } from "../surface/request-id";
import { accountRoutes } from "./account";
import { authRoutes } from "./auth";
import type { WebEnv } from "./context";
import { ErrorPage } from "./layout";
import { resultRoutes, sharedRoutes } from "./results";
import { loadSession } from "./session";
import { submissionRoutes } from "./submissions";
import { webhookRoutes } from "./webhooks";

/** An error as a page: the words and the request id, never a stack trace (an unexpected error is logged). */
export function errorPage(err: Error, c: Context<WebEnv>) {
  const apiError = translate(err);
  const requestId = c.get("requestId") ?? "";
  if (apiError.code === "internal_error") console.error("unhandled error", requestId, err);
  const message =
    apiError.code === "not_found"
      ? "There is no such page, or it belongs to another account."
      : apiError.code === "internal_error"
        ? "An unexpected error occurred. Nothing you did caused it; try again in a moment."
        : apiError.message;
  c.header("X-Request-Id", requestId);
  for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
  return c.html(
    <ErrorPage status={apiError.status} message={message} requestId={requestId} session={c.get("session") ?? null} />,
    apiError.status,
  );
}

export const notFoundPage = (c: Context<WebEnv>) => errorPage(new ApiError("not_found", "No such page."), c);

export function newWebApp() {
  const web = new Hono<WebEnv>({ strict: false });
  web.onError(errorPage);
  // contextStorage: the page shell reads the request's flash message (layout.tsx) without every page passing it.
  web.use("*", contextStorage(), requestId, loadSession);
  web.get("/", (c) => c.redirect(c.get("session") ? "/submissions" : "/sign-in", 303));
  web.route("/", authRoutes);
  web.route("/", submissionRoutes);
  web.route("/", resultRoutes);
  web.route("/", sharedRoutes);
  web.route("/", webhookRoutes);
  web.route("/", accountRoutes);
  web.notFound(notFoundPage);
  return web;
}
