/** @jsxImportSource hono/jsx */
// The account page (docs/dashboard.md#account): plan, balances, the limits in force for each way of
// paying and the usage (what GET /api/v1/account returns), the credit ledger (paged), and the person's
// API keys — create (shown once), list (prefixes only), revoke.

import { type Context, Hono } from "hono";
import { z } from "zod";
import { accountGate } from "../admission/account-gate";
import { limitsFor } from "../admission/admission";
import type { Limits } from "../admission/limits";
import { balancesOf } from "../billing/prices";
import type { Usage } from "../do/account-gate";
import { rateLimits } from "../do/rate-window";
import { issueKey } from "../domain/keys";
import type { Session } from "../domain/sessions";
import { ApiError, notFound } from "../errors";
import { nowIso } from "../lib/ids";
import { hasEveryScope, SCOPES } from "../model/accounts";
import { fieldErrors, text } from "../model/fields";
import { cursor, openCursor, pageLinks } from "../operations/paging";
import { getDb } from "../storage/db";
import { type ApiKeyRow, listKeys, revokeKey } from "../storage/keys";
import { type LedgerRow, pageLedger } from "../storage/ledger";
import { formOf } from "./actions";
import type { WebEnv } from "./context";
import { ActionButton, Csrf, Facts, Layout, money, Pager, Time } from "./layout";
import { flash, protectChange, requireSession } from "./session";

const LIMIT_LABELS: [keyof Limits, string][] = [
  ["concurrent_submissions", "Concurrent submissions"],
  ["inflight_api_runs", "In-flight API runs"],
  ["daily_quota", "Submissions per 24 hours"],
  ["max_num_generations", "Generations per run"],
  ["max_num_genes", "Genes per run"],
  ["max_parallel_workers", "Parallel fitness workers per run"],
  ["run_time_seconds", "Run time (s)"],
  ["run_memory_mb", "Run memory (MB)"],
  ["negative_balance_cap", "Balance may go below zero by"],
];

const keySchema = z.strictObject({
  name: text(100).pipe(z.string().trim().min(1, "is required")),
  scopes: z.array(z.enum(SCOPES)).min(1, "choose at least one scope"),
  expires_at: z.iso.date().optional(),
});

function AccountPage(p: {
  session: Session;
  balances: ReturnType<typeof balancesOf>;
  plan: Limits;
  credits: Limits;
  usage: Usage;
  ledger: LedgerRow[];
  next: string | null;
  previous: string | null;
  keys: ApiKeyRow[];
  newKey?: { key: string; prefix: string };
  errors: Record<string, string>;
}) {
  const full = hasEveryScope(p.session.row.scopes);
  return (
    <Layout title="Account" session={p.session} section="account">
      <h1>Account</h1>
      <Facts
        items={[
          ["Email", p.session.account.email],
          ["Plan", p.session.account.plan],
          ["Account id", <code>{p.session.account.id}</code>],
          ["Free credits", money(p.balances.free)],
          ["Paid credits", money(p.balances.paid)],
          ["Total", <strong>{money(p.balances.total)}</strong>],
        ]}
      />
      <section aria-labelledby="limits-h">
        <h2 id="limits-h">Limits in force and usage</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Limit</th>
                <th scope="col">On your plan (website runs)</th>
                <th scope="col">With credits (API and website)</th>
              </tr>
            </thead>
            <tbody>
              {LIMIT_LABELS.map(([key, label]) => (
                <tr>
                  <th scope="row">{label}</th>
                  <td>{key === "inflight_api_runs" || key === "negative_balance_cap" ? "—" : p.plan[key]}</td>
                  <td>{p.credits[key]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Facts
          items={[
            ["Runs queued or running", String(p.usage.concurrent_submissions)],
            ["Of them, in-flight API runs", String(p.usage.inflight_api_runs)],
            ["Submissions in the last 24 hours", String(p.usage.daily_quota_used)],
            [
              "Overrides by an operator",
              Object.keys(p.session.account.overrides).length ? JSON.stringify(p.session.account.overrides) : "none",
            ],
          ]}
        />
      </section>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        {p.newKey && (
          <div class="secret" role="status">
            <p>
              <strong>New key {p.newKey.prefix}.</strong> Copy it now: it is shown only this once.
            </p>
            <div class="row">
              <code id="new-key" class="secret-value">
                {p.newKey.key}
              </code>
              <button type="button" class="copy" data-copy-from="new-key">
                Copy key
              </button>
            </div>
          </div>
        )}
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Prefix</th>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Expires</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {p.keys.map((k) => (
                <tr data-key={k.prefix}>
                  <td>
                    <code>{k.prefix}</code>
                  </td>
                  <td>{k.name}</td>
                  <td class="small">{k.scopes.join(", ")}</td>
                  <td>
                    <Time iso={k.expiresAt} />
                  </td>
                  <td>
                    <Time iso={k.lastUsedAt} />
                  </td>
                  <td>
                    {k.revokedAt ? (
                      <span class="status s-cancelled">revoked</span>
                    ) : full ? (
                      <ActionButton
                        session={p.session}
                        action={`/account/keys/${k.prefix}/revoke`}
                        label="Revoke"
                        danger
                        confirm={`Revoke ${k.prefix}? Programs using it stop working at once.`}
                      />
                    ) : (
                      "active"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <form method="post" action="/account/keys" class="stack panel" novalidate>
          <h3>Create a key</h3>
          <Csrf session={p.session} />
          <label for="k-name">Name</label>
          <input
            id="k-name"
            name="name"
            maxlength={100}
            required
            aria-invalid={p.errors.name ? "true" : undefined}
            aria-describedby={p.errors.name ? "k-name-error" : undefined}
          />
          {p.errors.name && (
            <p class="field-error" id="k-name-error">
              {p.errors.name}
            </p>
          )}
          <fieldset aria-describedby={p.errors.scopes ? "k-scopes-error" : undefined}>
            <legend>Scopes</legend>
            {SCOPES.map((s) => (
              <label class="check">
                <input type="checkbox" name="scopes" value={s} disabled={!p.session.row.scopes.includes(s)} /> {s}
              </label>
            ))}
            {p.errors.scopes && (
              <p class="field-error" id="k-scopes-error">
                {p.errors.scopes}
              </p>
            )}
          </fieldset>
          <label for="k-exp">
            {p.session.keyExpiresAt
              ? `Expires on (UTC midnight; at the latest, and by default, when the key you signed in with expires: ${p.session.keyExpiresAt.slice(0, 10)})`
              : "Expires on (optional, UTC midnight)"}
          </label>
          <input
            id="k-exp"
            name="expires_at"
            type="date"
            max={p.session.keyExpiresAt?.slice(0, 10)}
            aria-invalid={p.errors.expires_at ? "true" : undefined}
            aria-describedby={p.errors.expires_at ? "k-exp-error" : undefined}
          />
          {p.errors.expires_at && (
            <p class="field-error" id="k-exp-error">
              {p.errors.expires_at}
            </p>
          )}
          <button type="submit">Create key</button>
          {!full && <p class="hint">Signed in with a key of fewer scopes: you can grant only those, and not revoke keys.</p>}
        </form>
      </section>
      <section aria-labelledby="ledger-h">
        <h2 id="ledger-h">Credit ledger</h2>
        {p.ledger.length === 0 ? (
          <p class="empty">No charges or grants yet.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Run</th>
                  <th scope="col">CPU s</th>
                  <th scope="col">GB·s</th>
                </tr>
              </thead>
              <tbody>
                {p.ledger.map((l) => (
                  <tr>
                    <td>
                      <Time iso={l.createdAt} />
                    </td>
                    <td>{l.kind === "grant" ? "grant" : "run charge"}</td>
                    <td class="num">{money(l.amountMicro / 1_000_000)}</td>
                    <td>{l.submissionId ? <a href={`/submissions/${l.submissionId}`}>{l.runId}</a> : (l.runId ?? "—")}</td>
                    <td class="num">{l.cpuSeconds ?? "—"}</td>
                    <td class="num">{l.gbSeconds === null ? "—" : l.gbSeconds.toFixed(4)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager base="/account" next={p.next} previous={p.previous} />
      </section>
    </Layout>
  );
}

async function render(
  c: Context<WebEnv>,
  extra: { newKey?: { key: string; prefix: string }; errors?: Record<string, string> } = {},
  status: 200 | 201 | 400 = 200,
) {
  const session = c.get("session")!;
  const db = getDb(c.env.DB);
  const account = session.account;
  const q = c.req.query("cursor");
  const parsedCursor = cursor.safeParse(q);
  const [usage, page, keys] = await Promise.all([
    accountGate(c.env, account.id).usage(`session:${session.row.id}`, rateLimits(c.env)),
    pageLedger(db, account.id, 20, await openCursor(c.env, account.id, parsedCursor.success ? parsedCursor.data : undefined)),
    listKeys(db, account.id),
  ]);
  const links = await pageLinks(c.env, account.id, c.req.url, page);
  return c.html(
    <AccountPage
      session={session}
      balances={balancesOf(account)}
      plan={limitsFor(c.env, account, "plan")}
      credits={limitsFor(c.env, account, "credits")}
      usage={usage as Usage}
      ledger={page.rows}
      {...links}
      keys={keys.filter((k) => !k.revokedAt || Date.parse(k.revokedAt) > Date.now() - 30 * 86_400_000)}
      newKey={extra.newKey}
      errors={extra.errors ?? {}}
    />,
    status,
  );
}

export const accountRoutes = new Hono<WebEnv>()
  .use("/account", requireSession)
  .use("/account/*", requireSession)
  .get("/account", (c) => render(c))
  .post("/account/keys", protectChange, async (c) => {
    const session = c.get("session")!;
    const form = await formOf(c);
    const scopes = [(await c.req.parseBody({ all: true })).scopes ?? []].flat().filter((s): s is string => typeof s === "string");
    const parsed = keySchema.safeParse({ name: form.name ?? "", scopes, ...(form.expires_at ? { expires_at: form.expires_at } : {}) });
    const errors: Record<string, string> = parsed.success
      ? {}
      : Object.fromEntries(fieldErrors(parsed.error).map((e) => [e.field.split(".")[0]!, e.message]));
    if (parsed.success) {
      if (parsed.data.scopes.some((s) => !session.row.scopes.includes(s))) errors.scopes = "your session cannot grant one of these scopes";
      if (parsed.data.expires_at && Date.parse(`${parsed.data.expires_at}T00:00:00Z`) <= Date.now())
        errors.expires_at = "must be in the future";
      // A key issued by a session expires no later than the key the session was signed in with.
      const bound = session.keyExpiresAt;
      if (bound && parsed.data.expires_at && Date.parse(`${parsed.data.expires_at}T00:00:00Z`) > Date.parse(bound)) {
        errors.expires_at = `must be no later than the key you signed in with (it expires ${bound.slice(0, 10)})`;
      }
    }
    if (!parsed.success || Object.keys(errors).length) return render(c, { errors }, 400);
    const expiresAt = parsed.data.expires_at ? new Date(`${parsed.data.expires_at}T00:00:00Z`).toISOString() : session.keyExpiresAt;
    const issued = await issueKey(getDb(c.env.DB), session.account.id, parsed.data.name, parsed.data.scopes, expiresAt);
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
    await revokeKey(db, prefix, nowIso());
    flash(c, "notice", `Key ${prefix} revoked.`);
    return c.redirect("/account", 303);
  });
