import { beforeAll, describe, expect, it } from "vitest";
import { call, job, newAccount, waitForStatus } from "./client";

let key: string;

beforeAll(async () => {
  key = (await newAccount()).key;
});

describe("a run end to end (wrangler dev + the real GA worker)", () => {
  it("creates, runs and stores a result with history and six downloadable files", async () => {
    const created = await call("/api/v1/submissions/", { key, body: job({ random_seed: 7 }) });
    expect(created.status).toBe(202);
    const done = await waitForStatus(key, created.body.id);
    expect(done.status).toBe("succeeded");
    expect(done.generations_completed).toBe(30);
    expect(done.cpu_seconds_used).toBeGreaterThan(0);
    expect(done.credits_charged).toBeGreaterThan(0);

    const results = await call(`/api/v1/results/?submission_id=${created.body.id}`, { key });
    expect(results.body.results).toHaveLength(1);
    const result = (await call(`/api/v1/results/${results.body.results[0].id}`, { key })).body;
    expect(result.best_solution).toHaveLength(4);
    expect(result.best_solutions_fitness.length).toBe(31);
    expect(result.stopped_reason).toBe("completed");
    expect(result.files.map((f: { name: string }) => f.name).sort()).toEqual([
      "best_solution.csv",
      "fitness.svg",
      "fitness_history.csv",
      "logs.txt",
      "population.json",
      "result.json",
    ]);
    // 10 % of 4 genes is less than one gene: PyGAD warns, and the warning is the run's output.
    expect(done.logs).toContain("mutation_percent_genes selects fewer than one gene");
    for (const file of result.files) {
      const res = await fetch(file.url, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe(file.content_type);
      const body = await res.text();
      expect(body.length).toBe(file.size_bytes);
    }
    const population = await (
      await fetch(result.files.find((f: { name: string }) => f.name === "population.json").url, {
        headers: { Authorization: `Bearer ${key}` },
      })
    ).json();
    expect(population).toHaveLength(12);
  });

  it("fails bad code with code_error naming the user's line", async () => {
    const bad = "def fitness(ga, solution, idx):\n    x = 1\n    return x / 0\n";
    const created = await call("/api/v1/submissions/", { key, body: job({ fitness_func: bad }) });
    const done = await waitForStatus(key, created.body.id);
    expect(done.status).toBe("failed");
    expect(done.error.code).toBe("code_error");
    expect(done.error.message).toMatch(/line 3/);
    expect(done.error.message).not.toMatch(/site-packages|\.py"/);
    expect(done.credits_charged).toBeGreaterThan(0); // the code compiled and ran: charged
  });

  it("a run whose code does not compile fails with code_error and is charged 0 (docs/api.md#credits)", async () => {
    const bad = "def fitness(ga, solution, idx):\n    return sum(solution\n";
    const created = await call("/api/v1/submissions/", { key, body: job({ fitness_func: bad }) });
    const done = await waitForStatus(key, created.body.id);
    expect(done.status).toBe("failed");
    expect(done.error).toEqual({ code: "code_error", message: expect.stringMatching(/^fitness_func line \d+: SyntaxError/) });
    expect(done.cpu_seconds_used).toBeGreaterThan(0); // measured, and not charged
    expect(done.credits_charged).toBe(0);
  });

  it("cancels a running run: worker stopped, partial usage billed", async () => {
    const slow = "import time\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.05)\n    return 1.0\n";
    const created = await call("/api/v1/submissions/", { key, body: job({ fitness_func: slow, num_generations: 500 }) });
    await waitForStatus(key, created.body.id, (s) => s === "running");
    await new Promise((r) => setTimeout(r, 1000));
    const cancelled = await call(`/api/v1/submissions/${created.body.id}/cancel`, { key, method: "POST" });
    expect(cancelled.status).toBe(202);
    expect(cancelled.body.status).toBe("cancelled");
    expect(cancelled.body.execution_duration_ms).toBeGreaterThan(500);
    const again = await call(`/api/v1/submissions/${created.body.id}/cancel`, { key, method: "POST" });
    expect(again.status).toBe(409);
  });

  it("deletes a running run", async () => {
    const slow = "import time\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.05)\n    return 1.0\n";
    const created = await call("/api/v1/submissions/", { key, body: job({ fitness_func: slow, num_generations: 500 }) });
    await waitForStatus(key, created.body.id, (s) => s === "running");
    const deleted = await call(`/api/v1/submissions/${created.body.id}`, { key, method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect((await call(`/api/v1/submissions/${created.body.id}`, { key })).status).toBe(404);
  });

  it("parallel_processing: a run with 2 process workers gives the serial run's result, billed", async () => {
    const slow =
      "import time\nimport numpy\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.002)\n    return -float(numpy.sum(solution ** 2))\n";
    const results = [];
    for (const parallel of [null, ["process", 2], ["thread", 2]]) {
      const created = await call("/api/v1/submissions/", {
        key,
        body: job({ random_seed: 11, fitness_func: slow, parallel_processing: parallel }),
      });
      expect(created.status).toBe(202);
      const done = await waitForStatus(key, created.body.id);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(done.parameters.parallel_processing).toEqual(parallel);
      expect(done.cpu_seconds_used).toBeGreaterThan(0);
      const list = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key })).body.results;
      results.push((await call(`/api/v1/results/${list[0].id}`, { key })).body);
    }
    for (const other of results.slice(1)) {
      expect(other.best_solution).toEqual(results[0].best_solution);
      expect(other.best_solutions_fitness).toEqual(results[0].best_solutions_fitness);
    }
  });

  it("parallel_processing with several objectives (nsga2, the exact mode on the engine's workers): the serial run's front", async () => {
    const two =
      "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";
    const results = [];
    for (const parallel of [null, ["process", 2], ["thread", 2]]) {
      const body = job({ random_seed: 5, fitness_func: two, parent_selection_type: "nsga2", parallel_processing: parallel });
      const created = await call("/api/v1/submissions/", { key, body });
      expect(created.status).toBe(202);
      const done = await waitForStatus(key, created.body.id);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      const list = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key })).body.results;
      results.push((await call(`/api/v1/results/${list[0].id}`, { key })).body);
    }
    expect(results[0]).toMatchObject({
      num_objectives: 2,
      engine: "exact:nsga2+single_point=pygad+random",
      pareto_front_size: expect.any(Number),
    });
    expect(results[0].best_solution_objectives).toHaveLength(2);
    for (const other of results.slice(1)) {
      for (const field of ["best_solution", "best_solution_objectives", "best_solutions_fitness", "pareto_front_size", "engine"]) {
        expect(other[field], field).toEqual(results[0][field]);
      }
    }
  });

  it("reexecute with the same random_seed reproduces the result", async () => {
    const created = await call("/api/v1/submissions/", { key, body: job({ random_seed: 42 }) });
    await waitForStatus(key, created.body.id);
    const again = await call(`/api/v1/submissions/${created.body.id}/reexecute`, { key, method: "POST" });
    expect(again.status).toBe(202);
    const done = await waitForStatus(key, created.body.id);
    expect(done.run_count).toBe(2);
    expect(done.latest_run.kind).toBe("reexecute");
    const list = (await call(`/api/v1/results/?submission_id=${created.body.id}&ordering=created_at`, { key })).body.results;
    expect(list).toHaveLength(2);
    const [a, b] = await Promise.all(list.map((r: { id: string }) => call(`/api/v1/results/${r.id}`, { key })));
    expect(b.body.best_solution).toEqual(a.body.best_solution);
    expect(b.body.best_solutions_fitness).toEqual(a.body.best_solutions_fitness);
  });

  it("continue starts from the stored population and keeps or improves the fitness", async () => {
    const created = await call("/api/v1/submissions/", { key, body: job({ random_seed: 3, keep_elitism: 1 }) });
    await waitForStatus(key, created.body.id);
    const first = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key })).body.results[0];
    const cont = await call(`/api/v1/results/${first.id}/continue`, { key, method: "POST", body: { num_generations: 10 } });
    expect(cont.status).toBe(202);
    const done = await waitForStatus(key, created.body.id);
    expect(done.status).toBe("succeeded");
    expect(done.latest_run).toMatchObject({ kind: "continue", parent_result_id: first.id });
    const list = (await call(`/api/v1/results/?submission_id=${created.body.id}&ordering=-created_at`, { key })).body.results;
    const second = (await call(`/api/v1/results/${list[0].id}`, { key })).body;
    expect(second.best_solution_fitness).toBeGreaterThanOrEqual(first.best_solution_fitness);
    // Generation 0 of the continued run is the stored population, whose best is the first run's best.
    expect(second.best_solutions_fitness[0]).toBeGreaterThanOrEqual(first.best_solution_fitness);
  });
});
