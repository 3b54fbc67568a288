/** @jsxImportSource hono/jsx */
// A webhook (docs/dashboard.md#webhooks, docs/webhooks.md#dashboard-tools): its facts and actions
// (activate / deactivate, rotate, delete), Test, the edit form, and its delivery log with Inspect,
// Replay and re-send.
import type { Session } from "../../domain/sessions";
import { DELIVERY_STATUSES } from "../../model/events";
import type { WebhookRow } from "../../storage/webhooks";
import type { deliveryView } from "../../webhooks/views";
import { ActionButton, Csrf, Facts, FilterSelect, Layout, Pager, Status, Time } from "../shared/layout";
import type { Errors } from "./forms";
import { SecretOnce, WebhookForm } from "./webhook-form";

type Delivery = ReturnType<typeof deliveryView>;
type Responses = Map<string, { status: number | null; networkError: string | null }>;

/** Why Replay and Re-send are off on an inactive webhook (the API refuses them with 409 invalid_state). */
const INACTIVE_REASON = "The webhook is inactive: activate it to replay or re-send a delivery.";

function Actions(p: { session: Session; w: WebhookRow }) {
  const base = `/webhooks/${p.w.id}`;
  return (
    <div class="actions">
      <ActionButton
        session={p.session}
        action={`${base}/active`}
        label={p.w.isActive ? "Deactivate" : "Activate"}
        fields={{ is_active: p.w.isActive ? "false" : "true" }}
      />
      <ActionButton
        session={p.session}
        action={`${base}/rotate`}
        label="Rotate secret"
        confirm="Rotate the secret? The old one stops working at once."
      />
      <ActionButton
        session={p.session}
        action={`${base}/delete`}
        label="Delete webhook"
        danger
        confirm="Delete this webhook and its delivery log?"
      />
    </div>
  );
}

/** Test: a synthetic event imitating webhook.test or one of the webhook's event types. */
function TestPanel(p: { session: Session; w: WebhookRow }) {
  return (
    <section class="panel" aria-labelledby="test-h">
      <h2 id="test-h">Test</h2>
      <form method="post" action={`/webhooks/${p.w.id}/test`} class="stack">
        <Csrf session={p.session} />
        <label for="t-type">Send a synthetic event imitating</label>
        <select id="t-type" name="event_type">
          <option value="webhook.test">webhook.test</option>
          {p.w.events
            .filter((t) => t !== "webhook.test")
            .map((t) => (
              <option value={t}>{t}</option>
            ))}
        </select>
        <p class="hint">Through the same queue, retries and log as real events. Test and Replay: 10 per minute each.</p>
        <button type="submit">Send test</button>
      </form>
    </section>
  );
}

function EditPanel(p: { session: Session; w: WebhookRow; errors: Errors; formError?: string }) {
  const { w } = p;
  return (
    <section class="panel" aria-labelledby="edit-h">
      <h2 id="edit-h">Edit</h2>
      {p.formError && (
        <p class="flash error" role="alert">
          {p.formError}
        </p>
      )}
      <WebhookForm
        session={p.session}
        action={`/webhooks/${w.id}`}
        values={{ url: w.url, events: w.events, description: w.description, is_active: w.isActive }}
        errors={p.errors}
        submit="Save changes"
      />
    </section>
  );
}

/** The last attempt's answer: its HTTP status, "network error", or — before the first attempt. */
function ResponseCode(p: { r: { status: number | null; networkError: string | null } | undefined }) {
  if (!p.r) return <span class="muted">—</span>;
  if (p.r.status !== null) return <code class={p.r.status >= 200 && p.r.status < 300 ? "ok" : "bad"}>{p.r.status}</code>;
  return <span title={p.r.networkError ?? undefined}>network error</span>;
}

/** Replay / Re-send, or on an inactive webhook the same buttons disabled with the reason. */
function DeliveryAction(p: { session: Session; action: string; label: string; active: boolean }) {
  if (p.active) return <ActionButton session={p.session} action={p.action} label={p.label} />;
  return (
    <button type="button" disabled title={INACTIVE_REASON} aria-describedby="inactive-reason">
      {p.label}
    </button>
  );
}

function DeliveryRowView(p: {
  session: Session;
  base: string;
  d: Delivery;
  response: { status: number | null; networkError: string | null } | undefined;
  active: boolean;
}) {
  const { d, base } = p;
  return (
    <tr data-delivery={d.id}>
      <td>
        <a href={`${base}/deliveries/${d.id}`}>{d.event_type}</a>
        {d.is_test && <span class="tag">test</span>}
        {d.replay_of && <span class="tag">replay</span>}
      </td>
      <td>
        <Status status={d.status} />
      </td>
      <td class="num">{d.attempt_count}</td>
      <td data-field="response">
        <ResponseCode r={p.response} />
      </td>
      <td>
        <Time iso={d.created_at} />
      </td>
      <td class="row">
        <a class="button secondary small" href={`${base}/deliveries/${d.id}`}>
          Inspect
        </a>
        <DeliveryAction session={p.session} action={`${base}/deliveries/${d.id}/replay`} label="Replay" active={p.active} />
        {d.status === "failed" && (
          <DeliveryAction session={p.session} action={`${base}/deliveries/${d.id}/resend`} label="Re-send" active={p.active} />
        )}
      </td>
    </tr>
  );
}

/** The delivery log, filtered by status, newest first, paged. */
function DeliveryLog(p: {
  session: Session;
  w: WebhookRow;
  deliveries: Delivery[];
  responses: Responses;
  next: string | null;
  previous: string | null;
  statusFilter: string;
}) {
  const base = `/webhooks/${p.w.id}`;
  // While a delivery is pending the log refreshes itself (the client script), so Test's row turns
  // from pending to its outcome without a reload.
  const pending = p.deliveries.some((d) => d.status === "pending");
  return (
    <section aria-labelledby="log-h" id="deliveries" data-refresh data-pending={pending ? "true" : undefined}>
      <h2 id="log-h">Deliveries</h2>
      {!p.w.isActive && (
        <p class="hint" id="inactive-reason">
          {INACTIVE_REASON}
        </p>
      )}
      <form method="get" action={base} class="filters" aria-label="Filter deliveries">
        <FilterSelect name="status" label="Status" value={p.statusFilter} options={[...DELIVERY_STATUSES]} any />
        <button type="submit">Filter</button>
      </form>
      {p.deliveries.length === 0 ? (
        <p class="empty">No deliveries{p.statusFilter ? ` with status ${p.statusFilter}` : ""}.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {p.deliveries.map((d) => (
                <DeliveryRowView session={p.session} base={base} d={d} response={p.responses.get(d.id)} active={p.w.isActive} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager base={base} next={p.next} previous={p.previous} />
    </section>
  );
}

export function DetailPage(p: {
  session: Session;
  w: WebhookRow;
  deliveries: Delivery[];
  responses: Responses;
  next: string | null;
  previous: string | null;
  statusFilter: string;
  secret?: string;
  secretWhat?: string;
  errors: Errors;
  formError?: string;
}) {
  const { w } = p;
  return (
    <Layout title="Webhook" session={p.session} section="webhooks">
      {/* After a create or a rotation (a POST), the address bar is set to the webhook's own page by the client script. */}
      <div class="title-row" data-canonical={`/webhooks/${w.id}`}>
        <h1>{w.description || "Webhook"}</h1>
        <span class={`status ${w.isActive ? "s-succeeded" : "s-cancelled"}`}>{w.isActive ? "active" : "inactive"}</span>
      </div>
      {p.secret && <SecretOnce secret={p.secret} what={p.secretWhat ?? "The signing secret."} />}
      <Facts
        items={[
          ["URL", <code>{w.url}</code>],
          ["Events", w.events.join(", ")],
          ["Id", <code>{w.id}</code>],
          ["Last delivery", w.lastDeliveryStatus ? `${w.lastDeliveryStatus} at ${w.lastDeliveryAt}` : "none yet"],
          ["Created", <Time iso={w.createdAt} />],
        ]}
      />
      <Actions session={p.session} w={w} />
      <div class="cols">
        <TestPanel session={p.session} w={w} />
        <EditPanel session={p.session} w={w} errors={p.errors} formError={p.formError} />
      </div>
      <DeliveryLog
        session={p.session}
        w={w}
        deliveries={p.deliveries}
        responses={p.responses}
        next={p.next}
        previous={p.previous}
        statusFilter={p.statusFilter}
      />
    </Layout>
  );
}
