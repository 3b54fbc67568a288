/** @jsxImportSource hono/jsx */
// The account page (docs/dashboard.md#account): plan and balances, the limits in force for each way of
// paying and the usage, the person's API keys (create, revoke) and the credit ledger.
import type { Child } from "hono/jsx";
import type { Limits } from "../../admission/limits";
import type { balancesOf } from "../../billing/prices";
import type { Usage } from "../../do/account-gate/object";
import type { Session } from "../../domain/sessions";
import { hasEveryScope, SCOPES } from "../../model/accounts";
import type { RunnerHealth } from "../../runner/runner";
import type { ApiKeyRow } from "../../storage/keys";
import type { LedgerRow } from "../../storage/ledger";
import { ActionButton, Csrf, Facts, Layout, money, Pager, Time } from "../shared/layout";

const LIMIT_LABELS: [keyof Limits, string][] = [
  ["concurrent_submissions", "Runs queued or running at once"],
  ["inflight_api_runs", "In-flight API runs"],
  ["daily_quota", "Runs started per 24 hours"],
  ["max_num_generations", "Generations per run"],
  ["max_num_genes", "Genes per run"],
  ["max_parallel_workers", "Parallel fitness workers per run"],
  ["max_sweep_children", "Children of one sweep"],
  ["run_time_seconds", "Run time (s)"],
  ["run_memory_mb", "Run memory (MB)"],
  ["negative_balance_cap", "Balance may go below zero by"],
];

/** The limits of each way of paying, side by side, and what is in use now. */
function LimitsSection(p: { session: Session; plan: Limits; credits: Limits; usage: Usage }) {
  const overrides = p.session.account.overrides;
  return (
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
          ["Runs started in the last 24 hours", String(p.usage.daily_quota_used)],
          ["Overrides by an operator", Object.keys(overrides).length ? JSON.stringify(overrides) : "none"],
        ]}
      />
    </section>
  );
}

/** The sandbox measures by name, as docs/deploy.md#isolation-per-measure's table names them. */
const MEASURES = [
  ["user", "the run as an unprivileged uid"],
  ["network", "an empty network namespace"],
  ["syscall_filter", "the seccomp filter"],
  ["pid_namespace", "a PID namespace"],
  ["minimal_root", "a minimal root"],
  ["cgroup", "a control group per run"],
] as const;

/**
 * The service's state (docs/dashboard.md#service-status): whether the GA worker answers, and which sandbox
 * measures it enforces, an absent one named (the standing worker's locally; in production the latest an
 * instance reported once started).
 */
export function ServiceStatus(p: { runner: RunnerHealth }) {
  const r = p.runner;
  const state = r.status === "down" ? `down: ${r.reason}` : r.status === "ok" ? "answering" : "a container per run, started on demand";
  const flags = r.status === "down" ? undefined : r.isolation;
  const absent = flags ? MEASURES.filter(([name]) => !flags[name]) : [];
  const reported: [string, Child][] =
    r.status === "on_demand" && r.observed_at
      ? [
          [
            "Reported",
            <>
              by a {r.class} instance at <Time iso={r.observed_at} />
            </>,
          ],
        ]
      : [];
  return (
    <section aria-labelledby="service-h">
      <h2 id="service-h">Service status</h2>
      <Facts
        items={[
          ["GA worker", state],
          [
            "Sandbox measures",
            !flags ? (
              "not reported yet (no run's instance has started since the deployment)"
            ) : absent.length === 0 ? (
              "all enforced"
            ) : (
              <strong class="absent-measures">absent: {absent.map(([name, what]) => `${name} (${what})`).join(", ")}</strong>
            ),
          ],
          ...reported,
        ]}
      />
      <p class="hint">
        Which measures may be absent, and what is lost without each: <code>docs/deploy.md</code> ("When the platform refuses a sandbox
        measure").
      </p>
    </section>
  );
}

/** A new key, shown once with a copy button. */
const NewKey = (p: { newKey: { key: string; prefix: string } }) => (
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
);

/** The live keys made from `key`, and from those, down the line (what revoking it revokes too). */
function liveDependents(key: ApiKeyRow, all: ApiKeyRow[]): ApiKeyRow[] {
  const found: ApiKeyRow[] = [];
  const ids = new Set([key.id]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const k of all) {
      if (k.parentKeyId && ids.has(k.parentKeyId) && !ids.has(k.id)) {
        ids.add(k.id);
        if (!k.revokedAt) found.push(k);
        grew = true;
      }
    }
  }
  return found;
}

const revokeQuestion = (key: ApiKeyRow, all: ApiKeyRow[]) => {
  const dependents = liveDependents(key, all).map((k) => k.prefix);
  const also = dependents.length ? ` The keys made from it are revoked with it: ${dependents.join(", ")}.` : "";
  return `Revoke ${key.prefix}? Programs using it stop working at once.${also}`;
};

/**
 * The account's keys by prefix, each with the key it was made from; a session with every scope may
 * revoke them (and, with one, the keys made from it). `all` holds every key (those long revoked too).
 */
function KeysTable(p: { session: Session; keys: ApiKeyRow[]; all: ApiKeyRow[] }) {
  const full = hasEveryScope(p.session.row.scopes);
  const prefixOf = new Map(p.all.map((k) => [k.id, k.prefix]));
  return (
    <div class="table-wrap">
      <p class="hint" id="keys-made-from">
        A key made on this page, or by approving a device login, while signed in with a key is <em>made from</em> that key: revoking a key
        also revokes every key made from it, and the keys made from those. Keys an operator issued, and keys made after signing in with a
        one-time link, are made from no key.
      </p>
      <table aria-describedby="keys-made-from">
        <thead>
          <tr>
            <th scope="col">Prefix</th>
            <th scope="col">Name</th>
            <th scope="col">Scopes</th>
            <th scope="col">Made from</th>
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
              <td class="made-from">{k.parentKeyId ? <code>{prefixOf.get(k.parentKeyId) ?? "a deleted key"}</code> : "—"}</td>
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
                    confirm={revokeQuestion(k, p.all)}
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
  );
}

const FieldErrorText = (p: { id: string; error: string | undefined }) =>
  p.error ? (
    <p class="field-error" id={p.id}>
      {p.error}
    </p>
  ) : null;

/** Create a key: a name, the scopes this session may grant, an expiry. */
function CreateKeyForm(p: { session: Session; errors: Record<string, string>; all: ApiKeyRow[] }) {
  const { session, errors } = p;
  const bound = session.keyExpiresAt;
  const parent = p.all.find((k) => k.id === session.row.keyId)?.prefix;
  return (
    <form method="post" action="/account/keys" class="stack panel" novalidate>
      <h3>Create a key</h3>
      <Csrf session={session} />
      <label for="k-name">Name</label>
      <input
        id="k-name"
        name="name"
        maxlength={100}
        required
        aria-invalid={errors.name ? "true" : undefined}
        aria-describedby={errors.name ? "k-name-error" : undefined}
      />
      <FieldErrorText id="k-name-error" error={errors.name} />
      <fieldset aria-describedby={errors.scopes ? "k-scopes-error" : undefined}>
        <legend>Scopes</legend>
        {SCOPES.map((s) => (
          <label class="check">
            <input type="checkbox" name="scopes" value={s} disabled={!session.row.scopes.includes(s)} /> {s}
          </label>
        ))}
        <FieldErrorText id="k-scopes-error" error={errors.scopes} />
      </fieldset>
      <label for="k-exp">
        {bound
          ? `Expires on (UTC midnight; at the latest, and by default, when the key you signed in with expires: ${bound.slice(0, 10)})`
          : "Expires on (optional, UTC midnight)"}
      </label>
      <input
        id="k-exp"
        name="expires_at"
        type="date"
        max={bound?.slice(0, 10)}
        aria-invalid={errors.expires_at ? "true" : undefined}
        aria-describedby={errors.expires_at ? "k-exp-error" : undefined}
      />
      <FieldErrorText id="k-exp-error" error={errors.expires_at} />
      <button type="submit">Create key</button>
      {parent && (
        <p class="hint">
          The new key is made from <code>{parent}</code>, the key you signed in with: revoking that key revokes this one too.
        </p>
      )}
      {!hasEveryScope(session.row.scopes) && (
        <p class="hint">Signed in with a key of fewer scopes: you can grant only those, and not revoke keys.</p>
      )}
    </form>
  );
}

function Ledger(p: { ledger: LedgerRow[]; next: string | null; previous: string | null }) {
  return (
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
  );
}

export function AccountPage(p: {
  session: Session;
  balances: ReturnType<typeof balancesOf>;
  plan: Limits;
  credits: Limits;
  usage: Usage;
  ledger: LedgerRow[];
  next: string | null;
  previous: string | null;
  /** The keys listed (revoked ones only for a while)… */
  keys: ApiKeyRow[];
  /** …and every key of the account, for what each was made from. */
  allKeys: ApiKeyRow[];
  newKey?: { key: string; prefix: string };
  errors: Record<string, string>;
  runner: RunnerHealth;
}) {
  const { account } = p.session;
  return (
    <Layout title="Account" session={p.session} section="account">
      <h1>Account</h1>
      <Facts
        items={[
          ["Email", account.email],
          ["Plan", account.plan],
          ["Account id", <code>{account.id}</code>],
          ["Free credits", money(p.balances.free)],
          ["Paid credits", money(p.balances.paid)],
          ["Total", <strong>{money(p.balances.total)}</strong>],
        ]}
      />
      <LimitsSection session={p.session} plan={p.plan} credits={p.credits} usage={p.usage} />
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        {p.newKey && <NewKey newKey={p.newKey} />}
        <KeysTable session={p.session} keys={p.keys} all={p.allKeys} />
        <CreateKeyForm session={p.session} errors={p.errors} all={p.allKeys} />
      </section>
      <Ledger ledger={p.ledger} next={p.next} previous={p.previous} />
      <ServiceStatus runner={p.runner} />
    </Layout>
  );
}
