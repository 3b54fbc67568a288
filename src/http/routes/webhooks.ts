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
import { requireScope } from "../middleware/auth";
import { openCursor, paged, pageLinks, paging } from "../validation/list-query";
import { jsonBody, query, text } from "../validation/validate";
import { describe } from "../openapi/describe";
import { list, Webhook, WebhookWithSecret } from "../validation/responses";

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
  .get("/", describe({ operationId: "listWebhooks", tag: "Webhooks", summary: "List webhooks (without secrets)", success: { 200: list(Webhook) } }), requireScope("webhooks:read"), query(listQuery), async (c) => {
    const q = c.req.valid("query");
    const accountId = c.get("caller").accountId;
    const page = await listWebhooks(getDb(c.env.DB), accountId, q.page_size, await openCursor(c.env, accountId, q.cursor));
    return c.json({
      results: page.rows.map((w) => webhookView(w)),
      ...(await pageLinks(c, page)),
    });
  })
  .post("/", describe({ operationId: "createWebhook", tag: "Webhooks", summary: "Register a webhook; the answer is the only one with its secret besides rotate-secret", success: { 201: WebhookWithSecret }, errors: ["invalid_webhook_url", "webhook_limit_reached"] }), requireScope("webhooks:write"), jsonBody(createSchema), async (c) => {
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
  .get("/:id", describe({ operationId: "getWebhook", tag: "Webhooks", summary: "Get a webhook (without its secret)", success: { 200: Webhook }, errors: ["not_found"] }), requireScope("webhooks:read"), async (c) => {
    const row = await getWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row));
  })
  .patch("/:id", describe({ operationId: "updateWebhook", tag: "Webhooks", summary: "Change a webhook's URL, events, active flag or description", success: { 200: Webhook }, errors: ["not_found", "invalid_webhook_url"] }), requireScope("webhooks:write"), jsonBody(updateSchema), async (c) => {
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
  .delete("/:id", describe({ operationId: "deleteWebhook", tag: "Webhooks", summary: "Delete a webhook", success: { 204: null }, errors: ["not_found"] }), requireScope("webhooks:write"), async (c) => {
    if (!(await deleteWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id")))) throw notFound("webhook");
    return c.body(null, 204);
  })
  .post("/:id/rotate-secret", describe({ operationId: "rotateWebhookSecret", tag: "Webhooks", summary: "Give a webhook a new signing secret", success: { 200: WebhookWithSecret }, errors: ["not_found"] }), requireScope("webhooks:write"), async (c) => {
    const row = await updateWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"), { secret: newSecret() }, nowIso());
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row, { withSecret: true }));
  });
