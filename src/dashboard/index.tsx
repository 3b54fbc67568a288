/** @jsxImportSource hono/jsx */
// The dashboard, the server side of the website: every page under `/` of the same Worker (the API stays
// under /api/v1), one folder per area (auth, device, submissions, results, webhooks, account), each with
// its routes, its pages and its forms; what they share is in shared/. Server-rendered Hono JSX; the
// assets under /assets are files of the Worker's static assets (built by scripts/build-web.mjs from
// web/browser), so nothing comes from another host (docs/architecture.md#dashboard).
import { type Context, Hono } from "hono";
import { contextStorage } from "hono/context-storage";
import { ApiError, translate } from "../errors";
import { requestId } from "../surface/request-id";
import { accountRoutes } from "./account/routes";
import { authRoutes } from "./auth/routes";
import { deviceRoutes } from "./device/routes";
import { resultRoutes, sharedRoutes } from "./results/routes";
import type { DashboardEnv } from "./shared/context";
import { ErrorPage } from "./shared/layout";
import { loadSession, SESSION_COOKIE } from "./shared/session";
import { submissionRoutes } from "./submissions/routes";
import { sweepRoutes } from "./submissions/sweeps/routes";
import { webhookRoutes } from "./webhooks/routes";

/**
 * An error page never starts a session: a session cookie a handler set before it failed is taken off
 * the response (its clearing, at sign-out or for a dead session, stays).
 */
function dropNewSession(c: Context<DashboardEnv>) {
  const cookies = c.res.headers.getSetCookie();
  const kept = cookies.filter((line) => !line.startsWith(`${SESSION_COOKIE}=`) || line.startsWith(`${SESSION_COOKIE}=;`));
  if (kept.length === cookies.length) return;
  c.res.headers.delete("Set-Cookie");
  for (const line of kept) c.res.headers.append("Set-Cookie", line);
}

/** An error as a page: the words and the request id, never a stack trace (an unexpected error is logged). */
export function errorPage(err: Error, c: Context<DashboardEnv>) {
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
  dropNewSession(c);
  return c.html(
    <ErrorPage status={apiError.status} message={message} requestId={requestId} session={c.get("session") ?? null} />,
    apiError.status,
  );
}

export const notFoundPage = (c: Context<DashboardEnv>) => errorPage(new ApiError("not_found", "No such page."), c);

/** The dashboard as its own Hono app; src/app.ts hands it every path outside the machine interfaces. */
export function newDashboard() {
  const web = new Hono<DashboardEnv>({ strict: false });
  web.onError(errorPage);
  // contextStorage: the page shell reads the request's flash message (layout.tsx) without every page passing it.
  web.use("*", contextStorage(), requestId, loadSession);
  web.get("/", (c) => c.redirect(c.get("session") ? "/submissions" : "/sign-in", 303));
  web.route("/", authRoutes);
  web.route("/", deviceRoutes);
  web.route("/", submissionRoutes);
  web.route("/", sweepRoutes);
  web.route("/", resultRoutes);
  web.route("/", sharedRoutes);
  web.route("/", webhookRoutes);
  web.route("/", accountRoutes);
  web.notFound(notFoundPage);
  return web;
}
