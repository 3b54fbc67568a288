// Webhooks as operations shared by the REST API and the dashboard: their bodies and list queries, the
// registration (the URL check, the per-account limit, the secret shown once: docs/webhooks.md#registering),
// and the pages of their list and of a webhook's delivery log (docs/webhooks.md#dashboard-tools).
import { z } from "zod";
import type { Bindings } from "../env";
import { ApiError, notFound } from "../errors";
import { newId, nowIso } from "../lib/ids";
import { DELIVERY_STATUSES, type DeliveryStatus, EVENT_TYPES, isDeliveryStatus } from "../model/events";
import { text } from "../model/fields";
import { getDb } from "../storage/db";
import {
  getWebhook,
  insertWebhookWithinLimit,
  listWebhooks,
  MAX_WEBHOOKS_PER_ACCOUNT,
  updateWebhook,
  type WebhookRow,
} from "../storage/webhooks";
import { getResolver } from "../webhooks/resolver";
import { newSecret } from "../webhooks/signing";
import { deliveryLog } from "../webhooks/tools";
import { checkWebhookUrl, policyOf } from "../webhooks/url-safety";
import type { deliveryView } from "../webhooks/views";
import { type LinkedPage, last, linked, openCursor, paged, paging } from "./paging";

export const webhookFields = {
  url: z.string().min(1).max(2048),
  events: z
    .array(z.enum(EVENT_TYPES, `must be one of: ${EVENT_TYPES.join(", ")}`))
    .min(1, "must name at least one event type")
    .transform((list) => [...new Set(list)]),
  is_active: z.boolean(),
  description: text(200),
};

export const createWebhookSchema = z.strictObject({
  url: webhookFields.url,
  events: webhookFields.events,
  is_active: webhookFields.is_active.default(true),
  description: webhookFields.description.default(""),
});

export const updateWebhookSchema = z.strictObject({
  url: webhookFields.url.optional(),
  events: webhookFields.events.optional(),
  is_active: webhookFields.is_active.optional(),
  description: webhookFields.description.optional(),
});

export const webhooksListQuery = paged(z.strictObject({ ...paging }));

/** The delivery log's query: paging and `status` (comma-separated delivery statuses). */
export const deliveriesQuery = paged(
  z.strictObject({
    ...paging,
    status: last(
      z
        .string()
        .transform((csv) => csv.split(",").map((s) => s.trim()))
        .refine(
          (list): list is DeliveryStatus[] => list.every(isDeliveryStatus),
          `must be a comma-separated list of: ${DELIVERY_STATUSES.join(", ")}`,
        ),
    ).optional(),
  }),
);

export type WebhooksListQuery = z.output<typeof webhooksListQuery>;
export type DeliveriesQuery = z.output<typeof deliveriesQuery>;

/**
 * 422 invalid_webhook_url (with details.reason and details.field) unless the URL holds no control
 * character, is https and resolves only to public addresses; the URL to store is the one checked, in
 * its normalised form (WHATWG serialisation: what is shown is what is called, docs/webhooks.md#url-rules).
 */
export async function safeUrl(env: Bindings, raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, getResolver(env), policyOf(env));
  if (!check.ok) {
    const { reason, address, range } = check;
    throw new ApiError("invalid_webhook_url", check.message, {
      reason,
      field: "url",
      ...(address ? { address } : {}),
      ...(range ? { range } : {}),
    });
  }
  return check.url.href;
}

/** Registers a webhook (its secret is in the returned row: show it once). */
export async function registerWebhook(env: Bindings, accountId: string, body: z.output<typeof createWebhookSchema>): Promise<WebhookRow> {
  const url = await safeUrl(env, body.url);
  const now = nowIso();
  const row = {
    id: newId(),
    accountId,
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
  if (!(await insertWebhookWithinLimit(getDb(env.DB), row))) {
    throw new ApiError("webhook_limit_reached", `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`, {
      limit: MAX_WEBHOOKS_PER_ACCOUNT,
    });
  }
  return row;
}

/** Changes the fields given (a new URL is checked again). */
export async function changeWebhook(
  env: Bindings,
  accountId: string,
  id: string,
  body: z.output<typeof updateWebhookSchema>,
): Promise<WebhookRow> {
  const db = getDb(env.DB);
  const existing = await getWebhook(db, accountId, id);
  if (!existing) throw notFound("webhook");
  const changes = {
    ...(body.url !== undefined ? { url: await safeUrl(env, body.url) } : {}),
    ...(body.events !== undefined ? { events: body.events } : {}),
    ...(body.is_active !== undefined ? { isActive: body.is_active } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
  };
  const row = await updateWebhook(db, accountId, existing.id, changes, nowIso());
  if (!row) throw notFound("webhook");
  return row;
}

/** A new secret; the old one stops working at once. */
export async function rotateWebhookSecret(env: Bindings, accountId: string, id: string): Promise<WebhookRow> {
  const row = await updateWebhook(getDb(env.DB), accountId, id, { secret: newSecret() }, nowIso());
  if (!row) throw notFound("webhook");
  return row;
}

/** A page of the account's webhooks, newest first, with its links (the list at `url`). */
export async function webhooksPage(env: Bindings, accountId: string, q: WebhooksListQuery, url: string): Promise<LinkedPage<WebhookRow>> {
  const cursor = await openCursor(env, accountId, q.cursor);
  return linked(env, accountId, url, await listWebhooks(getDb(env.DB), accountId, q.page_size, cursor));
}

/** A page of a webhook's delivery log as `q` asks, with its links (the log at `url`). */
export async function deliveriesPage(
  env: Bindings,
  accountId: string,
  webhookId: string,
  q: DeliveriesQuery,
  url: string,
): Promise<LinkedPage<ReturnType<typeof deliveryView>>> {
  const cursor = await openCursor(env, accountId, q.cursor);
  return linked(env, accountId, url, await deliveryLog(env, accountId, webhookId, { statuses: q.status, pageSize: q.page_size, cursor }));
}
