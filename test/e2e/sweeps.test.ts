// A parameter sweep end to end (`wrangler dev` + the real GA worker; docs/api.md#sweeps): 2 × 2
// combinations × 3 seeds made through the API run all 12 children — waiting for the account's slots on
// the server, admitted as runs end — and the sweep's answer has per-combination statistics with p-values;
// its one sweep.completed event reaches a real receiver through the real deliveries queue.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, job, newAccount, waitForStatus } from "./client";

let server: Server;
let receiverUrl: string;
const received: { type: string; body: any }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ type: String(req.headers["x-event-type"]), body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/sweeps`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitForSweep(key: string, id: string, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  let waitingSeen = false;
  for (;;) {
    const res = await call(`/api/v1/sweeps/${id}`, { key });
    expect(res.status).toBe(200);
    if (res.body.counts.waiting > 0) waitingSeen = true;
    if (res.body.status !== "running") return { sweep: res.body, waitingSeen };
    if (Date.now() > deadline) throw new Error(`sweep ${id} still running: ${JSON.stringify(res.body.counts)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe("a sweep of 2 × 2 combinations × 3 seeds", () => {
  it("runs all 12 children and answers per-combination statistics with p-values; sweep.completed arrives once", async () => {
    const { key } = await newAccount();
    const hook = await call("/api/v1/webhooks", { key, body: { url: receiverUrl, events: ["sweep.completed", "submission.succeeded"] } });
    expect(hook.status).toBe(201);
    const { name: _name, ...base } = job({ num_generations: 25, num_genes: 4 });
    const created = await call("/api/v1/sweeps", {
      key,
      body: {
        name: "e2e grid",
        base: { ...base, random_seed: 11 },
        grid: { sol_per_pop: [8, 16], mutation_probability: [0.05, 0.3] },
        seeds: 3,
      },
    });
    expect(created.status).toBe(202);
    expect(created.body.submissions).toHaveLength(12);
    expect(new Set(created.body.submissions.map((s: any) => s.random_seed))).toEqual(new Set([11, 12, 13]));

    const { sweep, waitingSeen } = await waitForSweep(key, created.body.id);
    // Twelve children for five slots: some waited on the server rather than being refused.
    expect(waitingSeen).toBe(true);
    expect(sweep.status).toBe("completed");
    expect(sweep.counts).toEqual({ queued: 0, running: 0, succeeded: 12, failed: 0, cancelled: 0, waiting: 0 });
    expect(sweep.combinations).toHaveLength(4);
    for (const combo of sweep.combinations) {
      expect(combo.runs).toHaveLength(3);
      expect(combo.runs.map((r: any) => r.random_seed).sort()).toEqual([11, 12, 13]);
      const s = combo.statistics;
      expect(s.n).toBe(3);
      expect(s.min).toBeLessThanOrEqual(s.q1);
      expect(s.q1).toBeLessThanOrEqual(s.median);
      expect(s.median).toBeLessThanOrEqual(s.q3);
      expect(s.q3).toBeLessThanOrEqual(s.max);
      expect(s.mean_execution_duration_ms).toBeGreaterThan(0);
      expect(s.mean_credits_charged).toBeGreaterThan(0);
    }
    const best = sweep.combinations[sweep.best_combination];
    expect(best.is_best).toBe(true);
    expect(best.statistics.median).toBe(Math.max(...sweep.combinations.map((c: any) => c.statistics.median)));
    for (const combo of sweep.combinations.filter((c: any) => !c.is_best)) {
      expect(combo.comparison.p_value).toBeGreaterThan(0);
      expect(combo.comparison.p_value).toBeLessThanOrEqual(1);
      expect(["exact", "normal"]).toContain(combo.comparison.method);
      expect(combo.comparison.verdict).toMatch(/at 5 %/);
    }
    // The same seed with the same parameters is the same run: a child run again gives its fitness again.
    const child = best.runs[0];
    const again = await call(`/api/v1/submissions/${child.submission_id}/reexecute`, { key, method: "POST" });
    expect(again.status).toBe(202);
    expect((await waitForStatus(key, child.submission_id)).status).toBe("succeeded");
    const results = (await call(`/api/v1/results/?submission_id=${child.submission_id}`, { key })).body.results;
    expect(results.map((r: any) => r.best_solution_fitness)).toEqual([child.best_solution_fitness, child.best_solution_fitness]);
    // …and the sweep, made of its children's first runs, is unchanged by it.
    expect((await call(`/api/v1/sweeps/${created.body.id}`, { key })).body.combinations[sweep.best_combination].runs[0]).toEqual(child);

    const deadline = Date.now() + 60_000;
    while (!received.some((r) => r.type === "sweep.completed") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1500)); // a duplicate would have come by now
    const ends = received.filter((r) => r.type === "sweep.completed");
    expect(ends).toHaveLength(1);
    expect(ends[0]!.body.data).toMatchObject({
      sweep_id: created.body.id,
      status: "completed",
      children: 12,
      succeeded: 12,
      best_combination: sweep.best_combination,
    });
    expect(received.filter((r) => r.type === "submission.succeeded").length).toBeGreaterThanOrEqual(12);
  });
});
