// The one client of the account Durable Object (do/account-gate.ts): every caller reaches an account's
// windows, slots, in-flight places, quota and idempotency records through `accountGate`.
import type { AccountGate } from "../do/account-gate";
import type { IpRateLimit } from "../do/ip-rate-limit";
import type { Bindings } from "../env";

export const accountGate = (env: Bindings, accountId: string) =>
  (env.ACCOUNT_GATE as DurableObjectNamespace<AccountGate>).getByName(accountId);

/** The per-minute window of a caller without a valid key, by IP (do/ip-rate-limit.ts). */
export const ipWindow = (env: Bindings, ip: string) => (env.IP_RATE_LIMIT as DurableObjectNamespace<IpRateLimit>).getByName(ip);
