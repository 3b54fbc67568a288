// The Worker's vars and secrets, parsed once per environment object by one schema, with the defaults
// wrangler.toml states (README "Configuration"). No other module reads a var's string.
import { z } from "zod";

/** Cloudflare's DNS-over-HTTPS JSON endpoint: the webhook host checks' resolver unless DOH_URL is set. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

/** An optional var: unset and "" mean the default. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema.optional());
const decimal = (fallback: string) =>
  optional(z.string().regex(/^\d+(\.\d+)?$/, "must be a non-negative decimal number"))
    .default(fallback)
    .transform(Number);
const count = (fallback: number) =>
  optional(z.string().regex(/^[1-9]\d*$/, "must be a positive whole number")).transform((v) => (v === undefined ? fallback : Number(v)));
const flag = optional(z.enum(["true", "false"])).transform((v) => v === "true");
const url = optional(z.url({ protocol: /^https?$/ }));
const secret = optional(z.string());

const schema = z.object({
  CPU_PRICE: decimal("0.00005"),
  MEMORY_PRICE: decimal("0.00001"),
  NEGATIVE_BALANCE_CAP: decimal("1.00"),
  PLATFORM_QUEUE_CAP: count(1000),
  RUN_CAPACITY: count(20),
  /** A durable run's checkpoint interval in seconds of run time (docs/architecture.md#durable-runs-issue-28); test suites shorten it. */
  CHECKPOINT_SECONDS: decimal("30"),
  /** Seconds without a report after which a running run's worker is lost (its run resumed); test suites shorten it. */
  HEARTBEAT_TIMEOUT_SECONDS: decimal("60"),
  RATE_LIMIT_KEY: count(60),
  /** Twice the key limit unless set. */
  RATE_LIMIT_USER: optional(z.string().regex(/^[1-9]\d*$/, "must be a positive whole number")).transform((v) =>
    v === undefined ? undefined : Number(v),
  ),
  RATE_LIMIT_IP: count(60),
  RUNNER_URL: url,
  REPORT_BASE_URL: url,
  WEBHOOK_ALLOW_PRIVATE: flag,
  DOH_URL: optional(z.url({ protocol: /^https$/ })).default(DEFAULT_DOH_URL),
  BENCH_ROUTES: flag,
  /** The webhook retry schedule (5 delays in seconds); only local test suites change it (docs/webhooks.md#retries). */
  WEBHOOK_RETRY_DELAYS: optional(z.string().regex(/^\d+(,\d+){4}$/, "must be 5 comma-separated whole numbers of seconds"))
    .default("60,300,1800,7200,43200")
    .transform((v) => v.split(",").map(Number)),
  ADMIN_TOKEN: secret,
  RUN_TOKEN_SECRET: secret,
});

/** The name of every var and secret the Worker reads (wrangler types knows only those wrangler.toml sets). */
export type ConfigVar = keyof typeof schema.shape;

export interface Config {
  prices: { cpu: number; memory: number };
  negativeBalanceCap: number;
  platformQueueCap: number;
  runCapacity: number;
  checkpointSeconds: number;
  heartbeatTimeoutMs: number;
  rateLimits: { key: number; user: number; ip: number };
  runnerUrl: string | undefined;
  reportBaseUrl: string | undefined;
  webhookAllowPrivate: boolean;
  dohUrl: string;
  benchRoutes: boolean;
  webhookRetryDelays: number[];
  adminToken: string | undefined;
  runTokenSecret: string | undefined;
}

/** A var with a value the Worker cannot use: an operator's mistake, reported as a 500 naming it. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** RUN_TOKEN_SECRET, which signs run tokens and list cursors; without it runs cannot start. */
export function runTokenSecret(env: object): string {
  const secret = config(env).runTokenSecret;
  if (!secret) throw new ConfigError("RUN_TOKEN_SECRET is not configured");
  return secret;
}

const cache = new WeakMap<object, Config>();

/** The parsed configuration of `env` (cached per environment object). */
export function config(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`configuration: ${String(issue.path[0])} ${issue.message}`);
  }
  const v = parsed.data;
  const result: Config = {
    prices: { cpu: v.CPU_PRICE, memory: v.MEMORY_PRICE },
    negativeBalanceCap: v.NEGATIVE_BALANCE_CAP,
    platformQueueCap: v.PLATFORM_QUEUE_CAP,
    runCapacity: v.RUN_CAPACITY,
    checkpointSeconds: v.CHECKPOINT_SECONDS,
    heartbeatTimeoutMs: v.HEARTBEAT_TIMEOUT_SECONDS * 1000,
    rateLimits: { key: v.RATE_LIMIT_KEY, user: v.RATE_LIMIT_USER ?? v.RATE_LIMIT_KEY * 2, ip: v.RATE_LIMIT_IP },
    runnerUrl: v.RUNNER_URL,
    reportBaseUrl: v.REPORT_BASE_URL,
    webhookAllowPrivate: v.WEBHOOK_ALLOW_PRIVATE,
    dohUrl: v.DOH_URL,
    benchRoutes: v.BENCH_ROUTES,
    webhookRetryDelays: v.WEBHOOK_RETRY_DELAYS,
    adminToken: v.ADMIN_TOKEN,
    runTokenSecret: v.RUN_TOKEN_SECRET,
  };
  cache.set(env, result);
  return result;
}
