// /api/v1/webhooks: list, create, get, update, delete, rotate-secret (docs/webhooks.md#registering, #webhook-object),
// and the delivery log and tools: deliveries, inspect, test, replay, resend (docs/webhooks.md#dashboard-tools).

import { Hono } from "hono";
import { notFound } from "../../errors";
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
import { deleteWebhook, getWebhook } from "../../storage/webhooks";
import { fireTest, inspectDelivery, replayDelivery, resendDelivery } from "../../webhooks/tools";
import { webhookView } from "../../webhooks/views";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { describe } from "../openapi/describe";
import { Delivery, DeliveryInspected, DeliveryQueued, list, Webhook, WebhookWithSecret } from "../validation/responses";
import { jsonBody, optionalJsonBody, query } from "../validation/validate";
import { testBody } from "../validation/webhooks";

export const webhooksRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({ operationId: "listWebhooks", tag: "Webhooks", summary: "List webhooks (without secrets)", success: { 200: list(Webhook) } }),
    requireScope("webhooks:read"),
    query(webhooksListQuery),
    async (c) => {
      const { rows, next, previous } = await webhooksPage(c.env, c.get("caller").accountId, c.req.valid("query"), c.req.url);
      return c.json({ results: rows.map((w) => webhookView(w)), next, previous });
    },
  )
  .post(
    "/",
    describe({
      operationId: "createWebhook",
      tag: "Webhooks",
      summary: "Register a webhook; the answer is the only one with its secret besides rotate-secret",
      success: { 201: WebhookWithSecret },
      errors: ["invalid_webhook_url", "webhook_limit_reached"],
    }),
    requireScope("webhooks:write"),
    jsonBody(createWebhookSchema),
    async (c) => {
      const row = await registerWebhook(c.env, c.get("caller").accountId, c.req.valid("json"));
      return c.json(webhookView(row, { withSecret: true }), 201);
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getWebhook",
      tag: "Webhooks",
      summary: "Get a webhook (without its secret)",
      success: { 200: Webhook },
      errors: ["not_found"],
    }),
    requireScope("webhooks:read"),
    async (c) => {
      const row = await getWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
      if (!row) throw notFound("webhook");
      return c.json(webhookView(row));
    },
  )
  .patch(
    "/:id",
    describe({
      operationId: "updateWebhook",
      tag: "Webhooks",
      summary: "Change a webhook's URL, events, active flag or description",
      success: { 200: Webhook },
      errors: ["not_found", "invalid_webhook_url"],
    }),
    requireScope("webhooks:write"),
    jsonBody(updateWebhookSchema),
    async (c) => {
      return c.json(webhookView(await changeWebhook(c.env, c.get("caller").accountId, c.req.param("id"), c.req.valid("json"))));
    },
  )
  .delete(
    "/:id",
    describe({ operationId: "deleteWebhook", tag: "Webhooks", summary: "Delete a webhook", success: { 204: null }, errors: ["not_found"] }),
    requireScope("webhooks:write"),
    async (c) => {
      if (!(await deleteWebhook(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id")))) throw notFound("webhook");
      return c.body(null, 204);
    },
  )
  .post(
    "/:id/rotate-secret",
    describe({
      operationId: "rotateWebhookSecret",
      tag: "Webhooks",
      summary: "Give a webhook a new signing secret",
      success: { 200: WebhookWithSecret },
      errors: ["not_found"],
    }),
    requireScope("webhooks:write"),
    async (c) => {
      return c.json(webhookView(await rotateWebhookSecret(c.env, c.get("caller").accountId, c.req.param("id")), { withSecret: true }));
    },
  )
  // The delivery log and the dashboard's tools, for scripts too (docs/webhooks.md#dashboard-tools).
  .get(
    "/:id/deliveries",
    describe({
      operationId: "listWebhookDeliveries",
      tag: "Webhooks",
      summary: "A webhook's delivery log, newest first, optionally by status",
      success: { 200: list(Delivery) },
      errors: ["not_found"],
    }),
    requireScope("webhooks:read"),
    query(deliveriesQuery),
    async (c) => {
      const q = c.req.valid("query");
      const { rows, next, previous } = await deliveriesPage(c.env, c.get("caller").accountId, c.req.param("id"), q, c.req.url);
      return c.json({ results: rows, next, previous });
    },
  )
  .get(
    "/:id/deliveries/:delivery_id",
    describe({
      operationId: "getWebhookDelivery",
      tag: "Webhooks",
      summary: "Inspect a delivery: its payload and every attempt's request and response",
      success: { 200: DeliveryInspected },
      errors: ["not_found"],
    }),
    requireScope("webhooks:read"),
    async (c) => c.json(await inspectDelivery(c.env, c.get("caller").accountId, c.req.param("id"), c.req.param("delivery_id"))),
  )
  .post(
    "/:id/test",
    describe({
      operationId: "testWebhook",
      tag: "Webhooks",
      summary: "Send a synthetic `webhook.test` event (a sample of `event_type`'s data) through the delivery pipeline",
      description:
        "At most 10 per minute per account (429 `rate_limited` with Retry-After past that). The webhook must be active (docs/webhooks.md#dashboard-tools).",
      success: { 202: DeliveryQueued },
      errors: ["not_found", "invalid_state"],
    }),
    requireScope("webhooks:write"),
    optionalJsonBody(testBody),
    async (c) => c.json(await fireTest(c.env, c.get("caller").accountId, c.req.param("id"), c.req.valid("json").event_type), 202),
  )
  .post(
    "/:id/deliveries/:delivery_id/replay",
    describe({
      operationId: "replayWebhookDelivery",
      tag: "Webhooks",
      summary: "Replay a delivery: its event's type and data as a new event (fresh event id, signature and occurred_at)",
      description:
        "At most 10 per minute per account (429 `rate_limited` with Retry-After past that). The webhook must be active (docs/webhooks.md#dashboard-tools).",
      success: { 202: DeliveryQueued },
      errors: ["not_found", "invalid_state"],
    }),
    requireScope("webhooks:write"),
    async (c) => c.json(await replayDelivery(c.env, c.get("caller").accountId, c.req.param("id"), c.req.param("delivery_id")), 202),
  )
  .post(
    "/:id/deliveries/:delivery_id/resend",
    describe({
      operationId: "resendWebhookDelivery",
      tag: "Webhooks",
      summary: "Re-send a failed delivery: the same event (same event id and body) with a new series of attempts",
      description:
        "Only a delivery marked `failed` (409 `invalid_state` otherwise); the webhook must be active (docs/webhooks.md#dashboard-tools).",
      success: { 202: DeliveryQueued },
      errors: ["not_found", "invalid_state"],
    }),
    requireScope("webhooks:write"),
    async (c) => c.json(await resendDelivery(c.env, c.get("caller").accountId, c.req.param("id"), c.req.param("delivery_id")), 202),
  );
