// PyGAD fidelity end to end (docs/api.md#creation-parameters): `wrangler dev` and the real GA worker run the jobs; what each
// parameter form, multi-objective run, warning, engine path and failure produces is read back through
// the API as a user would.
import { beforeAll, describe, expect, it } from "vitest";
import { call, job, newAccount, waitForStatus } from "./client";

let key: string;

beforeAll(async () => {
  key = (await newAccount()).key;
});

async function submit(overrides: Record<string, unknown>) {
  const created = await call("/api/v1/submissions/", { key, body: job(overrides) });
  expect(created.status, created.text).toBe(202);
  return created.body.id as string;
}

async function results(submissionId: string) {
  const list = (await call(`/api/v1/results/?submission_id=${submissionId}&ordering=created_at`, { key })).body.results;
  return Promise.all(list.map(async (r: { id: string }) => (await call(`/api/v1/results/${r.id}`, { key })).body));
}

async function download(result: { files: { name: string; url: string }[] }, name: string) {
  const file = result.files.find((f) => f.name === name);
  expect(file, `${name} in ${result.files.map((f) => f.name)}`).toBeDefined();
  return fetch(file!.url, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.text());
}

async function ran(overrides: Record<string, unknown>) {
  const id = await submit(overrides);
  const done = await waitForStatus(key, id);
  return { id, done, result: done.status === "succeeded" ? (await results(id))[0] : null };
}

// A constraint written for sample_size 5: it fails the run if it ever gets more candidates.
const FIVE =
  "def at_most_five(solution, values):\n    assert len(values) <= 5, len(values)\n    return [v for v in values if v >= 0]\n\nconstraints = [at_most_five, None, None, None]\n";

describe("reruns keep their parameters", () => {
  it("reexecute with an empty body reproduces a run that sets init_range_* and sample_size exactly", async () => {
    const id = await submit({
      random_seed: 21,
      init_range_low: 0,
      init_range_high: 2,
      sample_size: 5,
      gene_constraint: FIVE,
      gene_constraint_entry: "constraints",
    });
    expect((await waitForStatus(key, id)).status).toBe("succeeded");
    const again = await call(`/api/v1/submissions/${id}/reexecute`, { key, method: "POST", body: {} });
    expect(again.status).toBe(202);
    const done = await waitForStatus(key, id);
    expect(done).toMatchObject({ status: "succeeded", run_count: 2 });
    const [first, second] = await results(id);
    expect(second.parameters).toMatchObject({ init_range_low: 0, init_range_high: 2, sample_size: 5 });
    for (const field of ["best_solution", "best_solution_fitness", "best_solutions_fitness", "generations_completed"]) {
      expect(second[field], field).toEqual(first[field]);
    }
    expect(await download(second, "population.json")).toBe(await download(first, "population.json"));
  });

  it("continue with {} keeps init_range_* and sample_size (the constraint still gets 5 candidates)", async () => {
    const id = await submit({
      random_seed: 22,
      init_range_low: 0,
      init_range_high: 2,
      sample_size: 5,
      gene_constraint: FIVE,
      gene_constraint_entry: "constraints",
    });
    expect((await waitForStatus(key, id)).status).toBe("succeeded");
    const [first] = await results(id);
    expect((await call(`/api/v1/results/${first.id}/continue`, { key, method: "POST", body: {} })).status).toBe(202);
    const done = await waitForStatus(key, id);
    expect(done).toMatchObject({ status: "succeeded", latest_run: { kind: "continue" } });
    const [, second] = await results(id);
    expect(second.parameters).toMatchObject({ init_range_low: 0, init_range_high: 2, sample_size: 5 });
  });
});

const TWO_OBJECTIVES =
  "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";

describe("a multi-objective run (nsga2)", () => {
  it("has its front, objectives, per-objective history and files; continue and reexecute work", async () => {
    const { id, done, result } = await ran({
      fitness_func: TWO_OBJECTIVES,
      parent_selection_type: "nsga2",
      random_seed: 5,
      sol_per_pop: 16,
      num_parents_mating: 8,
    });
    expect(done).toMatchObject({ status: "succeeded", best_solution_fitness: null });
    // nsga2: the engine's exact mode from the start (stock PyGAD's results, the sort vectorised).
    expect(result).toMatchObject({ num_objectives: 2, engine: "exact:nsga2+single_point=pygad+random" });
    // As PyGAD gives them: best_solution()'s objective values, and PyGAD's history, whose last entry they are.
    expect(result.best_solution_fitness).toHaveLength(2);
    expect(result.best_solution_objectives).toEqual(result.best_solution_fitness);
    expect(result.best_solutions_fitness).toHaveLength(31);
    expect(result.best_solutions_fitness.every((row: number[]) => row.length === 2)).toBe(true);
    expect(result.best_solutions_fitness.at(-1)).toEqual(result.best_solution_fitness);
    // Beside it, each objective's maximum over the population: never below the best solution's value.
    expect(result.objective_maxima).toHaveLength(31);
    result.objective_maxima.forEach((row: number[], g: number) => {
      expect(row[0]).toBeGreaterThanOrEqual(result.best_solutions_fitness[g][0]);
      expect(row[1]).toBeGreaterThanOrEqual(result.best_solutions_fitness[g][1]);
    });
    const front = JSON.parse(await download(result, "pareto_front.json"));
    expect(front.objectives).toHaveLength(result.pareto_front_size);
    expect(front.solutions).toHaveLength(result.pareto_front_size);
    for (const a of front.objectives as number[][]) {
      const dominated = (front.objectives as number[][]).some((b) => b[0]! >= a[0]! && b[1]! >= a[1]! && (b[0]! > a[0]! || b[1]! > a[1]!));
      expect(dominated).toBe(false);
    }
    expect((await download(result, "pareto_front.csv")).split("\n")[0]).toBe("index,objective_0,objective_1,gene_0,gene_1,gene_2,gene_3");
    // The population's fronts over the run (docs/api.md#result-files): 30 generations, so every one of them.
    const history = JSON.parse(await download(result, "pareto_history.json"));
    expect(Object.keys(history).sort()).toEqual(["num_objectives", "objectives_shown", "snapshots"]);
    expect(history).toMatchObject({ num_objectives: 2, objectives_shown: 2 });
    expect(history.snapshots.map((s: { generation: number }) => s.generation)).toEqual(Array.from({ length: 31 }, (_, g) => g));
    for (const s of history.snapshots as { population_size: number; front: number[][]; dominated: number[][] }[]) {
      expect(Object.keys(s).sort()).toEqual(["dominated", "front", "generation", "population_size"]);
      expect(s.population_size).toBe(16);
      expect(s.front.length + s.dominated.length).toBe(16); // at most 500 (PARETO_HISTORY_POINTS): all of them
      expect([...s.front, ...s.dominated].every((v) => v.length === 2)).toBe(true);
      const beats = (b: number[], a: number[]) => b[0]! >= a[0]! && b[1]! >= a[1]! && (b[0]! > a[0]! || b[1]! > a[1]!);
      expect(s.front.some((a) => s.front.some((b) => beats(b, a)))).toBe(false);
      expect(s.dominated.every((a) => s.front.some((b) => beats(b, a)))).toBe(true);
    }
    const lastFront = new Set(history.snapshots.at(-1).front.map((v: number[]) => v.join(",")));
    expect(front.objectives.every((v: number[]) => lastFront.has(v.join(",")))).toBe(true);
    expect(await download(result, "pareto_front.svg")).toContain("Pareto front");
    expect((await download(result, "fitness_history.csv")).split("\n")[0]).toBe(
      "generation,objective_0,objective_1,max_objective_0,max_objective_1," +
        "mean_objective_0,mean_objective_1,median_objective_0,median_objective_1,worst_objective_0,worst_objective_1",
    );

    expect((await call(`/api/v1/results/${result.id}/continue`, { key, method: "POST", body: { num_generations: 5 } })).status).toBe(202);
    expect(await waitForStatus(key, id)).toMatchObject({ status: "succeeded", latest_run: { kind: "continue" } });
    expect((await call(`/api/v1/submissions/${id}/reexecute`, { key, method: "POST" })).status).toBe(202);
    expect((await waitForStatus(key, id)).status).toBe("succeeded");
    const [first, continued, rerun] = await results(id);
    expect(continued.best_solutions_fitness).toHaveLength(6);
    expect(continued.best_solutions_fitness[0]).toEqual(first.best_solutions_fitness.at(-1)); // it starts where the first ended
    expect(rerun.best_solutions_fitness).toEqual(first.best_solutions_fitness);
    expect(await download(rerun, "pareto_front.json")).toBe(await download(first, "pareto_front.json"));
  });
});

const THREE_OBJECTIVES =
  "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2)), -float(numpy.sum((solution + 1) ** 2))]\n";

describe("every parameter of pygad.GA 3.9.2 through the Worker", () => {
  it("nsga3 with three objectives, and tournament_nsga3, succeed with PyGAD's results", async () => {
    for (const selection of ["nsga3", "tournament_nsga3"]) {
      const { done, result } = await ran({
        fitness_func: THREE_OBJECTIVES,
        parent_selection_type: selection,
        nsga3_num_divisions: 3,
        sol_per_pop: 16,
        num_generations: 10,
        random_seed: 8,
      });
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(result).toMatchObject({ num_objectives: 3, engine: `exact:${selection}+single_point=pygad+random` });
      expect(result.best_solution_fitness).toHaveLength(3);
      expect(result.best_solutions_fitness).toHaveLength(11);
      expect(result.pareto_front_size).toBeGreaterThan(0);
    }
  });

  it("sbx with polynomial, their etas, and categorical genes succeed", async () => {
    const real = await ran({
      crossover_type: "sbx",
      sbx_crossover_eta: 5,
      mutation_type: "polynomial",
      polynomial_mutation_eta: 8,
      random_seed: 9,
    });
    expect(real.done.status, JSON.stringify(real.done.error)).toBe("succeeded");
    expect(real.result.engine).toBe("accelerated:sss+sbx=pygad+polynomial=pygad");
    const categorical = await ran({
      gene_type: "int",
      gene_space: [0, 1, 2, 3],
      gene_categorical: true,
      crossover_type: "sbx",
      mutation_type: "polynomial",
      random_seed: 9,
    });
    expect(categorical.done.status, JSON.stringify(categorical.done.error)).toBe("succeeded");
    expect(categorical.result.best_solution.every((g: number) => [0, 1, 2, 3].includes(g))).toBe(true);
  });

  it("a custom crossover runs as PyGAD calls it, in the run's sandbox", async () => {
    const crossover =
      "import numpy\n\ndef halves(parents, offspring_size, ga):\n    # the mean of two parents: PyGAD's arguments\n    out = numpy.empty(offspring_size)\n    for k in range(offspring_size[0]):\n        out[k] = (parents[k % len(parents)] + parents[(k + 1) % len(parents)]) / 2\n    return out\n";
    const { done, result } = await ran({ crossover_type: crossover, crossover_type_entry: "halves", random_seed: 10 });
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(result.engine).toBe("accelerated:sss+custom=pygad+random");
    expect(result.parameters).toMatchObject({ crossover_type: crossover, crossover_type_entry: "halves" });
    const broken = await ran({
      crossover_type: "def halves(parents, offspring_size, ga):\n    raise ValueError('no')\n",
      crossover_type_entry: "halves",
    });
    expect(broken.done).toMatchObject({
      status: "failed",
      error: { code: "code_error", message: "crossover_type line 2: ValueError: no" },
    });
  });

  it("initial_population at creation is the run's start, and a reexecute's", async () => {
    const start = Array.from({ length: 12 }, (_, i) => [i / 10, -i / 10, 0.5, 1 - i / 20]);
    const fixed = { crossover_type: null, mutation_type: null, num_generations: 3 };
    const { id, done, result } = await ran({ ...fixed, initial_population: start });
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.has_initial_population).toBe(true);
    // Nothing changes a population without crossover or mutation: every row of the last is one of those given.
    const population = JSON.parse(await download(result, "population.json")) as number[][];
    const given = new Set(start.map((row) => row.join(",")));
    expect(population.every((row) => given.has(row.join(",")))).toBe(true);
    expect((await call(`/api/v1/submissions/${id}/reexecute`, { key, method: "POST", body: {} })).status).toBe(202);
    expect((await waitForStatus(key, id)).status).toBe("succeeded");
    const [first, again] = await results(id);
    expect(again.best_solutions_fitness).toEqual(first.best_solutions_fitness);
  });

  it("suppress_warnings silences PyGAD's warnings; K_tournament past sol_per_pop is clipped with PyGAD's warning", async () => {
    const loud = await ran({ parent_selection_type: "tournament", K_tournament: 50, random_seed: 11 });
    const texts = loud.result.warnings.map((w: { message: string }) => w.message);
    expect(texts.some((m: string) => m.includes("K_tournament is clipped to sol_per_pop (12)"))).toBe(true);
    const quiet = await ran({ parent_selection_type: "tournament", K_tournament: 50, suppress_warnings: true, random_seed: 11 });
    expect(quiet.done.status).toBe("succeeded");
    expect(quiet.result.warnings).toEqual([]);
    expect(quiet.result.best_solutions_fitness).toEqual(loud.result.best_solutions_fitness);
  });
});

describe("forms stock PyGAD accepts, honoured", () => {
  it("gene_type with a precision rounds the genes; per gene, each gene its own type", async () => {
    const { result } = await ran({ gene_type: ["float", 2], random_seed: 1 });
    expect(result.best_solution.every((g: number) => Math.abs(g * 100 - Math.round(g * 100)) < 1e-9)).toBe(true);
    const mixed = (await ran({ gene_type: ["int", "float", ["float", 1], "int8"], random_seed: 1 })).result;
    expect(Number.isInteger(mixed.best_solution[0]) && Number.isInteger(mixed.best_solution[3])).toBe(true);
    expect(Math.abs(mixed.best_solution[2] * 10 - Math.round(mixed.best_solution[2] * 10))).toBeLessThan(1e-9);
  });

  it("stop_criteria evaluations_N and exponent thresholds stop the run", async () => {
    const { result } = await ran({ stop_criteria: ["evaluations_40", "reach_1e3"], random_seed: 2 });
    // 12 evaluations at first, then 11 new offspring per generation: 40 reached after 3 generations
    expect(result).toMatchObject({ stopped_reason: "stop_criteria", generations_completed: 3 });
    const timed = (await ran({ stop_criteria: "time_0", random_seed: 2 })).result;
    expect(timed).toMatchObject({ stopped_reason: "stop_criteria", generations_completed: 1 });
  });

  it("per-gene mutation ranges, equal bounds included, bound the mutated genes", async () => {
    const { result } = await ran({
      random_mutation_min_val: [0.5, -1, 2, 0],
      random_mutation_max_val: [0.5, 1, 3, 0],
      mutation_by_replacement: true,
      mutation_probability: 1,
      crossover_type: null,
      keep_elitism: 0,
      keep_parents: 0,
      random_seed: 3,
    });
    const population = JSON.parse(await download(result, "population.json")) as number[][];
    for (const row of population) {
      expect(row[0]).toBe(0.5);
      expect(row[3]).toBe(0);
      expect(row[1]! >= -1 && row[1]! <= 1 && row[2]! >= 2 && row[2]! <= 3).toBe(true);
    }
    expect(result.engine).toBe("accelerated:sss+none+random"); // crossover null: shown, not "pygad"
    expect(JSON.parse(await download(result, "result.json")).engine).toBe("accelerated:sss+none+random");
  });

  it("save_solutions and save_best_solutions are downloadable", async () => {
    const { result } = await ran({ save_solutions: true, save_best_solutions: true, num_generations: 5, random_seed: 4 });
    const saved = JSON.parse(await download(result, "solutions.json"));
    expect(saved.map((s: { generation: number }) => s.generation)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(saved[0].solutions).toHaveLength(12);
    const best = JSON.parse(await download(result, "best_solutions.json"));
    expect(best).toHaveLength(6);
    expect(best.at(-1).fitness).toBe(result.best_solutions_fitness.at(-1));
  });
});

describe("warnings, constraint violations and failures", () => {
  it("PyGAD's warnings are on the result and the submission row, with counts; a violated constraint is said", async () => {
    const impossible = "constraints = [lambda solution, values: [v for v in values if v > 100], None, None, None]\n";
    const { done, result } = await ran({ gene_constraint: impossible, gene_constraint_entry: "constraints", random_seed: 6 });
    expect(done.status).toBe("succeeded");
    const messages = result.warnings.map((w: { message: string }) => w.message);
    expect(messages.some((m: string) => m.includes("mutation_percent_genes selects fewer than one gene"))).toBe(true);
    const unsatisfied = result.warnings.filter(
      (w: { message: string }) => /constraint/i.test(w.message) && !w.message.includes("violates"),
    );
    expect(unsatisfied.length).toBeGreaterThan(0);
    expect(unsatisfied.reduce((n: number, w: { count: number }) => n + w.count, 0)).toBeGreaterThan(1); // counted, not repeated
    expect(messages.some((m: string) => m.includes("violates the gene_constraint of gene(s) 0"))).toBe(true);
    expect(result.constraint_violations).toEqual([{ gene: 0, value: result.best_solution[0] }]);
    expect(done.warnings).toEqual(result.warnings);
  });

  it("a run failing at generation 5 keeps its progress; an invalid constraint answer names the user's line", async () => {
    const failing =
      "import numpy\n\ndef fitness(ga, solution, idx):\n    if ga.generations_completed == 5:\n        raise ValueError('boom')\n    return -float(numpy.sum(solution ** 2))\n";
    const { done } = await ran({ fitness_func: failing, random_seed: 7 });
    expect(done).toMatchObject({ status: "failed", generations_completed: 5, error: { code: "code_error" } });
    expect(done.best_solution_fitness).toEqual(expect.any(Number));
    const bad = "def wrong(solution, values):\n    return [123456.0]\n\nconstraints = [None, wrong, None, None]\n";
    const invalid = (await ran({ gene_constraint: bad, gene_constraint_entry: "constraints" })).done;
    expect(invalid.error.message).toMatch(/^gene_constraint line 1: the function for gene 1 returned \[123456\.0\]/);
  });

  it("a one-value array fitness is one objective; an infinite best fitness succeeds", async () => {
    const array = "import numpy\n\ndef fitness(ga, solution, idx):\n    return numpy.array([-float(numpy.sum(solution ** 2))])\n";
    const one = (await ran({ fitness_func: array, random_seed: 8 })).result;
    expect(one).toMatchObject({ num_objectives: 1, best_solution_fitness: expect.any(Number) });
    const infinite =
      "import math\n\ndef fitness(ga, solution, idx):\n    return math.inf if solution[0] > 1 else -float(sum(solution ** 2))\n";
    const { done, result } = await ran({ fitness_func: infinite, random_seed: 8 });
    expect(done.status).toBe("succeeded");
    expect(result.best_solution_fitness).toBeNull();
    expect(JSON.parse(await download(result, "result.json")).best_solution_fitness).toBe("inf");
    // the best fitness column says inf (the population's statistics after it are empty: not finite)
    expect(await download(result, "fitness_history.csv")).toMatch(/^\d+,inf(,|$)/m);
  });
});
