/** @jsxImportSource hono/jsx */
// The webhook form (create and edit: URL, events, description, active) and a secret shown once.
import type { Session } from "../../domain/sessions";
import { EVENT_TYPES } from "../../model/events";
import { Csrf } from "../shared/layout";
import type { Errors } from "./forms";

export interface WebhookValues {
  url?: string;
  events?: string[];
  description?: string;
  is_active?: boolean;
}

export function WebhookForm(p: { session: Session; action: string; values: WebhookValues; errors: Errors; submit: string }) {
  const err = (name: string) =>
    p.errors[name] && (
      <p class="field-error" id={`w-${name}-error`}>
        {p.errors[name]}
      </p>
    );
  return (
    <form method="post" action={p.action} class="stack" novalidate>
      <Csrf session={p.session} />
      <label for="w-url">URL</label>
      <input
        id="w-url"
        name="url"
        type="url"
        value={p.values.url ?? ""}
        required
        placeholder="https://example.com/allele-hook"
        aria-invalid={p.errors.url ? "true" : undefined}
        aria-describedby={p.errors.url ? "w-url-error" : "w-url-hint"}
      />
      <p class="hint" id="w-url-hint">
        HTTPS, on a host whose every address is public.
      </p>
      {err("url")}
      <fieldset aria-describedby={p.errors.events ? "w-events-error" : undefined}>
        <legend>Events</legend>
        {EVENT_TYPES.map((t) => (
          <label class="check">
            <input type="checkbox" name="events" value={t} checked={(p.values.events ?? []).includes(t)} /> {t}
          </label>
        ))}
        {err("events")}
      </fieldset>
      <label for="w-desc">Description (optional)</label>
      <input
        id="w-desc"
        name="description"
        value={p.values.description ?? ""}
        maxlength={200}
        aria-invalid={p.errors.description ? "true" : undefined}
      />
      {err("description")}
      <label class="check">
        <input type="checkbox" name="is_active" value="true" checked={p.values.is_active ?? true} /> Active
      </label>
      <button type="submit">{p.submit}</button>
    </form>
  );
}

/** A signing secret, shown once with a copy button (after a create or a rotation). */
export function SecretOnce(p: { secret: string; what: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{p.what}</strong> Copy it now: it is shown only this once.
      </p>
      <div class="row">
        <code id="secret-value" class="secret-value">
          {p.secret}
        </code>
        <button type="button" class="copy" data-copy-from="secret-value">
          Copy secret
        </button>
      </div>
    </div>
  );
}
