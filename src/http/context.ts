// What a request carries through the HTTP API: the Worker's bindings, what every request carries
// (surface/context.ts: its id and caller) and the API's own per-request variables.

import type { DeferredRate } from "../admission/rate-limit";
import type { Usage } from "../do/account-gate/object";
import type { Bindings } from "../env";
import type { SurfaceVariables } from "../surface/context";

/** How a route's per-minute count is taken (http/middleware/auth.ts countedBy); unset: up front. */
export type RateCount = "admission" | "usage";

export interface Variables extends SurfaceVariables {
  /** X-RateLimit-* of the window that applied to this request (not set for an admitted write: see deferredRate). */
  rateHeaders: Record<string, string>;
  /** An admitted write's per-minute count, taken by its admission call (admission/rate-limit.ts). */
  deferredRate: DeferredRate | null;
  /** The account's usage right after this request's count; set only on routes `countedBy("usage")`. */
  usage: Usage;
  /** The route's declared way of counting (set before the per-minute gate runs). */
  rateCount: RateCount | undefined;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
