/** @jsxImportSource hono/jsx */
// The account page (docs/dashboard.md#account): plan, balances, the limits in force for each way of
// paying and the usage (what GET /api/v1/account returns), the credit ledger (paged), and the person's
// API keys — create (shown once), list (prefixes only), revoke.
import { type Context, Hono } from "hono";
import { limitsFor } from "../../admission/admission";
import { balancesOf } from "../../billing/prices";
import { accountGate } from "../../do/account-gate/client";
import { rateLimits } from "../../do/rate-window";
import { runnerHealth } from "../../domain/health";
import { issueKey } from "../../domain/keys";
import { ApiError, notFound } from "../../errors";
import { nowIso } from "../../lib/ids";
import { hasEveryScope } from "../../model/accounts";
import { cursor, openCursor, pageLinks } from "../../operations/paging";
import { getDb } from "../../storage/db";
import { listKeys, revokeKey } from "../../storage/keys";
import { pageLedger } from "../../storage/ledger";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { flash, protectChange, requireSession } from "../shared/session";
import { keyRequest } from "./forms";
import { AccountPage } from "./page";

/** Revoked keys stay listed this long. */
const REVOKED_SHOWN_MS = 30 * 86_400_000;

async function render(
  c: Context<DashboardEnv>,
  extra: { newKey?: { key: string; prefix: string }; errors?: Record<string, string> } = {},
  status: 200 | 201 | 400 = 200,
) {
  const session = c.get("session")!;
  const db = getDb(c.env.DB);
  const account = session.account;
  const parsedCursor = cursor.safeParse(c.req.query("cursor"));
  const [usage, page, keys, runner] = await Promise.all([
    accountGate(c.env, account.id).usage(`session:${session.row.id}`, rateLimits(c.env)),
    pageLedger(db, account.id, 20, await openCursor(c.env, account.id, parsedCursor.success ? parsedCursor.data : undefined)),
    listKeys(db, account.id),
    runnerHealth(c.env),
  ]);
  const links = await pageLinks(c.env, account.id, c.req.url, page);
  return c.html(
    <AccountPage
      session={session}
      balances={balancesOf(account)}
      plan={limitsFor(c.env, account, "plan")}
      credits={limitsFor(c.env, account, "credits")}
      usage={usage}
      ledger={page.rows}
      {...links}
      keys={keys.filter((k) => !k.revokedAt || Date.parse(k.revokedAt) > Date.now() - REVOKED_SHOWN_MS)}
      allKeys={keys}
      newKey={extra.newKey}
      errors={extra.errors ?? {}}
      runner={runner}
    />,
    status,
  );
}

export const accountRoutes = new Hono<DashboardEnv>()
  .use("/account", requireSession)
  .use("/account/*", requireSession)
  .get("/account", (c) => render(c))
  .post("/account/keys", protectChange, async (c) => {
    const session = c.get("session")!;
    const request = await keyRequest(c, session, await formOf(c));
    if ("errors" in request) return render(c, { errors: request.errors }, 400);
    // Made from the key the session was signed in with (none after a sign-in link): revoked with it.
    const issued = await issueKey(getDb(c.env.DB), {
      accountId: session.account.id,
      name: request.name,
      scopes: request.scopes,
      expiresAt: request.expiresAt,
      parentKeyId: session.row.keyId,
    });
    if (!issued) throw new ApiError("unauthorized", "Your session has ended; sign in again.");
    return render(c, { newKey: { key: issued.key, prefix: issued.prefix } }, 201);
  })
  .post("/account/keys/:prefix/revoke", protectChange, async (c) => {
    const session = c.get("session")!;
    if (!hasEveryScope(session.row.scopes))
      throw new ApiError(
        "scope_required",
        "Revoking keys needs a session with every scope (signed in with a link, or a key that has every scope).",
        { required_scope: "all" },
      );
    const db = getDb(c.env.DB);
    const prefix = c.req.param("prefix");
    const own = (await listKeys(db, session.account.id)).find((k) => k.prefix === prefix);
    if (!own) throw notFound("key");
    const revoked = await revokeKey(db, prefix, nowIso());
    const dependents = revoked?.dependents ?? [];
    flash(
      c,
      "notice",
      dependents.length
        ? `Key ${prefix} revoked, and with it the ${dependents.length === 1 ? "key" : `${dependents.length} keys`} made from it: ${dependents.join(", ")}.`
        : `Key ${prefix} revoked.`,
    );
    return c.redirect("/account", 303);
  });
