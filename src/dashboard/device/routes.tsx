/** @jsxImportSource hono/jsx */
// The device-login approval (docs/dashboard.md#device-login): a signed-in person types the code a
// command-line client shows, then approves (the new key's name and scopes) or denies. A code that matches
// no pending request counts as a failed sign-in of the IP.
import { Hono } from "hono";
import { decideAuthorization, normalizeUserCode, pendingAuthorization } from "../../domain/device-auth";
import { getDb } from "../../storage/db";
import type { DeviceCodeRow } from "../../storage/sessions";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { flash, protectChange, requireSession } from "../shared/session";
import { signInFailed, signInWait, tooMany } from "../shared/sign-in-limit";
import { approvalProblem, decisionOf } from "./forms";
import { DevicePage, type Pending } from "./page";

const pendingOf = (row: DeviceCodeRow): Pending => ({
  id: row.id,
  userCode: row.userCode,
  clientInfo: row.clientInfo,
  expiresAt: row.expiresAt,
});

const NO_LONGER = "This request is no longer pending (expired or decided).";

export const deviceRoutes = new Hono<DashboardEnv>()
  .get("/device", requireSession, (c) => c.html(<DevicePage session={c.get("session")!} code={c.req.query("user_code") ?? ""} />))
  .post("/device", requireSession, protectChange, async (c) => {
    const session = c.get("session")!;
    const typed = (await formOf(c)).user_code ?? "";
    const wait = await signInWait(c);
    if (wait) return c.html(<DevicePage session={session} code={typed} error={tooMany(wait)} />, 429);
    const code = normalizeUserCode(typed);
    const pending = code ? await pendingAuthorization(getDb(c.env.DB), code) : undefined;
    if (!pending) {
      await signInFailed(c);
      const error = "No pending request has this code (it may have expired after 15 minutes, or been decided already).";
      return c.html(<DevicePage session={session} code={typed} error={error} />, 404);
    }
    return c.html(<DevicePage session={session} pending={pendingOf(pending)} />);
  })
  .post("/device/decide", requireSession, protectChange, async (c) => {
    const session = c.get("session")!;
    const d = await decisionOf(c);
    const pending = await pendingAuthorization(getDb(c.env.DB), normalizeUserCode(d.userCode) ?? "");
    if (!pending || pending.id !== d.id) return c.html(<DevicePage session={session} error={NO_LONGER} />, 409);
    const problem = d.approve ? approvalProblem(session, d) : null;
    if (problem) return c.html(<DevicePage session={session} error={problem} pending={pendingOf(pending)} />, 400);
    // The device's key is made from the key this session was signed in with (none after a sign-in link): revoked with it.
    const decision = d.approve
      ? { approve: true as const, keyName: d.keyName, scopes: d.scopes, parentKeyId: session.row.keyId }
      : { approve: false as const };
    if (!(await decideAuthorization(getDb(c.env.DB), d.id, session.account.id, decision)))
      return c.html(<DevicePage session={session} error={NO_LONGER} />, 409);
    const notice = d.approve
      ? "Approved: the client receives its key at its next poll. You can revoke it on the Account page."
      : "Denied: the client gets no key.";
    flash(c, "notice", notice);
    return c.redirect(d.approve ? "/account" : "/device", 303);
  });
