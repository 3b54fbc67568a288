/** @jsxImportSource hono/jsx */
// Webhooks in the dashboard (docs/dashboard.md#webhooks, docs/webhooks.md#dashboard-tools): create (the
// secret shown once, with a copy button), edit, activate / deactivate, rotate, delete; the delivery log
// with status filters; Test, Replay, Inspect and re-send of a failed delivery. The engine is
// webhooks/tools.ts, the same as the REST endpoints', limits included.

import { type Context, Hono } from "hono";
import type { Session } from "../domain/sessions";
import { ApiError, notFound } from "../errors";
import { DELIVERY_STATUSES, EVENT_TYPES } from "../model/events";
import { fieldErrors } from "../model/fields";
import {
  changeWebhook,
  createWebhookSchema,
  deliveriesPage,
  deliveriesQuery,
  registerWebhook,
  rotateWebhookSecret,
  updateWebhookSchema,
  webhooksListQuery,
  webhooksPage,
} from "../operations/webhooks";
import { getDb } from "../storage/db";
import { deleteWebhook, getWebhook, listWebhooks, type WebhookRow } from "../storage/webhooks";
import { requireScope } from "../surface/caller";
import { fireTest, inspectDelivery, replayDelivery, resendDelivery } from "../webhooks/tools";
import type { deliveryView } from "../webhooks/views";
import { act, formOf, refusalText } from "./actions";
import type { WebEnv } from "./context";
import { ActionButton, Csrf, Facts, FilterSelect, Layout, Pager, Status, Time } from "./layout";
import { listQueryOf } from "./lists";
import { flash, protectChange, requireSession } from "./session";

type Errors = Record<string, string>;
type Delivery = ReturnType<typeof deliveryView>;

function WebhookForm(p: {
  session: Session;
  action: string;
  values: { url?: string; events?: string[]; description?: string; is_active?: boolean };
  errors: Errors;
  submit: string;
}) {
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

function SecretOnce(p: { secret: string; what: string }) {
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

function ListPage(p: {
  session: Session;
  rows: WebhookRow[];
  next: string | null;
  previous: string | null;
  errors: Errors;
  values: Parameters<typeof WebhookForm>[0]["values"];
  formError?: string;
}) {
  return (
    <Layout title="Webhooks" session={p.session} section="webhooks">
      <h1>Webhooks</h1>
      {p.rows.length === 0 ? (
        <p class="empty">No webhooks yet.</p>
      ) : (
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
      )}
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

function DetailPage(p: {
  session: Session;
  w: WebhookRow;
  deliveries: Delivery[];
  next: string | null;
  previous: string | null;
  statusFilter: string;
  secret?: string;
  secretWhat?: string;
  errors: Errors;
  formError?: string;
}) {
  const { w } = p;
  const base = `/webhooks/${w.id}`;
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
      <div class="actions">
        <ActionButton
          session={p.session}
          action={`${base}/active`}
          label={w.isActive ? "Deactivate" : "Activate"}
          fields={{ is_active: w.isActive ? "false" : "true" }}
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
      <div class="cols">
        <section class="panel" aria-labelledby="test-h">
          <h2 id="test-h">Test</h2>
          <form method="post" action={`${base}/test`} class="stack">
            <Csrf session={p.session} />
            <label for="t-type">Send a synthetic event imitating</label>
            <select id="t-type" name="event_type">
              <option value="webhook.test">webhook.test</option>
              {w.events
                .filter((t) => t !== "webhook.test")
                .map((t) => (
                  <option value={t}>{t}</option>
                ))}
            </select>
            <p class="hint">Through the same queue, retries and log as real events. Test and Replay: 10 per minute each.</p>
            <button type="submit">Send test</button>
          </form>
        </section>
        <section class="panel" aria-labelledby="edit-h">
          <h2 id="edit-h">Edit</h2>
          {p.formError && (
            <p class="flash error" role="alert">
              {p.formError}
            </p>
          )}
          <WebhookForm
            session={p.session}
            action={base}
            values={{ url: w.url, events: w.events, description: w.description, is_active: w.isActive }}
            errors={p.errors}
            submit="Save changes"
          />
        </section>
      </div>
      <section aria-labelledby="log-h">
        <h2 id="log-h">Deliveries</h2>
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
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {p.deliveries.map((d) => (
                  <tr data-delivery={d.id}>
                    <td>
                      <a href={`${base}/deliveries/${d.id}`}>{d.event_type}</a>
                      {d.is_test && <span class="tag">test</span>}
                      {d.replay_of && <span class="tag">replay</span>}
                    </td>
                    <td>
                      <Status status={d.status} />
                    </td>
                    <td>{d.attempt_count}</td>
                    <td>
                      <Time iso={d.created_at} />
                    </td>
                    <td class="row">
                      <a class="button secondary small" href={`${base}/deliveries/${d.id}`}>
                        Inspect
                      </a>
                      <ActionButton session={p.session} action={`${base}/deliveries/${d.id}/replay`} label="Replay" />
                      {d.status === "failed" && (
                        <ActionButton session={p.session} action={`${base}/deliveries/${d.id}/resend`} label="Re-send" />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager base={base} next={p.next} previous={p.previous} />
      </section>
    </Layout>
  );
}

function InspectPage(p: { session: Session; w: WebhookRow; d: Awaited<ReturnType<typeof inspectDelivery>> }) {
  const { d, w } = p;
  const base = `/webhooks/${w.id}/deliveries/${d.id}`;
  let pretty = d.payload;
  try {
    pretty = JSON.stringify(JSON.parse(d.payload), null, 2);
  } catch {
    // shown as sent
  }
  return (
    <Layout title="Delivery" session={p.session} section="webhooks">
      <p>
        <a href={`/webhooks/${w.id}`}>← Back to the webhook</a>
      </p>
      <div class="title-row">
        <h1>Delivery {d.id}</h1>
        <Status status={d.status} />
      </div>
      <Facts
        items={[
          ["Event", `${d.event_type} (${d.event_id})`],
          ["Attempts", String(d.attempt_count)],
          ["Next attempt", <Time iso={d.next_attempt_at} />],
          ["Test", d.is_test ? "yes" : "no"],
          ["Replay of", d.replay_of ?? "—"],
          ["Re-sent", `${d.resend_count} time(s)`],
          ["Created", <Time iso={d.created_at} />],
        ]}
      />
      <div class="actions">
        <ActionButton session={p.session} action={`${base}/replay`} label="Replay" />
        {d.status === "failed" && <ActionButton session={p.session} action={`${base}/resend`} label="Re-send" />}
      </div>
      <h2>Payload</h2>
      <pre class="logs" tabindex={0}>
        {pretty}
      </pre>
      <h2>Attempts</h2>
      {d.attempts.length === 0 && <p class="empty">No attempt yet.</p>}
      {d.attempts.map((a) => (
        <section class="panel attempt" aria-label={`Attempt ${a.attempt_no}`}>
          <h3>
            Attempt {a.attempt_no}: {a.response_status ?? "no answer"} <span class="muted">in {a.duration_ms} ms</span>
          </h3>
          <Facts
            items={[
              ["At", <Time iso={a.created_at} />],
              ["Request URL", <code>{a.request_url}</code>],
              ["Network error", a.network_error ?? "—"],
            ]}
          />
          <details>
            <summary>Request headers</summary>
            <pre class="logs">
              {Object.entries(a.request_headers)
                .map(([k, v]) => `${k}: ${v}`)
                .join("\n")}
            </pre>
          </details>
          <details>
            <summary>Response headers</summary>
            <pre class="logs">
              {Object.entries(a.response_headers ?? {})
                .map(([k, v]) => `${k}: ${v}`)
                .join("\n") || "—"}
            </pre>
          </details>
          <h4>Response body (first 8 KB)</h4>
          <pre class="logs">{a.response_body ?? "—"}</pre>
        </section>
      ))}
    </Layout>
  );
}

/** The webhook form's values as the API's JSON body. */
function webhookBody(form: Record<string, string>, events: string[]) {
  return { url: (form.url ?? "").trim(), events, description: form.description ?? "", is_active: form.is_active === "true" };
}

async function eventsOf(c: Context<WebEnv>) {
  return [(await c.req.parseBody({ all: true })).events ?? []].flat().filter((v): v is string => typeof v === "string");
}

const errorsOf = (err: ApiError): Errors => {
  const d = err.details as { fields?: { field: string; message: string }[] };
  if (d.fields) return Object.fromEntries(d.fields.map((f) => [f.field.split(".")[0]!, f.message]));
  if (err.code === "invalid_webhook_url") return { url: err.message };
  return {};
};

async function detail(
  c: Context<WebEnv>,
  id: string,
  extra: { secret?: string; secretWhat?: string; errors?: Errors; formError?: string } = {},
  status: 200 | 400 | 422 = 200,
) {
  const session = c.get("session")!;
  const w = await getWebhook(getDb(c.env.DB), session.account.id, id);
  if (!w) throw notFound("webhook");
  const { query, raw } = listQueryOf(c, deliveriesQuery);
  const q = query ?? { status: undefined, page_size: 50, cursor: undefined };
  // The log shows 50 a page unless the query says otherwise (the API's default is 20).
  const pageSize = q.page_size === 20 && !raw.page_size ? 50 : q.page_size;
  const log = await deliveriesPage(c.env, session.account.id, w.id, { ...q, page_size: pageSize }, c.req.url);
  return c.html(
    <DetailPage
      session={session}
      w={w}
      deliveries={log.rows}
      next={log.next}
      previous={log.previous}
      statusFilter={raw.status ?? ""}
      errors={extra.errors ?? {}}
      formError={extra.formError}
      secret={extra.secret}
      secretWhat={extra.secretWhat}
    />,
    status,
  );
}

export const webhookRoutes = new Hono<WebEnv>()
  .use("/webhooks", requireSession)
  .use("/webhooks/*", requireSession)
  .get("/webhooks", requireScope("webhooks:read"), async (c) => {
    const session = c.get("session")!;
    const { query } = listQueryOf(c, webhooksListQuery);
    const page = await webhooksPage(c.env, session.account.id, query ?? { page_size: 20, cursor: undefined }, c.req.url);
    return c.html(
      <ListPage
        session={session}
        rows={page.rows}
        next={page.next}
        previous={page.previous}
        errors={{}}
        values={{ events: ["submission.succeeded", "submission.failed"] }}
      />,
    );
  })
  .post("/webhooks", requireScope("webhooks:write"), protectChange, async (c) => {
    const session = c.get("session")!;
    const form = await formOf(c);
    const body = webhookBody(form, await eventsOf(c));
    const again = async (errors: Errors, formError?: string) => {
      const page = await listWebhooks(getDb(c.env.DB), session.account.id, 20);
      return c.html(
        <ListPage session={session} rows={page.rows} next={null} previous={null} errors={errors} values={body} formError={formError} />,
        422,
      );
    };
    const parsed = createWebhookSchema.safeParse(body);
    if (!parsed.success) return again(Object.fromEntries(fieldErrors(parsed.error).map((e) => [e.field.split(".")[0]!, e.message])));
    try {
      const row = await registerWebhook(c.env, session.account.id, parsed.data);
      return detail(c, row.id, { secret: row.secret, secretWhat: "Webhook created. This is its signing secret." });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const errors = errorsOf(err);
      return again(errors, Object.keys(errors).length ? undefined : refusalText(err));
    }
  })
  .get("/webhooks/:id", requireScope("webhooks:read"), (c) => detail(c, c.req.param("id")))
  .post("/webhooks/:id", requireScope("webhooks:write"), protectChange, async (c) => {
    const form = await formOf(c);
    const parsed = updateWebhookSchema.safeParse(webhookBody(form, await eventsOf(c)));
    if (!parsed.success)
      return detail(
        c,
        c.req.param("id"),
        { errors: Object.fromEntries(fieldErrors(parsed.error).map((e) => [e.field.split(".")[0]!, e.message])) },
        422,
      );
    try {
      await changeWebhook(c.env, c.get("session")!.account.id, c.req.param("id"), parsed.data);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 || err.code === "not_found") throw err;
      const errors = errorsOf(err);
      return detail(c, c.req.param("id"), { errors, formError: Object.keys(errors).length ? undefined : refusalText(err) }, 422);
    }
    flash(c, "notice", "Saved.");
    return c.redirect(`/webhooks/${c.req.param("id")}`, 303);
  })
  .post("/webhooks/:id/active", requireScope("webhooks:write"), protectChange, async (c) => {
    const active = (await formOf(c)).is_active === "true";
    return act(c, `/webhooks/${c.req.param("id")}`, async () => {
      await changeWebhook(c.env, c.get("session")!.account.id, c.req.param("id"), { is_active: active });
      return active ? "Activated." : "Deactivated: no deliveries until it is active again.";
    });
  })
  .post("/webhooks/:id/rotate", requireScope("webhooks:write"), protectChange, async (c) => {
    const row = await rotateWebhookSecret(c.env, c.get("session")!.account.id, c.req.param("id"));
    return detail(c, row.id, { secret: row.secret, secretWhat: "Secret rotated: the old one no longer works. The new secret:" });
  })
  .post("/webhooks/:id/delete", requireScope("webhooks:write"), protectChange, async (c) => {
    if (!(await deleteWebhook(getDb(c.env.DB), c.get("session")!.account.id, c.req.param("id")))) throw notFound("webhook");
    flash(c, "notice", "The webhook was deleted.");
    return c.redirect("/webhooks", 303);
  })
  .post("/webhooks/:id/test", requireScope("webhooks:write"), protectChange, async (c) => {
    const type = (await formOf(c)).event_type || "webhook.test";
    const id = c.req.param("id");
    return act(c, `/webhooks/${id}`, async () => {
      const fired = await fireTest(c.env, c.get("session")!.account.id, id, type);
      return `Test sent: delivery ${fired.delivery_id} (${type === "webhook.test" ? "webhook.test" : `a sample of ${type}`}).`;
    });
  })
  .get("/webhooks/:id/deliveries/:delivery_id", requireScope("webhooks:read"), async (c) => {
    const session = c.get("session")!;
    const w = await getWebhook(getDb(c.env.DB), session.account.id, c.req.param("id"));
    if (!w) throw notFound("webhook");
    return c.html(
      <InspectPage session={session} w={w} d={await inspectDelivery(c.env, session.account.id, w.id, c.req.param("delivery_id"))} />,
    );
  })
  .post("/webhooks/:id/deliveries/:delivery_id/replay", requireScope("webhooks:write"), protectChange, async (c) => {
    const { id, delivery_id } = c.req.param();
    return act(c, `/webhooks/${id}`, async () => {
      const fired = await replayDelivery(c.env, c.get("session")!.account.id, id, delivery_id);
      return `Replayed as delivery ${fired.delivery_id} (new event id ${fired.event_id}).`;
    });
  })
  .post("/webhooks/:id/deliveries/:delivery_id/resend", requireScope("webhooks:write"), protectChange, async (c) => {
    const { id, delivery_id } = c.req.param();
    return act(c, `/webhooks/${id}/deliveries/${delivery_id}`, async () => {
      await resendDelivery(c.env, c.get("session")!.account.id, id, delivery_id);
      return "Re-sent: a new series of attempts has started.";
    });
  });
