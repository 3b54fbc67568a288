// The create-key form of the account page (docs/dashboard.md#account): a name, scopes the session may
// grant, and an expiry no later than the session's own key's.
import type { Context } from "hono";
import { z } from "zod";
import type { Session } from "../../domain/sessions";
import { type Scope, scopeList } from "../../model/accounts";
import { fieldErrors, text } from "../../model/fields";
import type { DashboardEnv } from "../shared/context";
import { valuesOf } from "../shared/form";

const keySchema = z.strictObject({
  name: text(100).pipe(z.string().trim().min(1, "is required")),
  scopes: scopeList,
  expires_at: z.iso.date().optional(),
});

/** The key the form asks for, or its errors by field. */
export type KeyRequest = { name: string; scopes: Scope[]; expiresAt: string | null } | { errors: Record<string, string> };

const midnight = (date: string) => Date.parse(`${date}T00:00:00Z`);

/** Reads the create-key form for `session`: the schema, then what this session may grant. */
export async function keyRequest(c: Context<DashboardEnv>, session: Session, form: Record<string, string>): Promise<KeyRequest> {
  const scopes = await valuesOf(c, "scopes");
  const parsed = keySchema.safeParse({ name: form.name ?? "", scopes, ...(form.expires_at ? { expires_at: form.expires_at } : {}) });
  if (!parsed.success) return { errors: Object.fromEntries(fieldErrors(parsed.error).map((e) => [e.field.split(".")[0]!, e.message])) };
  const { name, expires_at } = parsed.data;
  const errors: Record<string, string> = {};
  if (parsed.data.scopes.some((s) => !session.row.scopes.includes(s))) errors.scopes = "your session cannot grant one of these scopes";
  if (expires_at && midnight(expires_at) <= Date.now()) errors.expires_at = "must be in the future";
  // A key issued by a session expires no later than the key the session was signed in with.
  const bound = session.keyExpiresAt;
  if (bound && expires_at && midnight(expires_at) > Date.parse(bound)) {
    errors.expires_at = `must be no later than the key you signed in with (it expires ${bound.slice(0, 10)})`;
  }
  if (Object.keys(errors).length) return { errors };
  const expiresAt = expires_at ? new Date(midnight(expires_at)).toISOString() : session.keyExpiresAt;
  return { name, scopes: parsed.data.scopes, expiresAt };
}
