// A plain HTTP client for the end-to-end tests (runs in Node, against `wrangler dev`).
import { inject } from "vitest";

export const baseUrl = () => inject("baseUrl");

/** A request to the service (`base`: another service's URL than the global setup's, e.g. one a test starts itself). */
export async function call(path: string, opts: { method?: string; key?: string; body?: unknown; token?: string; base?: string } = {}) {
  const headers: Record<string, string> = {};
  const bearer = opts.key ?? opts.token;
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${opts.base ?? baseUrl()}${path}`, {
    method: opts.method ?? (opts.body !== undefined ? "POST" : "GET"),
    headers,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export async function newAccount(plan = "premium", credits = 100): Promise<{ id: string; key: string }> {
  const res = await call("/admin/v1/accounts", {
    token: inject("adminToken"),
    body: { email: `e2e-${crypto.randomUUID()}@example.com`, plan, credits },
  });
  if (res.status !== 201) throw new Error(`seed failed: ${res.status} ${res.text}`);
  return { id: res.body.account.id, key: res.body.key };
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

/** Polls a submission until its status satisfies `done` (default: terminal). */
export async function waitForStatus(key: string, id: string, done = (s: string) => TERMINAL.has(s), timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(`/api/v1/submissions/${id}`, { key });
    if (res.status === 200 && done(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`submission ${id} stuck at ${res.body?.status ?? res.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export const SPHERE = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

export function job(overrides: Record<string, unknown> = {}) {
  return {
    name: "sphere",
    num_generations: 30,
    num_parents_mating: 4,
    sol_per_pop: 12,
    num_genes: 4,
    fitness_func: SPHERE,
    fitness_func_entry: "fitness",
    ...overrides,
  };
}
