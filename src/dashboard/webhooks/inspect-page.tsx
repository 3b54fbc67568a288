/** @jsxImportSource hono/jsx */
// Inspect (docs/webhooks.md#dashboard-tools): a delivery's facts, its exact payload, and every attempt
// with its request and response.
import type { Session } from "../../domain/sessions";
import type { WebhookRow } from "../../storage/webhooks";
import type { inspectDelivery } from "../../webhooks/tools";
import { ActionButton, Facts, Layout, Status, Time } from "../shared/layout";

type Inspected = Awaited<ReturnType<typeof inspectDelivery>>;

const headerLines = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\n");

function Attempt(p: { a: Inspected["attempts"][number] }) {
  const { a } = p;
  return (
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
        <pre class="logs">{headerLines(a.request_headers)}</pre>
      </details>
      <details>
        <summary>Response headers</summary>
        <pre class="logs">{headerLines(a.response_headers ?? {}) || "—"}</pre>
      </details>
      <h4>Response body (first 8 KB)</h4>
      <pre class="logs">{a.response_body ?? "—"}</pre>
    </section>
  );
}

export function InspectPage(p: { session: Session; w: WebhookRow; d: Inspected }) {
  const { d, w } = p;
  const base = `/webhooks/${w.id}/deliveries/${d.id}`;
  let pretty = d.payload;
  try {
    pretty = JSON.stringify(JSON.parse(d.payload), null, 2);
  } catch {
    // shown as sent
  }
  const reason = "The webhook is inactive: activate it to replay or re-send a delivery.";
  return (
    <Layout title="Delivery" session={p.session} section="webhooks">
      <p>
        <a href={`/webhooks/${w.id}`}>← Back to the webhook</a>
      </p>
      {/* While the delivery is pending, the page refreshes itself (the client script). */}
      <div id="delivery" data-refresh data-pending={d.status === "pending" ? "true" : undefined}>
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
          {w.isActive ? (
            <>
              <ActionButton session={p.session} action={`${base}/replay`} label="Replay" />
              {d.status === "failed" && <ActionButton session={p.session} action={`${base}/resend`} label="Re-send" />}
            </>
          ) : (
            <>
              <button type="button" disabled title={reason} aria-describedby="inactive-reason">
                Replay
              </button>
              {d.status === "failed" && (
                <button type="button" disabled title={reason} aria-describedby="inactive-reason">
                  Re-send
                </button>
              )}
              <p class="hint" id="inactive-reason">
                {reason}
              </p>
            </>
          )}
        </div>
        <h2>Payload</h2>
        <pre class="logs" tabindex={0}>
          {pretty}
        </pre>
        <h2>Attempts</h2>
        {d.attempts.length === 0 && <p class="empty">No attempt yet.</p>}
        {d.attempts.map((a) => (
          <Attempt a={a} />
        ))}
      </div>
    </Layout>
  );
}
