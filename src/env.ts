// Types of the Worker's bindings and of the per-request context variables.
import type { AccountGate, Usage } from "./do/account-gate";
import type { AccountRow } from "./storage/accounts";
import type { IpRateLimit } from "./do/ip-rate-limit";
import type { DeferredRate } from "./gates/rate-limit";
import type { GaRunner } from "./runner/container-runner";
import type { RunMessage } from "./queues/messages";

export interface Bindings {
  DB: D1Database;
  FILES: R2Bucket;
  RUNS_QUEUE: Queue<RunMessage>;
  DELIVERIES_QUEUE: Queue<{ delivery_id: string }>;
  ACCOUNT_GATE: DurableObjectNamespace<AccountGate>;
  IP_RATE_LIMIT: DurableObjectNamespace<IpRateLimit>;
  GA_RUNNER: DurableObjectNamespace<GaRunner>;
  ADMIN_TOKEN?: string;
  RUN_TOKEN_SECRET?: string;
  RUNNER_URL?: string;
  REPORT_BASE_URL?: string;
  CPU_PRICE?: string;
  MEMORY_PRICE?: string;
  NEGATIVE_BALANCE_CAP?: string;
  PLATFORM_QUEUE_CAP?: string;
  WEBHOOK_ALLOW_PRIVATE?: string;
  /** DNS-over-HTTPS endpoint (JSON API) for webhook host checks; Cloudflare's by default. */
  DOH_URL?: string;
  RATE_LIMIT_KEY?: string;
  RATE_LIMIT_USER?: string;
  RATE_LIMIT_IP?: string;
  /** "true" enables the /__bench routes of `npm run bench`; never in production. */
  BENCH_ROUTES?: string;
}

export interface Caller {
  accountId: string;
  keyId: string;
  keyPrefix: string;
  scopes: string[];
  /** The account row as read with the key (plan, overrides, balances) at the start of the request. */
  account: AccountRow;
  /** Whether `last_used_at` is due an update (it is written at most once a minute). */
  touch: boolean;
}

export interface Variables {
  requestId: string;
  caller: Caller;
  /** X-RateLimit-* of the window that applied to this request (not set for an admitted write: see deferredRate). */
  rateHeaders: Record<string, string>;
  /** An admitted write's per-minute count, taken by its admission call (gates/rate-limit.ts). */
  deferredRate: DeferredRate | null;
  /** The account's usage right after this request's count; set only on routes marked `withUsage`. */
  usage: Usage;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
