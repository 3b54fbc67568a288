// The one client of the account Durable Object (object.ts): every caller reaches an account's windows,
// slots, in-flight places, quota and idempotency records through `accountGate`.
import type { Bindings } from "../../env";

export const accountGate = (env: Bindings, accountId: string) => env.ACCOUNT_GATE.getByName(accountId);
