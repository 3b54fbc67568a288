/** @jsxImportSource hono/jsx */
// Webhooks in the dashboard (docs/dashboard.md#webhooks, docs/webhooks.md#dashboard-tools): create (the
// secret shown once, with a copy button), edit, activate / deactivate, rotate, delete; the delivery log
// with status filters; Test, Replay, Inspect and re-send of a failed delivery. The engine is
// webhooks/tools.ts, the same as the REST endpoints', limits included.
import { type Context, Hono } from "hono";
import { ApiError, notFound } from "../../errors";
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
} from "../../operations/webhooks";
import { getDb } from "../../storage/db";
import { lastResponses } from "../../storage/deliveries";
import { deleteWebhook, getWebhook, listWebhooks } from "../../storage/webhooks";
import { requireScope } from "../../surface/caller";
import { fireTest, inspectDelivery, replayDelivery, resendDelivery } from "../../webhooks/tools";
import { act, refusalText } from "../shared/actions";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { listQueryOf } from "../shared/lists";
import { flash, protectChange, requireSession } from "../shared/session";
import { DetailPage } from "./detail-page";
import { activeOf, type Errors, eventsOf, refusalErrors, schemaErrors, testTypeOf, webhookBody } from "./forms";
import { InspectPage } from "./inspect-page";
import { ListPage } from "./list-page";

type Ctx = Context<DashboardEnv>;

/** A webhook's page: its facts, tools and delivery log (with a secret shown once after a create or a rotation). */
async function detail(
  c: Ctx,
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
  const responses = await lastResponses(
    getDb(c.env.DB),
    log.rows.map((d) => d.id),
  );
  return c.html(
    <DetailPage
      session={session}
      w={w}
      deliveries={log.rows}
      responses={responses}
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

async function list(c: Ctx) {
  const session = c.get("session")!;
  const { query } = listQueryOf(c, webhooksListQuery);
  const page = await webhooksPage(c.env, session.account.id, query ?? { page_size: 20, cursor: undefined }, c.req.url);
  const values = { events: ["submission.succeeded", "submission.failed"] };
  return c.html(<ListPage session={session} rows={page.rows} next={page.next} previous={page.previous} errors={{}} values={values} />);
}

/** The add form sent: the API's schema, then the registration; a refusal shows the list and the form again. */
async function create(c: Ctx) {
  const session = c.get("session")!;
  const body = webhookBody(await formOf(c), await eventsOf(c));
  const again = async (errors: Errors, formError?: string) => {
    const page = await listWebhooks(getDb(c.env.DB), session.account.id, 20);
    return c.html(
      <ListPage session={session} rows={page.rows} next={null} previous={null} errors={errors} values={body} formError={formError} />,
      422,
    );
  };
  const parsed = createWebhookSchema.safeParse(body);
  if (!parsed.success) return again(schemaErrors(parsed.error));
  try {
    const row = await registerWebhook(c.env, session.account.id, parsed.data);
    return detail(c, row.id, { secret: row.secret, secretWhat: "Webhook created. This is its signing secret." });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const errors = refusalErrors(err);
    return again(errors, Object.keys(errors).length ? undefined : refusalText(err));
  }
}

/** The edit form sent: the API's schema, then the change; a refusal shows the webhook's page with the form's errors. */
async function edit(c: Ctx) {
  const id = c.req.param("id")!;
  const parsed = updateWebhookSchema.safeParse(webhookBody(await formOf(c), await eventsOf(c)));
  if (!parsed.success) return detail(c, id, { errors: schemaErrors(parsed.error) }, 422);
  try {
    await changeWebhook(c.env, c.get("session")!.account.id, id, parsed.data);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.code === "not_found") throw err;
    const errors = refusalErrors(err);
    return detail(c, id, { errors, formError: Object.keys(errors).length ? undefined : refusalText(err) }, 422);
  }
  flash(c, "notice", "Saved.");
  return c.redirect(`/webhooks/${id}`, 303);
}

export const webhookRoutes = new Hono<DashboardEnv>()
  .use("/webhooks", requireSession)
  .use("/webhooks/*", requireSession)
  .get("/webhooks", requireScope("webhooks:read"), list)
  .post("/webhooks", requireScope("webhooks:write"), protectChange, create)
  .get("/webhooks/:id", requireScope("webhooks:read"), (c) => detail(c, c.req.param("id")))
  .post("/webhooks/:id", requireScope("webhooks:write"), protectChange, edit)
  .post("/webhooks/:id/active", requireScope("webhooks:write"), protectChange, async (c) => {
    const active = activeOf(await formOf(c));
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
    const type = testTypeOf(await formOf(c));
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
    const d = await inspectDelivery(c.env, session.account.id, w.id, c.req.param("delivery_id"));
    return c.html(<InspectPage session={session} w={w} d={d} />);
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
