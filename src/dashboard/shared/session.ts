// Sessions, CSRF and flash messages of the dashboard (docs/dashboard.md#sessions).
//
// - The session cookie holds a random token (D1 keeps its SHA-256): HttpOnly, Secure, SameSite=Lax,
//   `__Host-` (this origin only, path /), expiring with the session.
// - Every state change is a POST that must carry the session's CSRF token (`_csrf` form field or
//   `X-CSRF-Token` header; synchronizer-token pattern) and, when the browser sends one, an Origin equal
//   to this origin. Forms shown before sign-in use a double-submit cookie instead.
// - A signed-in person is a `caller` like an API key: their account, and the scopes of the key they
//   signed in with (every scope after a sign-in link).
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { accountGate } from "../../do/account-gate/client";
import { rateLimits } from "../../do/rate-window";
import { resumeSession, SESSION_MAX_MS } from "../../domain/sessions";
import { ApiError } from "../../errors";
import { constantTimeEqual } from "../../lib/crypto";
import { SAME_ORIGIN_CSP } from "../../lib/csp";
import { randomBase62 } from "../../lib/ids";
import { getDb } from "../../storage/db";
import type { DashboardEnv, Flash } from "./context";
import { formOf } from "./form";

export const SESSION_COOKIE = "__Host-allele_session";
const PRE_CSRF_COOKIE = "__Host-allele_pre_csrf";
const FLASH_COOKIE = "__Host-allele_flash";
const COOKIE = { path: "/", secure: true, httpOnly: true, sameSite: "Lax" } as const;

export function setSessionCookie(c: Context<DashboardEnv>, token: string, expiresAt: string) {
  // The cookie outlives idle expiry on the client side only up to the session's hard limit; the server decides.
  setCookie(c, SESSION_COOKIE, token, {
    ...COOKIE,
    maxAge: Math.floor(SESSION_MAX_MS / 1000),
    expires: new Date(Math.max(Date.parse(expiresAt), Date.now() + SESSION_MAX_MS)),
  });
}

export const clearSessionCookie = (c: Context<DashboardEnv>) => deleteCookie(c, SESSION_COOKIE, COOKIE);

/** Leaves a message for the next page (after a redirect). */
export function flash(c: Context<DashboardEnv>, kind: Flash["kind"], text: string) {
  setCookie(c, FLASH_COOKIE, JSON.stringify({ kind, text: text.slice(0, 600) }), { ...COOKIE, maxAge: 60 });
}

/**
 * Every dashboard response: not cached; the same-origin policy of every page (src/lib/csp.ts); never
 * framed by another site (one-click actions); no Referer leaving the site (a sign-in link's token is in
 * its path).
 */
const PAGE_HEADERS = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": SAME_ORIGIN_CSP,
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "same-origin",
  "X-Content-Type-Options": "nosniff",
};

const isFlash = (v: unknown): v is Flash =>
  typeof v === "object" &&
  v !== null &&
  "kind" in v &&
  (v.kind === "notice" || v.kind === "error") &&
  "text" in v &&
  typeof v.text === "string";

/** Reads the session cookie, the flash message and the pre-sign-in CSRF cookie of every dashboard request. */
export const loadSession = createMiddleware<DashboardEnv>(async (c, next) => {
  const token = getCookie(c, SESSION_COOKIE);
  const session = token ? await resumeSession(getDb(c.env.DB), token) : null;
  c.set("session", session);
  if (session) {
    c.set("caller", {
      accountId: session.account.id,
      keyId: session.row.keyId ?? "",
      keyPrefix: `session:${session.row.id}`,
      scopes: session.row.scopes,
      account: session.account,
      touch: false,
    });
  } else if (token) {
    clearSessionCookie(c);
  }
  const raw = getCookie(c, FLASH_COOKIE);
  let message: Flash | null = null;
  if (raw) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isFlash(parsed)) message = parsed;
    } catch {
      // a cookie we did not write
    }
    deleteCookie(c, FLASH_COOKIE, COOKIE);
  }
  c.set("flash", message);
  let pre = getCookie(c, PRE_CSRF_COOKIE);
  if (!pre || !/^[0-9A-Za-z]{32}$/.test(pre)) {
    pre = randomBase62(32);
    setCookie(c, PRE_CSRF_COOKIE, pre, { ...COOKIE, maxAge: 3600 });
  }
  c.set("preCsrf", pre);
  await next();
  // On the response whatever made it: c.header() before next() reaches only responses built by the
  // context (pages, redirects), not a Response a handler returns itself (a file download).
  for (const [name, value] of Object.entries(PAGE_HEADERS)) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
});

/** Pages that need a signed-in person: others are sent to the sign-in page (and back afterwards). */
export const requireSession = createMiddleware<DashboardEnv>(async (c, next) => {
  if (!c.get("session")) {
    const url = new URL(c.req.url);
    if (c.req.method !== "GET") throw new ApiError("unauthorized", "Your session has ended; sign in again.");
    return c.redirect(`/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
  }
  await next();
});

/** A cross-site request's Origin (or, without one, its Sec-Fetch-Site) refused before anything else. */
function sameOrigin(c: Context<DashboardEnv>): boolean {
  const origin = c.req.header("Origin");
  if (origin) return origin === new URL(c.req.url).origin;
  const site = c.req.header("Sec-Fetch-Site");
  return !site || site === "same-origin" || site === "none";
}

async function presentedToken(c: Context<DashboardEnv>): Promise<string> {
  const header = c.req.header("X-CSRF-Token");
  if (header) return header;
  // The one form reader (form.ts): a body that is not a readable form is a 400 here, before anything else.
  return (await formOf(c))._csrf ?? "";
}

const csrfRefused = () =>
  new ApiError("validation_failed", "This form has expired or did not come from this site; reload the page and try again.", {
    fields: [{ field: "_csrf", message: "is missing or wrong" }],
  });

/**
 * Every state change of a signed-in person: same origin, the session's CSRF token, and the per-minute
 * windows an API key's requests count against (this session's, 60, and the account's, 120).
 */
export const protectChange = createMiddleware<DashboardEnv>(async (c, next) => {
  await checkChange(c, await presentedToken(c));
  await next();
});

/**
 * What `protectChange` checks, for a change whose body it must not read first (a data file's upload,
 * streamed: its `_csrf` field is read from the stream, before the file): same origin, `presented` is the
 * session's CSRF token, and the per-minute windows.
 */
export async function checkChange(c: Context<DashboardEnv>, presented: string): Promise<void> {
  const session = c.get("session");
  if (!session) throw new ApiError("unauthorized", "Your session has ended; sign in again.");
  if (!sameOrigin(c) || !constantTimeEqual(presented, session.row.csrfToken)) throw csrfRefused();
  const decision = await accountGate(c.env, session.account.id).rate(`session:${session.row.id}`, rateLimits(c.env));
  if (!decision.allowed) {
    throw new ApiError(
      "rate_limited",
      `Too many actions in the last minute; try again in ${decision.retryAfter} s.`,
      { retry_after: decision.retryAfter, bucket: decision.bucket },
      { "Retry-After": String(decision.retryAfter) },
    );
  }
}

/** The forms shown before sign-in: same origin and the double-submit token. */
export const protectSignIn = createMiddleware<DashboardEnv>(async (c, next) => {
  if (!sameOrigin(c) || !constantTimeEqual(await presentedToken(c), c.get("preCsrf"))) throw csrfRefused();
  await next();
});
