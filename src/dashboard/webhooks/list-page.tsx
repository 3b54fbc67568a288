/** @jsxImportSource hono/jsx */
// The webhooks list (docs/dashboard.md#webhooks), with the form that adds one.
import type { Session } from "../../domain/sessions";
import type { WebhookRow } from "../../storage/webhooks";
import { Layout, Pager, Status, Time } from "../shared/layout";
import type { Errors } from "./forms";
import { WebhookForm, type WebhookValues } from "./webhook-form";

function WebhooksTable(p: { rows: WebhookRow[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">Active</th>
            <th scope="col">Last delivery</th>
          </tr>
        </thead>
        <tbody>
          {p.rows.map((w) => (
            <tr>
              <td>
                <a href={`/webhooks/${w.id}`}>{w.description || w.url}</a>
                {w.description && <div class="muted small">{w.url}</div>}
              </td>
              <td>{w.events.join(", ")}</td>
              <td>{w.isActive ? "yes" : "no"}</td>
              <td>
                {w.lastDeliveryStatus ? <Status status={w.lastDeliveryStatus} /> : "—"} <Time iso={w.lastDeliveryAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ListPage(p: {
  session: Session;
  rows: WebhookRow[];
  next: string | null;
  previous: string | null;
  errors: Errors;
  values: WebhookValues;
  formError?: string;
}) {
  return (
    <Layout title="Webhooks" session={p.session} section="webhooks">
      <h1>Webhooks</h1>
      {p.rows.length === 0 ? <p class="empty">No webhooks yet.</p> : <WebhooksTable rows={p.rows} />}
      <Pager base="/webhooks" next={p.next} previous={p.previous} />
      <section class="panel" aria-labelledby="new-h">
        <h2 id="new-h">Add a webhook</h2>
        {p.formError && (
          <p class="flash error" role="alert">
            {p.formError}
          </p>
        )}
        <WebhookForm session={p.session} action="/webhooks" values={p.values} errors={p.errors} submit="Create webhook" />
      </section>
    </Layout>
  );
}
