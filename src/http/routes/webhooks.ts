// /api/v1/webhooks: list, create, get, update, delete, rotate-secret (docs/webhooks.md#registering, #webhook-object),
// and the delivery log and tools: deliveries, inspect, test, replay, resend (docs/webhooks.md#dashboard-tools).
import { Hono } from "hono";
import type { AppEnv } from "../context";
import { notFound } from "../../errors";
import { getDb } from "../../storage/db";
import { deleteWebhook, getWebhook, listWebhooks } from "../../storage/webhooks";
import { webhookView } from "../../webhooks/views";
import { deliveryLog, fireTest, inspectDelivery, replayDelivery, resendDelivery, webhookDelivery } from "../../webhooks/tools";
import { requireScope } from "../middleware/auth";
import { changeWebhook, registerWebhook, rotateWebhookSecret } from "../operations/webhooks";
import { openCursor, pageLinks } from "../validation/list-query";
import { jsonBody, optionalJsonBody, query } from "../validation/validate";
import { createWebhookSchema, deliveriesQuery, testBody, updateWebhookSchema, webhooksListQuery } from "../validation/webhooks";

export const webhooksRoutes = new Hono<AppEnv>()
  .get("/", requireScope("webhooks:read"), query(webhooksListQuery), async (c) => {
    const q = c.req.valid("query");
    const accountId = c.get("caller").accountId;
    const page = await listWebhooks(getDb(c.env.DB), accountId, q.page_size, await openCursor(c.env, accountId, q.cursor));
    return c.json({
      results: page.rows.map((w) => webhookView(w)),
      ...(await pageLinks(c, page)),
    });
  })
  .post("/", requireScope("webhooks:write"), jsonBody(createWebhookSchema), async (c) => {
    const row = await registerWebhook(c.env, c.get("caller").accountId, c.req.valid("json"));
    return c.json(webhookView(row, { withSecret: true }), 201);
  })
  .get("/:id", requireScope("webhooks:read"), async (c) => {
    const row = await getWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!row) throw notFound("webhook");
    return c.json(webhookView(row));
  })
  .patch("/:id", requireScope("webhooks:write"), jsonBody(updateWebhookSchema), async (c) => {
    return c.json(webhookView(await changeWebhook(c.env, c.get("caller").accountId, c.req.param("id"), c.req.valid("json"))));
  })
  .delete("/:id", requireScope("webhooks:write"), async (c) => {
    if (!(await deleteWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id")))) throw notFound("webhook");
    return c.body(null, 204);
  })
  .post("/:id/rotate-secret", requireScope("webhooks:write"), async (c) => {
    return c.json(webhookView(await rotateWebhookSecret(c.env, c.get("caller").accountId, c.req.param("id")), { withSecret: true }));
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
