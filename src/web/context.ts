// What a dashboard request carries: the API's request variables (a signed-in person's session also
// sets `caller`, so the API's scope checks and list helpers apply unchanged) plus the session itself.

import type { Session } from "../domain/sessions";
import type { Bindings } from "../env";
import type { Variables } from "../http/context";

export interface Flash {
  kind: "notice" | "error";
  text: string;
}

export interface WebVariables extends Variables {
  /** The signed-in person's session, or null. */
  session: Session | null;
  /** A message left by the previous request (a redirect after an action). */
  flash: Flash | null;
  /** The double-submit token of forms shown before sign-in (sign-in, sign-in link). */
  preCsrf: string;
}

export interface WebEnv {
  Bindings: Bindings;
  Variables: WebVariables;
}
