/** @jsxImportSource hono/jsx */
// The sign-in pages (docs/dashboard.md#sign-in): with an API key, and with a one-time sign-in link.
import type { Session } from "../../domain/sessions";
import { Layout } from "../shared/layout";

export function SignInPage(p: { pre: string; next: string; error?: string; status?: number; session: Session | null }) {
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

export type LinkState = "ready" | "used" | "expired" | "unknown";

export function LinkPage(p: { pre: string; token: string; state: LinkState; session: Session | null }) {
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
