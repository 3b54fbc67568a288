// The webhook forms (docs/dashboard.md#webhooks): the create and edit form as the API's JSON body (so the
// same schema and the same field names), their errors by field, and the small forms of the tools.
import type { Context } from "hono";
import type { z } from "zod";
import { type ApiError, refusedFields } from "../../errors";
import { fieldErrors } from "../../model/fields";
import type { DashboardEnv } from "../shared/context";
import { valuesOf } from "../shared/form";

export type Errors = Record<string, string>;

/** The webhook form's values as the API's JSON body. */
export function webhookBody(form: Record<string, string>, events: string[]) {
  return { url: (form.url ?? "").trim(), events, description: form.description ?? "", is_active: form.is_active === "true" };
}

/** The event types ticked (a repeated field). */
export const eventsOf = (c: Context<DashboardEnv>) => valuesOf(c, "events");

/** The schema's errors by the form's field (an item of the events list is the events field). */
export const schemaErrors = (error: z.ZodError): Errors =>
  Object.fromEntries(fieldErrors(error).map((e) => [e.field.split(".")[0]!, e.message]));

/** A refusal of the form by field: the fields it names, or the URL it found unsafe; {} for a refusal of the whole form. */
export function refusalErrors(err: ApiError): Errors {
  const fields = refusedFields(err);
  if (fields) return Object.fromEntries(fields.map((f) => [f.field.split(".")[0]!, f.message]));
  if (err.code === "invalid_webhook_url") return { url: err.message };
  return {};
}

/** The Test form's event type: what the synthetic event imitates (webhook.test unless chosen). */
export const testTypeOf = (form: Record<string, string>) => form.event_type || "webhook.test";

/** The activate / deactivate form's choice. */
export const activeOf = (form: Record<string, string>) => form.is_active === "true";
