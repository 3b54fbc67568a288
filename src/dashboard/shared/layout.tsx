/** @jsxImportSource hono/jsx */
// The page shell of the dashboard and the small pieces every page uses. Server-rendered HTML; the
// scripts under /assets (web/browser, built by scripts/build-web.mjs) only enhance it.

import { getContext } from "hono/context-storage";
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { Session } from "../../domain/sessions";
import type { DashboardEnv, Flash } from "./context";

export interface PageProps {
  title: string;
  session: Session | null;
  flash?: Flash | null;
  /** Extra client bundles this page needs (the code editor). */
  scripts?: string[];
  /** The current section, for the navigation's aria-current. */
  section?: "submissions" | "new" | "sweeps" | "results" | "compare" | "webhooks" | "account" | "device";
}

const NAV: [NonNullable<PageProps["section"]>, string, string][] = [
  ["submissions", "/submissions", "Submissions"],
  ["new", "/submissions/new", "New submission"],
  ["sweeps", "/sweeps", "Sweeps"],
  ["results", "/results", "Results"],
  ["webhooks", "/webhooks", "Webhooks"],
  ["account", "/account", "Account"],
];

/** The message the previous request left (shared/session.ts flash), read from the request being rendered. */
function currentFlash(): Flash | null {
  try {
    return getContext<DashboardEnv>().get("flash") ?? null;
  } catch {
    return null; // rendered outside a request (never in the Worker)
  }
}

export const Layout: FC<PropsWithChildren<PageProps>> = ({ title, session, flash = currentFlash(), scripts = [], section, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · Allele`}</title>
      <link rel="stylesheet" href="/assets/app.css" />
      <link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />
      <script type="module" src="/assets/app.js"></script>
      {scripts.map((s) => (
        <script type="module" src={`/assets/${s}.js`}></script>
      ))}
    </head>
    <body>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Allele
        </a>
        {session && (
          <nav aria-label="Main">
            <ul>
              {NAV.map(([key, href, label]) => (
                <li>
                  <a href={href} aria-current={section === key ? "page" : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {session && (
          <form method="post" action="/sign-out" class="signout">
            <Csrf session={session} />
            <span class="who">{session.account.email}</span>
            <button type="submit" class="link">
              Sign out
            </button>
          </form>
        )}
      </header>
      <main id="main" tabindex={-1}>
        {flash && (
          <p class={`flash ${flash.kind}`} role={flash.kind === "error" ? "alert" : "status"}>
            {flash.text}
          </p>
        )}
        {children}
      </main>
      <footer class="foot">
        <a href="/api/v1/health">API status</a> · API at <code>/api/v1</code>
      </footer>
    </body>
  </html>
);

/** The hidden CSRF field every form of a signed-in person carries. */
export const Csrf: FC<{ session: Session }> = ({ session }) => <input type="hidden" name="_csrf" value={session.row.csrfToken} />;

/** A small form with one button (POST), with an optional confirmation question. */
export const ActionButton: FC<{
  session: Session;
  action: string;
  label: string;
  confirm?: string;
  danger?: boolean;
  fields?: Record<string, string>;
}> = (p) => (
  <form method="post" action={p.action} class="inline" data-confirm={p.confirm}>
    <Csrf session={p.session} />
    {Object.entries(p.fields ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <button type="submit" class={p.danger ? "danger" : undefined}>
      {p.label}
    </button>
  </form>
);

export const Status: FC<{ status: string }> = ({ status }) => <span class={`status s-${status}`}>{status}</span>;

/** A timestamp shown in UTC, machine-readable for the client script to show it in local time. */
export const Time: FC<{ iso: string | null | undefined }> = ({ iso }) =>
  iso ? <time datetime={iso}>{iso.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time> : <span class="muted">—</span>;

export const fmtNumber = (n: number | null | undefined, digits = 6): string => {
  if (n === null || n === undefined) return "—";
  if (Number.isInteger(n)) return String(n);
  const abs = Math.abs(n);
  return abs !== 0 && (abs < 1e-4 || abs >= 1e9) ? n.toExponential(4) : String(Number(n.toPrecision(digits)));
};

export const money = (n: number) => n.toFixed(6).replace(/0{1,4}$/, "");

/** Previous / next links of a cursor list (the API's `previous` / `next` query suffixes). */
export const Pager: FC<{ base: string; next: string | null; previous: string | null }> = ({ base, next, previous }) =>
  next || previous ? (
    <nav class="pager" aria-label="Pages">
      {previous ? (
        <a href={`${base}${previous}`} rel="prev">
          ← Newer
        </a>
      ) : (
        <span />
      )}
      {next ? (
        <a href={`${base}${next}`} rel="next">
          Older →
        </a>
      ) : (
        <span />
      )}
    </nav>
  ) : null;

/** A text or date filter of a list's filter form. */
export const FilterInput: FC<{ name: string; label: string; value?: string; type?: "text" | "date"; decimal?: boolean }> = (p) => (
  <div>
    <label for={`q-${p.name}`}>{p.label}</label>
    <input
      id={`q-${p.name}`}
      name={p.name}
      type={p.type ?? "text"}
      value={p.value ?? ""}
      inputmode={p.decimal ? "decimal" : undefined}
      maxlength={p.type === "date" ? undefined : 100}
    />
  </div>
);

/** A choice among values of a list's filter form; `any` adds an empty choice (no filter). */
export const FilterSelect: FC<{
  name: string;
  label: string;
  value?: string;
  options: readonly (string | [string, string])[];
  any?: boolean;
}> = (p) => (
  <div>
    <label for={`q-${p.name}`}>{p.label}</label>
    <select id={`q-${p.name}`} name={p.name}>
      {p.any && <option value="">any</option>}
      {p.options.map((o) => {
        const [value, text] = typeof o === "string" ? [o, o] : o;
        return (
          <option value={value} selected={p.value === value}>
            {text}
          </option>
        );
      })}
    </select>
  </div>
);

/** A definition list of label → value pairs (generic, so fields added to the API render too). */
export const Facts: FC<{ items: [string, Child][] }> = ({ items }) => (
  <dl class="facts">
    {items.map(([label, value]) => (
      <div>
        <dt>{label}</dt>
        <dd>{value}</dd>
      </div>
    ))}
  </dl>
);

/** Any JSON value as text: numbers and strings plainly, the rest as compact JSON. */
export function plain(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return fmtNumber(value);
  if (typeof value === "string") return value === "" ? "—" : value;
  if (typeof value === "boolean") return value ? "yes" : "no";
  return JSON.stringify(value);
}

/** An error page: what went wrong in words and the request id to quote; never a stack trace. */
export const ErrorPage: FC<{ status: number; message: string; requestId: string; session: Session | null }> = ({
  status,
  message,
  requestId,
  session,
}) => (
  <Layout title={status === 404 ? "Not found" : "Something went wrong"} session={session}>
    <h1>{status === 404 ? "Not found" : status >= 500 ? "Something went wrong" : "That did not work"}</h1>
    <p>{message}</p>
    <p class="muted">
      Request id: <code class="reqid">{requestId}</code> — quote it if you ask for help.
    </p>
    <p>
      <a href="/">Back to the dashboard</a>
    </p>
  </Layout>
);
