// The Worker's bindings, described once, without importing any implementation: the Durable Object
// namespaces are typed by their one client module each (admission/account-gate.ts for the account and IP
// windows, runner/runner.ts for the containers, runner/dispatch.ts for the Dispatcher). Vars and secrets are strings here; config.ts parses them.

/**
 * A run message names a run; D1 is the source of truth. Without `granted` it asks the Dispatcher for a
 * place (a new or re-queued run); with it, the Dispatcher has given the run a place and it may start.
 */
export interface RunMessage {
  run_id: string;
  granted?: boolean;
  /** The run's account and places (parallel workers), so the consumer asks the Dispatcher without a
   * D1 read first; a message without them (sent by an older build) has them read from the run. */
  account_id?: string;
  places?: number;
}

/** A delivery message names the delivery to attempt. */
export interface DeliveryMessage {
  delivery_id: string;
}

export interface Bindings {
  DB: D1Database;
  FILES: R2Bucket;
  RUNS_QUEUE: Queue<RunMessage>;
  DELIVERIES_QUEUE: Queue<DeliveryMessage>;
  ACCOUNT_GATE: DurableObjectNamespace;
  IP_RATE_LIMIT: DurableObjectNamespace;
  GA_RUNNER: DurableObjectNamespace;
  /** The GA worker on 4 vCPUs, for runs with parallel fitness workers. */
  GA_RUNNER_WIDE: DurableObjectNamespace;
  DISPATCHER: DurableObjectNamespace;
  ADMIN_TOKEN?: string;
  RUN_TOKEN_SECRET?: string;
  RUNNER_URL?: string;
  REPORT_BASE_URL?: string;
  CPU_PRICE?: string;
  MEMORY_PRICE?: string;
  NEGATIVE_BALANCE_CAP?: string;
  PLATFORM_QUEUE_CAP?: string;
  /** Places (CPUs) for runs on the platform: a run takes one, or one per parallel fitness worker (container vCPUs, or the local GA worker's places). */
  RUN_CAPACITY?: string;
  WEBHOOK_ALLOW_PRIVATE?: string;
  /** DNS-over-HTTPS endpoint (JSON API) for webhook host checks; Cloudflare's by default. */
  DOH_URL?: string;
  RATE_LIMIT_KEY?: string;
  RATE_LIMIT_USER?: string;
  RATE_LIMIT_IP?: string;
  /** "true" enables the /__bench routes of `npm run bench`; never in production. */
  BENCH_ROUTES?: string;
  /** The webhook retry schedule, 5 comma-separated delays in seconds (local test suites only). */
  WEBHOOK_RETRY_DELAYS?: string;
}
