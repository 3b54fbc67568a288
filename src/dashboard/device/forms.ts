// The device-login forms (docs/dashboard.md#device-login): the code typed in, and the decision on a
// pending request (the new key's name and scopes) with what keeps an approval from being granted.
import type { Context } from "hono";
import type { Session } from "../../domain/sessions";
import { isScope, type Scope, scopeList } from "../../model/accounts";
import type { DashboardEnv } from "../shared/context";
import { formOf, valuesOf } from "../shared/form";

/** The decision form as sent. */
export interface Decision {
  id: string;
  approve: boolean;
  /** The scopes ticked, as sent (`scopes`: those that are scopes at all). */
  asked: string[];
  scopes: Scope[];
  keyName: string;
  userCode: string;
}

export async function decisionOf(c: Context<DashboardEnv>): Promise<Decision> {
  const form = await formOf(c);
  const asked = await valuesOf(c, "scopes");
  return {
    id: form.id ?? "",
    approve: form.decision === "approve",
    asked,
    scopes: asked.filter(isScope),
    keyName: (form.key_name ?? "").trim().slice(0, 100),
    userCode: form.user_code ?? "",
  };
}

/** Why `session` may not approve this request as sent, in words, or null. */
export function approvalProblem(session: Session, d: Decision): string | null {
  if (!d.keyName) return "Give the new key a name.";
  if (!d.asked.length) return "Choose at least one scope.";
  if (d.asked.some((s) => !isScope(s) || !session.row.scopes.includes(s))) return "Your session cannot grant one of those scopes.";
  // The one rule for a list of scopes (model/accounts.ts): here, a scope ticked twice is refused.
  const listed = scopeList.safeParse(d.asked);
  if (!listed.success) return `The scope list ${listed.error.issues[0]!.message}.`;
  // The device's key never expires; a session of an expiring key must not outlive it through one.
  if (session.keyExpiresAt)
    return "You signed in with a key that expires, and a device login's key never does: sign in with a key without expiry or a sign-in link to approve it.";
  return null;
}
