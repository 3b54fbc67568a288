// What a dashboard request carries: what every request carries (surface/context.ts: its id and, for a
// signed-in person, `caller`, so the scope checks apply unchanged) plus the session itself.

import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import type { SurfaceVariables } from "../../surface/context";

export interface Flash {
  kind: "notice" | "error";
  text: string;
}

export interface DashboardVariables extends SurfaceVariables {
  /** The signed-in person's session, or null. */
  session: Session | null;
  /** A message left by the previous request (a redirect after an action). */
  flash: Flash | null;
  /** The double-submit token of forms shown before sign-in (sign-in, sign-in link). */
  preCsrf: string;
}

export interface DashboardEnv {
  Bindings: Bindings;
  Variables: DashboardVariables;
}
