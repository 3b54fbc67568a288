/** @jsxImportSource hono/jsx */
// Sign in (an API key, or a one-time sign-in link), sign out, and the device-login approval page
// (docs/dashboard.md#sign-in, #device-login). Failed sign-ins are limited per IP.
import { type Context, Hono } from "hono";
import { ipWindow } from "../admission/account-gate";
import { decideAuthorization, formatUserCode, normalizeUserCode, pendingAuthorization } from "../domain/device-auth";
import type { Session } from "../domain/sessions";
import { endSession, signInWithLink, startSession } from "../domain/sessions";
import { sha256Hex } from "../lib/crypto";
import { hasEveryScope, isScope, SCOPES } from "../model/accounts";
import { getDb } from "../storage/db";
import { findKeyByPrefix } from "../storage/keys";
import { findSignInLink } from "../storage/sessions";
import { authenticate, clientIp } from "../surface/caller";
import type { WebEnv } from "./context";
import { Csrf, Layout } from "./layout";
import { clearSessionCookie, flash, protectChange, protectSignIn, requireSession, setSessionCookie } from "./session";

/** Only a path of this site is a place to go back to after sign-in. */
const safeNext = (next: unknown) => (typeof next === "string" && /^\/(?![/\\])/.test(next) ? next : "/submissions");

const field = async (c: Context<WebEnv>, name: string) => {
  const v = [(await c.req.parseBody({ all: true }))[name]].flat().at(-1);
  return typeof v === "string" ? v : "";
};

function SignInPage(p: { pre: string; next: string; error?: string; status?: number; session: Session | null }) {
  return (
    <Layout title="Sign in" session={p.session}>
      <section class="narrow">
        <h1>Sign in to Allele</h1>
        {p.error && (
          <p class="flash error" role="alert" id="signin-error">
            {p.error}
          </p>
        )}
        <form method="post" action="/sign-in" class="stack">
          <input type="hidden" name="_csrf" value={p.pre} />
          <input type="hidden" name="next" value={p.next} />
          <label for="api_key">API key</label>
          <input
            id="api_key"
            name="api_key"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            placeholder="alk_…"
            aria-describedby={p.error ? "signin-error key-hint" : "key-hint"}
          />
          <p class="hint" id="key-hint">
            The session gets this key's scopes and ends when the key is revoked. An operator can also send you a one-time sign-in link (
            <code>npm run admin -- login-link --account &lt;id&gt;</code>).
          </p>
          <button type="submit">Sign in</button>
        </form>
      </section>
    </Layout>
  );
}

async function signInWait(c: Context<WebEnv>): Promise<number> {
  return ipWindow(c.env, clientIp(c)).signInWait();
}
const signInFailed = (c: Context<WebEnv>) => ipWindow(c.env, clientIp(c)).signInFailed();
const tooMany = (wait: number) =>
  `Too many failed sign-ins from your address; try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? "s" : ""}.`;

function LinkPage(p: { pre: string; token: string; state: "ready" | "used" | "expired" | "unknown"; session: Session | null }) {
  return (
    <Layout title="Sign in" session={p.session}>
      <section class="narrow">
        <h1>Sign in with a link</h1>
        {p.state === "ready" ? (
          <form method="post" action={`/sign-in/link/${p.token}`} class="stack">
            <input type="hidden" name="_csrf" value={p.pre} />
            <p>This one-time link signs you in to your Allele account. It works once.</p>
            <button type="submit">Sign in</button>
          </form>
        ) : (
          <p class="flash error" role="alert">
            {p.state === "used"
              ? "This sign-in link was already used."
              : p.state === "expired"
                ? "This sign-in link has expired."
                : "This sign-in link is not valid."}{" "}
            Ask for a new one, or <a href="/sign-in">sign in with an API key</a>.
          </p>
        )}
      </section>
    </Layout>
  );
}

function DevicePage(p: {
  session: Session;
  code?: string;
  error?: string;
  pending?: { id: string; userCode: string; clientInfo: string; expiresAt: string };
}) {
  const everything = hasEveryScope(p.session.row.scopes);
  return (
    <Layout title="Authorize a device" session={p.session} section="device">
      <section class="narrow">
        <h1>Authorize a command-line client</h1>
        {p.error && (
          <p class="flash error" role="alert" id="device-error">
            {p.error}
          </p>
        )}
        {!p.pending ? (
          <form method="post" action="/device" class="stack">
            <Csrf session={p.session} />
            <label for="user_code">Code shown by the client</label>
            <input
              id="user_code"
              name="user_code"
              value={p.code ?? ""}
              required
              autocomplete="off"
              autocapitalize="characters"
              spellcheck={false}
              placeholder="XXXX-XXXX"
              aria-describedby={p.error ? "device-error" : undefined}
            />
            <button type="submit">Continue</button>
          </form>
        ) : (
          <form method="post" action="/device/decide" class="stack">
            <Csrf session={p.session} />
            <input type="hidden" name="id" value={p.pending.id} />
            <input type="hidden" name="user_code" value={p.pending.userCode} />
            <p>
              A client asks for an API key of your account. Check that it shows the code{" "}
              <strong class="code-big">{formatUserCode(p.pending.userCode)}</strong>.
            </p>
            {p.pending.clientInfo && (
              <p class="muted">
                Client: <code>{p.pending.clientInfo}</code>
              </p>
            )}
            <label for="key_name">Name of the new key</label>
            <input id="key_name" name="key_name" value="vilvik login" maxlength={100} required />
            <fieldset>
              <legend>Scopes of the new key</legend>
              {SCOPES.map((s) => {
                const allowed = p.session.row.scopes.includes(s);
                return (
                  <label class="check">
                    <input type="checkbox" name="scopes" value={s} checked={allowed} disabled={!allowed} /> {s}
                  </label>
                );
              })}
              {!everything && <p class="hint">Your session can only grant the scopes of the key you signed in with.</p>}
            </fieldset>
            <div class="row">
              <button type="submit" name="decision" value="approve">
                Approve
              </button>
              <button type="submit" name="decision" value="deny" class="danger">
                Deny
              </button>
            </div>
          </form>
        )}
      </section>
    </Layout>
  );
}

export const authRoutes = new Hono<WebEnv>()
  .get("/sign-in", (c) => {
    if (c.get("session")) return c.redirect(safeNext(c.req.query("next")), 303);
    return c.html(<SignInPage pre={c.get("preCsrf")} next={safeNext(c.req.query("next"))} session={null} />);
  })
  .post("/sign-in", protectSignIn, async (c) => {
    const next = safeNext(await field(c, "next"));
    const wait = await signInWait(c);
    if (wait) return c.html(<SignInPage pre={c.get("preCsrf")} next={next} error={tooMany(wait)} session={null} />, 429);
    const caller = await authenticate(`Bearer ${(await field(c, "api_key")).trim()}`, getDb(c.env.DB));
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
  })
  .get("/sign-in/link/:token", async (c) => {
    const token = c.req.param("token");
    const link = /^[0-9A-Za-z]{40}$/.test(token) ? await findSignInLink(getDb(c.env.DB), await sha256Hex(token)) : undefined;
    const state = !link ? "unknown" : link.usedAt ? "used" : Date.parse(link.expiresAt) <= Date.now() ? "expired" : "ready";
    // A GET never signs in (link previews and scanners fetch links); the button posts.
    return c.html(
      <LinkPage pre={c.get("preCsrf")} token={token} state={state} session={c.get("session")} />,
      state === "ready" ? 200 : 410,
    );
  })
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
  })
  .get("/device", requireSession, (c) => c.html(<DevicePage session={c.get("session")!} code={c.req.query("user_code") ?? ""} />))
  .post("/device", requireSession, protectChange, async (c) => {
    const session = c.get("session")!;
    const typed = await field(c, "user_code");
    const wait = await signInWait(c);
    if (wait) return c.html(<DevicePage session={session} code={typed} error={tooMany(wait)} />, 429);
    const code = normalizeUserCode(typed);
    const pending = code ? await pendingAuthorization(getDb(c.env.DB), code) : undefined;
    if (!pending) {
      await signInFailed(c);
      return c.html(
        <DevicePage
          session={session}
          code={typed}
          error="No pending request has this code (it may have expired after 15 minutes, or been decided already)."
        />,
        404,
      );
    }
    return c.html(
      <DevicePage
        session={session}
        pending={{ id: pending.id, userCode: pending.userCode, clientInfo: pending.clientInfo, expiresAt: pending.expiresAt }}
      />,
    );
  })
  .post("/device/decide", requireSession, protectChange, async (c) => {
    const session = c.get("session")!;
    const body = await c.req.parseBody({ all: true });
    const id = typeof body.id === "string" ? body.id : "";
    const approve = body.decision === "approve";
    const asked = [body.scopes ?? []].flat().filter((s): s is string => typeof s === "string");
    const scopes = asked.filter(isScope);
    const keyName = typeof body.key_name === "string" ? body.key_name.trim().slice(0, 100) : "";
    const userCode = typeof body.user_code === "string" ? body.user_code : "";
    const pending = await pendingAuthorization(getDb(c.env.DB), normalizeUserCode(userCode) ?? "");
    const retry = (error: string) =>
      c.html(
        <DevicePage
          session={session}
          error={error}
          pending={pending && { id: pending.id, userCode: pending.userCode, clientInfo: pending.clientInfo, expiresAt: pending.expiresAt }}
        />,
        400,
      );
    if (!pending || pending.id !== id)
      return c.html(<DevicePage session={session} error="This request is no longer pending (expired or decided)." />, 409);
    if (approve) {
      if (!keyName) return retry("Give the new key a name.");
      if (!asked.length) return retry("Choose at least one scope.");
      if (asked.some((s) => !isScope(s) || !session.row.scopes.includes(s))) return retry("Your session cannot grant one of those scopes.");
      // The device's key never expires; a session of an expiring key must not outlive it through one.
      if (session.keyExpiresAt)
        return retry(
          "You signed in with a key that expires, and a device login's key never does: sign in with a key without expiry or a sign-in link to approve it.",
        );
    }
    const decided = await decideAuthorization(
      getDb(c.env.DB),
      id,
      session.account.id,
      approve ? { approve: true, keyName, scopes } : { approve: false },
    );
    if (!decided) return c.html(<DevicePage session={session} error="This request is no longer pending (expired or decided)." />, 409);
    flash(
      c,
      "notice",
      approve
        ? "Approved: the client receives its key at its next poll. You can revoke it on the Account page."
        : "Denied: the client gets no key.",
    );
    return c.redirect(approve ? "/account" : "/device", 303);
  });
