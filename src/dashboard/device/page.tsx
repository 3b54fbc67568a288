/** @jsxImportSource hono/jsx */
// The device-login approval page (docs/dashboard.md#device-login): the code shown by the client, then
// the pending request to approve (with the new key's name and scopes) or deny.
import { formatUserCode } from "../../domain/device-auth";
import type { Session } from "../../domain/sessions";
import { hasEveryScope, SCOPES } from "../../model/accounts";
import { Csrf, Layout } from "../shared/layout";

/** A pending request as the page shows it. */
export interface Pending {
  id: string;
  userCode: string;
  clientInfo: string;
  expiresAt: string;
}

function CodeForm(p: { session: Session; code?: string; error?: string }) {
  return (
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
  );
}

function DecisionForm(p: { session: Session; pending: Pending }) {
  const { session, pending } = p;
  return (
    <form method="post" action="/device/decide" class="stack">
      <Csrf session={session} />
      <input type="hidden" name="id" value={pending.id} />
      <input type="hidden" name="user_code" value={pending.userCode} />
      <p>
        A client asks for an API key of your account. Check that it shows the code{" "}
        <strong class="code-big">{formatUserCode(pending.userCode)}</strong>.
      </p>
      {pending.clientInfo && (
        <p class="muted">
          Client: <code>{pending.clientInfo}</code>
        </p>
      )}
      <label for="key_name">Name of the new key</label>
      <input id="key_name" name="key_name" value="vilvik login" maxlength={100} required />
      <fieldset>
        <legend>Scopes of the new key</legend>
        {SCOPES.map((s) => {
          const allowed = session.row.scopes.includes(s);
          return (
            <label class="check">
              <input type="checkbox" name="scopes" value={s} checked={allowed} disabled={!allowed} /> {s}
            </label>
          );
        })}
        {!hasEveryScope(session.row.scopes) && <p class="hint">Your session can only grant the scopes of the key you signed in with.</p>}
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
  );
}

export function DevicePage(p: { session: Session; code?: string; error?: string; pending?: Pending }) {
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
          <CodeForm session={p.session} code={p.code} error={p.error} />
        ) : (
          <DecisionForm session={p.session} pending={p.pending} />
        )}
      </section>
    </Layout>
  );
}
