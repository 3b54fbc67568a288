// /api/v1/webhooks: list, create, get, update, delete, rotate-secret (docs/webhooks.md#registering, #webhook-object).
import { Hono } from "hono";
import { z } from "zod";
import type { Bindings } from "../../env";
import type { AppEnv } from "../context";
import { ApiError, notFound } from "../../errors";
import { newId, nowIso } from "../../lib/ids";
import { getDb } from "../../storage/db";
import { deleteWebhook, getWebhook, insertWebhookWithinLimit, listWebhooks, MAX_WEBHOOKS_PER_ACCOUNT, updateWebhook } from "../../storage/webhooks";
import { EVENT_TYPES } from "../../events/payloads";
import { getResolver } from "../../webhooks/resolver";
import { newSecret } from "../../webhooks/signing";
import { checkWebhookUrl, policyOf } from "../../webhooks/url-safety";
import { webhookView } from "../../webhooks/views";
import { deliveryLog, fireTest, inspectDelivery, replayDelivery, resendDelivery, webhookDelivery } from "../../webhooks/tools";
import { requireScope } from "../middleware/auth";
import { last, openCursor, paged, pageLinks, paging } from "../validation/list-query";
import { jsonBody, optionalJsonBody, query, text } from "../validation/validate";

const fields = {
  url: z.string().min(1).max(2048),
  events: z
    .array(z.enum(EVENT_TYPES, `must be one of: ${EVENT_TYPES.join(", ")}`))
    .min(1, "must name at least one event type")
    .transform((list) => [...new Set(list)]),
  is_active: z.boolean(),
  description: text(200),
};

const createSchema = z.strictObject({
  url: fields.url,
  events: fields.events,
  is_active: fields.is_active.default(true),
  description: fields.description.default(""),
});

const updateSchema = z.strictObject({
  url: fields.url.optional(),
  events: fields.events.optional(),
  is_active: fields.is_active.optional(),
  description: fields.description.optional(),
});

const listQuery = paged(z.strictObject({ ...paging }));

const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
/** The delivery log's query: paging and `status` (comma-separated delivery statuses). */
export const deliveriesQuery = paged(
  z.strictObject({
    ...paging,
    status: last(
      z
        .string()
        .transform((csv) => csv.split(",").map((s) => s.trim()))
        .refine((list) => list.every((s) => (DELIVERY_STATUSES as readonly string[]).includes(s)), `must be a comma-separated list of: ${DELIVERY_STATUSES.join(", ")}`)
        .transform((list) => list as (typeof DELIVERY_STATUSES)[number][]),
    ).optional(),
  }),
);

/** The body of Test: which type the synthetic event imitates (webhook.test by default). */
export const testBody = z.strictObject({ event_type: z.string().max(100).default("webhook.test") });

/** 422 invalid_webhook_url (with details.reason) unless the URL is https and resolves only to public addresses. */
async function safeUrl(env: Bindings, raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, getResolver(env), policyOf(env));
  if (!check.ok) {
    const { reason, address, range } = check;
    throw new ApiError("invalid_webhook_url", check.message, { reason, ...(address ? { address } : {}), ...(range ? { range } : {}) });
  }
  return raw;
}

export const webhooksRoutes = new Hono<AppEnv>()
  .get("/", requireScope("webhooks:read"), query(listQuery), async (c) => {
    const q = c.req.valid("query");
    const accountId = c.get("caller").accountId;
    const page = await listWebhooks(getDb(c.env.DB), accountId, q.page_size, await openCursor(c.env, accountId, q.cursor));
    return c.json({
      results: page.rows.map((w) => webhookView(w)),
      ...(await pageLinks(c, page)),
    });
  })
  .post("/", requireScope("webhooks:write"), jsonBody(createSchema), async (c) => {
    const body = c.req.valid("json");
    const url = await safeUrl(c.env, body.url);
    const db = getDb(c.env.DB);
    const now = nowIso();
    const row = {
      id: newId(),
      accountId: c.get("caller").accountId,
      url,
      events: body.events,
      isActive: body.is_active,
      description: body.description,
      secret: newSecret(),
      lastDeliveryStatus: "",
      lastDeliveryAt: null,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await insertWebhookWithinLimit(db, row))) {
      throw new ApiError("webhook_limit_reached", `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`, {
        limit: MAX_WEBHOOKS_PER_ACCOUNT,
      });
    }
    return c.json(webhookView(row, { withSecret: true }), 201);
  })
  .get("/:id", requireScope("webhooks:read"), async (c) => {
    const row = await getWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row));
  })
  .patch("/:id", requireScope("webhooks:write"), jsonBody(updateSchema), async (c) => {
    const db = getDb(c.env.DB);
    const accountId = c.get("caller").accountId;
    const existing = await getWebhook(db, accountId, c.req.param("id"));
    if (!existing) throw notFound("webhook");
    const body = c.req.valid("json");
    const changes = {
      ...(body.url !== undefined ? { url: await safeUrl(c.env, body.url) } : {}),
      ...(body.events !== undefined ? { events: body.events } : {}),
      ...(body.is_active !== undefined ? { isActive: body.is_active } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
    };
    const row = await updateWebhook(db, accountId, existing.id, changes, nowIso());
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row));
  })
  .delete("/:id", requireScope("webhooks:write"), async (c) => {
    if (!(await deleteWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id")))) throw notFound("webhook");
    return c.body(null, 204);
  })
  .post("/:id/rotate-secret", requireScope("webhooks:write"), async (c) => {
    const row = await updateWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"), { secret: newSecret() }, nowIso());
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row, { withSecret: true }));
  })
  // The delivery log and the dashboard's tools, for scripts too (docs/webhooks.md#dashboard-tools).
  .get("/:id/deliveries", requireScope("webhooks:read"), query(deliveriesQuery), async (c) => {
    const q = c.req.valid("query");
    const accountId = c.get("caller").accountId;
    const page = await deliveryLog(c.env, accountId, c.req.param("id"), { statuses: q.status, pageSize: q.page_size, cursor: await openCursor(c.env, accountId, q.cursor) });
    return c.json({ results: page.rows, ...(await pageLinks(c, page)) });
  })
  .get("/:id/deliveries/:delivery_id", requireScope("webhooks:read"), async (c) => {
    const accountId = c.get("caller").accountId;
    const delivery = await webhookDelivery(c.env, accountId, c.req.param("id"), c.req.param("delivery_id"));
    return c.json(await inspectDelivery(c.env, accountId, delivery.id));
  })
  .post("/:id/test", requireScope("webhooks:write"), optionalJsonBody(testBody), async (c) => {
    return c.json(await fireTest(c.env, c.get("caller").accountId, c.req.param("id"), c.req.valid("json").event_type), 202);
  })
  .post("/:id/deliveries/:delivery_id/replay", requireScope("webhooks:write"), async (c) => {
    const accountId = c.get("caller").accountId;
    const delivery = await webhookDelivery(c.env, accountId, c.req.param("id"), c.req.param("delivery_id"));
    return c.json(await replayDelivery(c.env, accountId, delivery.id), 202);
  })
  .post("/:id/deliveries/:delivery_id/resend", requireScope("webhooks:write"), async (c) => {
    const accountId = c.get("caller").accountId;
    const delivery = await webhookDelivery(c.env, accountId, c.req.param("id"), c.req.param("delivery_id"));
    return c.json(await resendDelivery(c.env, accountId, delivery.id), 202);
  });
