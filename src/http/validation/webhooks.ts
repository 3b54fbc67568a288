// The body of the Test tool of /api/v1/webhooks (docs/webhooks.md#dashboard-tools); the other bodies and
// queries of webhooks are the operations' (operations/webhooks.ts), shared with the dashboard's forms.
import { z } from "zod";

/** The body of Test: which type the synthetic event imitates (webhook.test by default). */
export const testBody = z.strictObject({ event_type: z.string().max(100).default("webhook.test") });
