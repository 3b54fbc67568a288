// Webhook registration as operations shared by the REST API and the dashboard: the URL check, the
// per-account limit, the secret shown once (docs/webhooks.md#registering).
import type { z } from "zod";
import type { Bindings } from "../../env";
import { ApiError, notFound } from "../../errors";
import { newId, nowIso } from "../../lib/ids";
import { getDb } from "../../storage/db";
import { getWebhook, insertWebhookWithinLimit, MAX_WEBHOOKS_PER_ACCOUNT, updateWebhook, type WebhookRow } from "../../storage/webhooks";
import { getResolver } from "../../webhooks/resolver";
import { newSecret } from "../../webhooks/signing";
import { checkWebhookUrl, policyOf } from "../../webhooks/url-safety";
import type { createWebhookSchema, updateWebhookSchema } from "../validation/webhooks";

/** 422 invalid_webhook_url (with details.reason) unless the URL is https and resolves only to public addresses. */
export async function safeUrl(env: Bindings, raw: string): Promise<string> {
  const check = await checkWebhookUrl(raw, getResolver(env), policyOf(env));
  if (!check.ok) {
    const { reason, address, range } = check;
    throw new ApiError("invalid_webhook_url", check.message, { reason, ...(address ? { address } : {}), ...(range ? { range } : {}) });
  }
  return raw;
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
