// The bodies and queries of /api/v1/webhooks (docs/webhooks.md#registering, #dashboard-tools), shared
// with the dashboard's webhook forms.
import { z } from "zod";
import { DELIVERY_STATUSES, EVENT_TYPES } from "../../model/events";
import { text } from "../../model/fields";
import { last, paged, paging } from "./list-query";

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
          (list) => list.every((s) => (DELIVERY_STATUSES as readonly string[]).includes(s)),
          `must be a comma-separated list of: ${DELIVERY_STATUSES.join(", ")}`,
        )
        .transform((list) => list as (typeof DELIVERY_STATUSES)[number][]),
    ).optional(),
  }),
);

/** The body of Test: which type the synthetic event imitates (webhook.test by default). */
export const testBody = z.strictObject({ event_type: z.string().max(100).default("webhook.test") });
