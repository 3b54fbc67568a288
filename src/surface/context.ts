// What every request carries, whichever adapter serves it (the API, the dashboard): its id and, once
// known, its caller — an API key, or a dashboard session acting with its key's scopes.
import type { Bindings } from "../env";
import type { Scope } from "../model/accounts";
import type { AccountRow } from "../storage/accounts";

export interface Caller {
  accountId: string;
  keyId: string;
  keyPrefix: string;
  scopes: Scope[];
  /** The account row as read with the key (plan, overrides, balances) at the start of the request. */
  account: AccountRow;
  /** Whether `last_used_at` is due an update (it is written at most once a minute). */
  touch: boolean;
}

export interface SurfaceVariables {
  requestId: string;
  caller: Caller;
}

export interface SurfaceEnv {
  Bindings: Bindings;
  Variables: SurfaceVariables;
}
