// Sweeps as the tests drive them (docs/api.md#sweeps): a body, its creation and reading through the API,
// its children's runs straight from D1, and their ends reported as the GA worker reports them.
import { expect } from "vitest";
import { call, completeRun, env, job, json } from "./api";

export const GRID = { sol_per_pop: [10, 20], mutation_probability: [0.1, 0.2] };

export function sweepBody(overrides: Record<string, unknown> = {}) {
  const { name: _name, ...base } = job();
  return { name: "grid", base, grid: GRID, seeds: 3, ...overrides };
}

export async function createSweep(key: string, body: Record<string, unknown> = sweepBody(), headers: Record<string, string> = {}) {
  const res = await call("/api/v1/sweeps", { key, body, headers });
  if (res.status !== 202) throw new Error(`creating a sweep failed: ${res.status} ${await res.text()}`);
  return json(res);
}

export const getSweep = async (key: string, id: string) => {
  const res = await call(`/api/v1/sweeps/${id}`, { key });
  if (res.status !== 200) throw new Error(`get sweep failed: ${res.status} ${await res.text()}`);
  return json(res);
};

/** The sweep's children's initial runs, in the children's order. */
export const childRuns = async (sweepId: string) =>
  (
    await env.DB.prepare(
      `SELECT r.id, r.status, r.awaiting_slot, s.sweep_index, s.id AS submission_id FROM submissions s
       JOIN runs r ON r.submission_id = s.id AND r.kind = 'initial' WHERE s.sweep_id = ? ORDER BY s.sweep_index`,
    )
      .bind(sweepId)
      .all<{ id: string; status: string; awaiting_slot: number; sweep_index: number; submission_id: string }>()
  ).results;

/** Ends every child as the GA worker would, as they are admitted (`fitness(combination, seed)`), until none is live. */
export async function finishChildren(sweepId: string, combinations: number, fitness: (combination: number, seed: number) => number) {
  for (let round = 0; round < 100; round++) {
    const admitted = (await childRuns(sweepId)).filter((r) => r.status === "queued" && r.awaiting_slot === 0);
    if (!admitted.length) return;
    for (const run of admitted) {
      const res = await completeRun(run.id, {
        fitness: fitness(run.sweep_index % combinations, Math.floor(run.sweep_index / combinations)),
      });
      expect(res.status).toBe(204);
    }
  }
  throw new Error("the children did not all end");
}

/** The account's sweep.completed events, straight from the outbox. */
export const sweepEvents = (accountId: string) =>
  env.DB.prepare("SELECT type, data FROM events WHERE account_id = ? AND type = 'sweep.completed'").bind(accountId).all<{ data: string }>();
