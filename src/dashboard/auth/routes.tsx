/** @jsxImportSource hono/jsx */
// Sign in (an API key, or a one-time sign-in link) and sign out (docs/dashboard.md#sign-in). Failed
// sign-ins are limited per IP.
import { type Context, Hono } from "hono";
import { endSession, signInWithLink, startSession } from "../../domain/sessions";
import { ApiError } from "../../errors";
import { sha256Hex } from "../../lib/crypto";
import { getDb } from "../../storage/db";
import { findKeyByPrefix } from "../../storage/keys";
import { findSignInLink } from "../../storage/sessions";
import { authenticate } from "../../surface/caller";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { clearSessionCookie, flash, protectChange, protectSignIn, setSessionCookie } from "../shared/session";
import { signInFailed, signInWait, tooMany } from "../shared/sign-in-limit";
import { bearerOf, LINK_TOKEN, NEXT_REFUSED, nextOf } from "./forms";
import { LinkPage, type LinkState, SignInPage } from "./pages";

/** The sign-in form sent: a session with the key's scopes, or the form again saying why not. */
async function signInWithKey(c: Context<DashboardEnv>) {
  const form = await formOf(c);
  const { path: next, refused } = nextOf(form.next);
  // Refused before anything is checked or started: no session, no cookie, and the form again with the default page.
  if (refused) return c.html(<SignInPage pre={c.get("preCsrf")} next={next} error={NEXT_REFUSED} session={null} />, 400);
  const wait = await signInWait(c);
  if (wait) return c.html(<SignInPage pre={c.get("preCsrf")} next={next} error={tooMany(wait)} session={null} />, 429);
  const caller = await authenticate(bearerOf(form), getDb(c.env.DB));
  if (!caller) {
    await signInFailed(c);
    return c.html(
      <SignInPage pre={c.get("preCsrf")} next={next} error="That API key is not valid (unknown, revoked or expired)." session={null} />,
      401,
    );
  }
  const keyRow = await findKeyByPrefix(getDb(c.env.DB), caller.keyPrefix);
  const { token, row } = await startSession(getDb(c.env.DB), {
    accountId: caller.accountId,
    keyId: caller.keyId,
    scopes: caller.scopes,
    keyExpiresAt: keyRow?.expiresAt ?? null,
  });
  setSessionCookie(c, token, row.expiresAt);
  return c.redirect(next, 303);
}

/** A sign-in link's page: a button that signs in (a GET never does: link previews and scanners fetch links). */
async function linkPage(c: Context<DashboardEnv>) {
  const token = c.req.param("token")!;
  const link = LINK_TOKEN.test(token) ? await findSignInLink(getDb(c.env.DB), await sha256Hex(token)) : undefined;
  const state: LinkState = !link ? "unknown" : link.usedAt ? "used" : Date.parse(link.expiresAt) <= Date.now() ? "expired" : "ready";
  return c.html(<LinkPage pre={c.get("preCsrf")} token={token} state={state} session={c.get("session")} />, state === "ready" ? 200 : 410);
}

export const authRoutes = new Hono<DashboardEnv>()
  .get("/sign-in", (c) => {
    const { path: next, refused } = nextOf(c.req.query("next"));
    if (c.get("session")) {
      if (refused)
        throw new ApiError("validation_failed", NEXT_REFUSED, { fields: [{ field: "next", message: "holds a control character" }] });
      return c.redirect(next, 303);
    }
    // Signed out: the form keeps only a path of this site (the default page in place of anything else).
    return c.html(
      <SignInPage pre={c.get("preCsrf")} next={next} error={refused ? NEXT_REFUSED : undefined} session={null} />,
      refused ? 400 : 200,
    );
  })
  .post("/sign-in", protectSignIn, signInWithKey)
  .get("/sign-in/link/:token", linkPage)
  .post("/sign-in/link/:token", protectSignIn, async (c) => {
    const wait = await signInWait(c);
    if (wait) {
      flash(c, "error", tooMany(wait));
      return c.redirect("/sign-in", 303);
    }
    const started = await signInWithLink(getDb(c.env.DB), c.req.param("token"));
    if (!started) {
      await signInFailed(c);
      return c.html(<LinkPage pre={c.get("preCsrf")} token={c.req.param("token")} state="used" session={null} />, 410);
    }
    setSessionCookie(c, started.token, started.row.expiresAt);
    return c.redirect("/submissions", 303);
  })
  .post("/sign-out", protectChange, async (c) => {
    await endSession(getDb(c.env.DB), c.get("session")!.row.id);
    clearSessionCookie(c);
    flash(c, "notice", "You are signed out.");
    return c.redirect("/sign-in", 303);
  });
