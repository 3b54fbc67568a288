// The quick submission types through the whole service (`wrangler dev` + the real GA worker, as `npm start`
// runs them; docs/api.md#quick-submission-types): each built-in fitness function runs in the sandbox and
// comes to a sensible answer, read from the result's interpretation.
import { beforeAll, describe, expect, it } from "vitest";
import { call, newAccount, waitForStatus } from "./client";

let key: string;

beforeAll(async () => {
  key = (await newAccount()).key;
});

/** Creates a quick submission, waits for its run and returns the 202's body and the result. */
async function run(body: Record<string, unknown>, timeoutMs = 120_000) {
  const created = await call("/api/v1/submissions/", { key, body });
  expect(created.status, created.text).toBe(202);
  const done = await waitForStatus(key, created.body.id, undefined, timeoutMs);
  expect(done.status, JSON.stringify(done.error) + done.logs).toBe("succeeded");
  const listed = await call(`/api/v1/results/?submission_id=${created.body.id}`, { key });
  const result = (await call(`/api/v1/results/${listed.body.results[0].id}`, { key })).body;
  return { accepted: created.body, submission: done, result };
}

describe("quick submission types end to end", () => {
  it("finds a subset of generated integers summing to the generated target", async () => {
    const { accepted, result } = await run({ submission_type: "quick_binary_subset_sum", num_integers: 20, random_seed: 3 });
    const { integers, target } = accepted.generated;
    expect(integers).toHaveLength(20);
    const it = result.interpretation;
    expect(it).toMatchObject({ submission_type: "quick_binary_subset_sum", target, reaches_target: true, sum: target });
    expect(it.chosen_integers).toEqual(it.chosen_indices.map((i: number) => integers[i]));
    expect(it.chosen_integers.reduce((s: number, n: number) => s + n, 0)).toBe(target);
    expect(result.best_solution_fitness).toBe(0);
  });

  it("reaches a given target with given integers", async () => {
    const { result } = await run({
      submission_type: "quick_binary_subset_sum",
      integers: [3, 7, 1, 9, 4, 2, 8, 5],
      target: 20,
      random_seed: 1,
    });
    expect(result.interpretation).toMatchObject({ sum: 20, reaches_target: true });
  });

  it("packs a knapsack within every capacity, at the best value", async () => {
    const { result } = await run({
      submission_type: "quick_knapsack",
      item_names: ["map", "compass", "water", "rope", "tent", "stove"],
      item_values: [5, 8, 3, 4, 11, 6],
      item_weights: [
        [2, 1],
        [1, 1],
        [3, 2],
        [2, 1],
        [5, 4],
        [3, 3],
      ],
      dimension_names: ["weight", "volume"],
      dimension_capacities: [8, 6],
      random_seed: 2,
    });
    const it = result.interpretation;
    expect(it.within_capacity).toBe(true);
    for (const d of it.dimensions) expect(d.total).toBeLessThanOrEqual(d.capacity);
    // The best packing (by enumeration of the 64; the next best is 23): map, compass, tent = 24 (weight 8, volume 6).
    expect(it.total_value).toBe(24);
    expect([...it.items].sort()).toEqual(["compass", "map", "tent"]);
    expect(result.best_solution_fitness).toBe(24);
  });
});
