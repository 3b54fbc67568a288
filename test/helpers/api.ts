// Harness for tests inside workerd: call the Worker as a client would, seed accounts through the admin API.
import { env, exports } from "cloudflare:workers";

export const BASE = "https://allele.test";
export const ADMIN_TOKEN = "test-admin-token-0123456789";

export interface CallOptions {
  method?: string;
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`${BASE}${path}`, { method: opts.method ?? (body ? "POST" : "GET"), headers, body }));
}

export async function json<T = any>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export const admin = (path: string, opts: Omit<CallOptions, "key"> = {}) => call(`/admin/v1${path}`, { ...opts, key: ADMIN_TOKEN });

let counter = 0;

export interface TestAccount {
  id: string;
  key: string;
}

export async function newAccount(plan: "free" | "trial" | "premium" = "premium", credits = 100): Promise<TestAccount> {
  const res = await admin("/accounts", { body: { email: `user${++counter}-${crypto.randomUUID()}@example.com`, plan, credits } });
  if (res.status !== 201) throw new Error(`seeding an account failed: ${res.status} ${await res.text()}`);
  const body = await json(res);
  return { id: body.account.id, key: body.key };
}

export async function newKey(account: TestAccount, scopes: string[], expiresAt?: string): Promise<string> {
  const res = await admin(`/accounts/${account.id}/keys`, { body: { name: "test", scopes, expires_at: expiresAt } });
  if (res.status !== 201) throw new Error(`issuing a key failed: ${res.status} ${await res.text()}`);
  return (await json(res)).key;
}

export const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

export function job(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "sphere",
    num_generations: 20,
    num_parents_mating: 4,
    sol_per_pop: 10,
    num_genes: 5,
    fitness_func: FITNESS,
    fitness_func_entry: "fitness",
    ...overrides,
  };
}

export async function createSubmission(key: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call("/api/v1/submissions/", { key, body: job(overrides) });
  if (res.status !== 202) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return (await json(res)).id;
}

export { env };
