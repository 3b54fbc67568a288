// The quick submission types (docs/api.md#quick-submission-types) over the API: each type's inputs
// validated with 400s naming the field, the type's GA defaults under what the body gives, the generated
// inputs echoed, the built-in fitness source on the submission and not editable, every gate, and the
// result's interpretation read back from the run's own parameters.
import { beforeAll, describe, expect, it } from "vitest";
import {
  admin,
  call,
  dbSubmissionCount,
  expectError,
  failedFields,
  finishSubmission,
  getSubmission,
  job,
  json,
  newKey,
  newRoomyAccount,
  type TestAccount,
} from "../helpers/api";
import { sweepBody } from "../helpers/sweeps";
import { WebClient } from "../helpers/web";

let a: TestAccount;
beforeAll(async () => {
  a = await newRoomyAccount();
});

const create = (body: Record<string, unknown>, key = a.key) => call("/api/v1/submissions", { key, body });
const KNAPSACK = {
  submission_type: "quick_knapsack",
  item_names: ["map", "compass", "water", "rope"],
  item_values: [5, 8, 3, 4],
  item_weights: [[2], [1], [3], [2]],
  dimension_names: ["weight"],
  dimension_capacities: [5],
};
const RFC = {
  submission_type: "quick_sklearn_rfc_hyperparameters",
  dataset_name: "breast_cancer",
  hyperparameters: {
    n_estimators: { tune: true, min: 10, max: 60 },
    max_features: { tune: true, min: 0.05, max: 0.5 },
    max_depth: { fixed: null },
  },
};

describe("creating quick submissions", () => {
  it("generates the integers of a subset sum and a reachable target, echoes them, and applies the type's defaults", async () => {
    const res = await create({ submission_type: "quick_binary_subset_sum", num_integers: 20 });
    expect(res.status).toBe(202);
    const accepted = await json(res);
    expect(accepted.submission_type).toBe("quick_binary_subset_sum");
    const { integers, target } = accepted.generated;
    expect(integers).toHaveLength(20);
    expect(integers.every((n: number) => Number.isInteger(n) && n >= 1 && n <= 100)).toBe(true);
    expect(target).toBeGreaterThan(0);
    const row = await getSubmission(a.key, accepted.id);
    expect(row.submission_type).toBe("quick_binary_subset_sum");
    expect(row.parameters).toMatchObject({
      num_genes: 20,
      gene_space: [0, 1],
      gene_type: "int",
      num_generations: 100,
      sol_per_pop: 50,
      stop_criteria: "reach_0",
      fitness_func_entry: "fitness_func",
    });
    // The built-in fitness function is on the submission, with the inputs it was built from.
    expect(row.parameters.fitness_func).toContain("quick_binary_subset_sum");
    expect(row.parameters.fitness_func).toContain(JSON.stringify(integers));
  });

  it("generates integers with a subset summing to a given target, the same for the same random_seed", async () => {
    const body = { submission_type: "quick_binary_subset_sum", num_integers: 8, target: 20, random_seed: 7 };
    const one = await json(await create(body));
    const two = await json(await create(body));
    expect(one.generated).toEqual(two.generated);
    expect(one.generated.integers).toHaveLength(8);
    expect(one.generated).not.toHaveProperty("target");
    // Some subset of them sums to 20.
    const ints: number[] = one.generated.integers;
    let reachable = false;
    for (let mask = 1; mask < 1 << ints.length; mask++) {
      if (ints.reduce((s, n, i) => (mask & (1 << i) ? s + n : s), 0) === 20) reachable = true;
    }
    expect(reachable).toBe(true);
  });

  it("takes given integers and a target (nothing generated), and given GA parameters over the defaults", async () => {
    const accepted = await json(
      await create({ submission_type: "quick_binary_subset_sum", integers: [3, 7, 1, 9], target: 10, num_generations: 30, sol_per_pop: 6 }),
    );
    expect(accepted.generated).toEqual({});
    const row = await getSubmission(a.key, accepted.id);
    expect(row.parameters).toMatchObject({ num_genes: 4, num_generations: 30, sol_per_pop: 6, num_parents_mating: 6, keep_elitism: 2 });
  });

  it("makes a knapsack's genes one per item, and the ML types' one per tuned hyperparameter", async () => {
    const knapsack = await getSubmission(a.key, (await json(await create(KNAPSACK))).id);
    // At least one gene mutated (PyGAD's default 10 % of 4 genes is none, and warns): 25 %, unless the body says how.
    expect(knapsack.parameters).toMatchObject({
      num_genes: 4,
      gene_space: [0, 1],
      num_generations: 100,
      sol_per_pop: 50,
      mutation_percent_genes: 25,
    });
    const own = await getSubmission(a.key, (await json(await create({ ...KNAPSACK, mutation_num_genes: 2 }))).id);
    expect(own.parameters.mutation_num_genes).toBe(2);
    expect(own.parameters.mutation_percent_genes).toBeUndefined();
    const rfc = await getSubmission(a.key, (await json(await create(RFC))).id);
    expect(rfc.submission_type).toBe("quick_sklearn_rfc_hyperparameters");
    expect(rfc.parameters).toMatchObject({
      num_genes: 2,
      gene_space: [
        { low: 10, high: 61, step: 1 },
        { low: 0.05, high: 0.5 },
      ],
      gene_type: ["int", "float"],
      num_generations: 10,
      sol_per_pop: 8,
    });
    const xor = await json(await create({ submission_type: "quick_keras_xor_training" }));
    expect((await getSubmission(a.key, xor.id)).parameters).toMatchObject({ num_genes: 17, stop_criteria: "reach_4.75" });
    for (const type of ["quick_sklearn_svc_hyperparameters", "quick_sklearn_knn_hyperparameters", "quick_sklearn_logreg_hyperparameters"]) {
      const hyper =
        type === "quick_sklearn_svc_hyperparameters"
          ? { C: { tune: true, min: 0.1, max: 10 }, kernel: { fixed: "rbf" } }
          : type === "quick_sklearn_knn_hyperparameters"
            ? { n_neighbors: { tune: true, min: 1, max: 15 } }
            : { C: { tune: true, min: 0.01, max: 10 } };
      expect((await create({ submission_type: type, dataset_name: "iris", hyperparameters: hyper })).status).toBe(202);
    }
  });
});

describe("refusing bad quick bodies, naming every field", () => {
  const refused = async (body: Record<string, unknown>) => {
    const before = await dbSubmissionCount(a.id);
    const err = await expectError(await create(body), 400, "validation_failed");
    expect(await dbSubmissionCount(a.id)).toBe(before);
    return failedFields(err).sort();
  };

  it("a subset sum without integers, with both forms, without a target, with bad values", async () => {
    expect(await refused({ submission_type: "quick_binary_subset_sum" })).toEqual(["integers"]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", integers: [1, 2], num_integers: 3, target: 3 })).toEqual([
      "num_integers",
    ]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", integers: [1, 2] })).toEqual(["target"]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", integers: [1.5, "x"], target: 3 })).toEqual([
      "integers.0",
      "integers.1",
    ]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", num_integers: 0 })).toEqual(["num_integers"]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", num_integers: 5, target: 0 })).toEqual(["target"]);
    expect(await refused({ submission_type: "quick_binary_subset_sum", num_integers: 5, colour: "red" })).toEqual(["colour"]);
  });

  it("a knapsack whose lists do not agree", async () => {
    expect(await refused({ ...KNAPSACK, item_values: [1, 2] })).toEqual(["item_values"]);
    expect(await refused({ ...KNAPSACK, item_weights: [[2], [1, 1], [3], [2]] })).toEqual(["item_weights.1"]);
    expect(await refused({ ...KNAPSACK, dimension_capacities: [5, 6] })).toEqual(["dimension_capacities"]);
    expect(await refused({ ...KNAPSACK, item_weights: [[-1], [1], [3], [2]] })).toEqual(["item_weights.0.0"]);
    const { item_names: _n, ...noNames } = KNAPSACK;
    expect(await refused(noNames)).toEqual(["item_names"]);
  });

  it("an ML type's dataset and hyperparameters", async () => {
    expect(await refused({ ...RFC, dataset_name: "mnist" })).toEqual(["dataset_name"]);
    const { dataset_name: _d, ...noData } = RFC;
    expect(await refused(noData)).toEqual(["dataset_name"]);
    expect(await refused({ ...noData, data_file: "df_x" })).toEqual(["target_column"]);
    expect(await refused({ ...RFC, hyperparameters: { max_depth: { fixed: 5 } } })).toEqual(["hyperparameters"]);
    expect(await refused({ ...RFC, hyperparameters: { leaves: { tune: true, min: 1, max: 2 } } })).toEqual([
      "hyperparameters",
      "hyperparameters.leaves",
    ]);
    expect(await refused({ ...RFC, hyperparameters: { n_estimators: { tune: true, min: 0, max: 5000 } } })).toEqual([
      "hyperparameters.n_estimators.max",
      "hyperparameters.n_estimators.min",
    ]);
    expect(await refused({ ...RFC, hyperparameters: { n_estimators: { tune: true, min: 50, max: 10 } } })).toEqual([
      "hyperparameters.n_estimators.max",
    ]);
    expect(
      await refused({ ...RFC, hyperparameters: { n_estimators: { tune: true, min: 5, max: 10 }, criterion: { fixed: "best" } } }),
    ).toEqual(["hyperparameters.criterion.fixed"]);
    expect(await refused({ ...RFC, hyperparameters: { criterion: { tune: true, min: 1, max: 2 } } })).toEqual([
      "hyperparameters.criterion",
    ]);
  });

  it("a built-in fitness function or the genes given, and the type's GA parameters out of their rules", async () => {
    expect(await refused({ ...KNAPSACK, fitness_func: "def f(ga, s, i):\n    return 0\n" })).toEqual(["fitness_func"]);
    expect(await refused({ ...KNAPSACK, num_genes: 3, gene_space: [0, 1] })).toEqual(["gene_space", "num_genes"]);
    expect(await refused({ ...KNAPSACK, sol_per_pop: 4, num_parents_mating: 9 })).toEqual(["num_parents_mating"]);
    expect(await refused({ ...KNAPSACK, num_generations: 0 })).toEqual(["num_generations"]);
  });

  it("a sweep's base of a quick type is 422: a sweep varies a job of your own code", async () => {
    const body = sweepBody();
    const err = await expectError(
      await call("/api/v1/sweeps", {
        key: a.key,
        body: { ...body, base: { ...(body.base as object), submission_type: "quick_knapsack" } },
      }),
      422,
      "unsupported_submission_type",
    );
    expect(err.details.supported).toEqual(["new"]);
  });

  it("an unknown type is still 422 naming the supported ones", async () => {
    const err = await expectError(await create(job({ submission_type: "quick_sudoku" })), 422, "unsupported_submission_type");
    expect(err.details.supported).toContain("quick_knapsack");
  });
});

describe("gates, reexecute and continue of quick submissions", () => {
  it("applies the account's caps to what the type sets and to its defaults", async () => {
    const free = await newRoomyAccount();
    await admin(`/accounts/${free.id}`, { method: "PATCH", body: { overrides: { max_num_genes: 10, max_num_generations: 100 } } });
    const genes = await expectError(
      await create({ submission_type: "quick_binary_subset_sum", num_integers: 20 }, free.key),
      403,
      "tier_limit_exceeded",
    );
    expect(JSON.stringify(genes.details)).toContain("num_genes");
    const generations = await expectError(await create({ ...KNAPSACK, num_generations: 101 }, free.key), 403, "tier_limit_exceeded");
    expect(JSON.stringify(generations.details)).toContain("num_generations");
    expect((await create(KNAPSACK, free.key)).status).toBe(202);
  });

  it("refuses the XOR network on the free plan's 512 MB (a website run paid on the plan): TensorFlow needs 1024", async () => {
    const free = await newRoomyAccount("free");
    const web = new WebClient();
    await web.signInWithKey(free.key);
    const form = { type: "quick_keras_xor_training", payment: "plan" };
    const refused = await web.post("/submissions/new/quick", form);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain("quick_keras_xor_training needs a run memory cap of at least 1024 MB");
    expect(await dbSubmissionCount(free.id)).toBe(0);
    // Paid with credits (the premium caps: 2048 MB) it runs; so does another type on the plan.
    expect((await web.post("/submissions/new/quick", { ...form, payment: "credits" })).status).toBe(303);
    expect((await web.post("/submissions/new/quick", { type: "quick_binary_subset_sum", num_integers: "8", payment: "plan" })).status).toBe(
      303,
    );
  });

  it("needs submissions:write", async () => {
    const key = await newKey(a, ["submissions:read"]);
    await expectError(await create(KNAPSACK, key), 403, "scope_required");
  });

  it("reexecutes and continues with GA overrides, and refuses an edit of the fitness function or the genes", async () => {
    const id = (await json(await create(KNAPSACK))).id;
    const resultId = await finishSubmission(a.key, id, { result: { best_solution: [0, 1, 0, 1], best_solution_fitness: 12 }, fitness: 12 });
    const edit = await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { fitness_func: "def f(ga, s, i):\n    return 1\n" } }),
      400,
      "validation_failed",
    );
    expect(failedFields(edit)).toEqual(["fitness_func"]);
    const genes = await expectError(
      await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { gene_space: [0, 1, 2] } }),
      400,
      "validation_failed",
    );
    expect(failedFields(genes)).toEqual(["gene_space"]);
    const again = await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: 20 } });
    expect(again.status).toBe(202);
    expect((await json(again)).submission_type).toBe("quick_knapsack");
    await finishSubmission(a.key, id, { result: { best_solution: [0, 1, 0, 1], best_solution_fitness: 12 }, fitness: 12 });
    expect((await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { num_generations: 5 } })).status).toBe(202);
  });
});

describe("a result's interpretation", () => {
  it("names the knapsack's chosen items with their totals per dimension", async () => {
    const id = (
      await json(
        await create({
          ...KNAPSACK,
          dimension_names: ["weight", "volume"],
          dimension_capacities: [5, 9],
          item_weights: [
            [2, 1],
            [1, 1],
            [3, 5],
            [2, 2],
          ],
        }),
      )
    ).id;
    const resultId = await finishSubmission(a.key, id, { result: { best_solution: [0, 1, 0, 1], best_solution_fitness: 12 }, fitness: 12 });
    const result = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(result.interpretation).toEqual({
      submission_type: "quick_knapsack",
      items: ["compass", "rope"],
      chosen_indices: [1, 3],
      total_value: 12,
      dimensions: [
        { name: "weight", total: 3, capacity: 5 },
        { name: "volume", total: 3, capacity: 9 },
      ],
      within_capacity: true,
    });
  });

  it("decodes the tuned hyperparameters by name with the cross-validated accuracy", async () => {
    const id = (await json(await create(RFC))).id;
    const resultId = await finishSubmission(a.key, id, {
      result: { best_solution: [43.2, 0.25], best_solution_fitness: 0.97 },
      fitness: 0.97,
    });
    const result = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(result.interpretation).toMatchObject({
      submission_type: "quick_sklearn_rfc_hyperparameters",
      model: "rfc",
      dataset: "breast_cancer",
      hyperparameters: { n_estimators: 43, max_features: 0.25, max_depth: null },
      tuned: ["n_estimators", "max_features"],
      cv_accuracy: 0.97,
      cv_folds: 5,
    });
  });

  it("is null for a run of your own code, even one whose source copies a quick type's header", async () => {
    const id = (await json(await create(KNAPSACK))).id;
    const source = (await getSubmission(a.key, id)).parameters.fitness_func as string;
    const own = await json(
      await create({
        name: "copy",
        fitness_func: `${source}\n# changed\n`,
        fitness_func_entry: "fitness_func",
        num_genes: 4,
        num_generations: 3,
        sol_per_pop: 4,
        num_parents_mating: 2,
      }),
    );
    const resultId = await finishSubmission(a.key, own.id, { result: { best_solution: [0, 1, 0, 1] } });
    expect((await json(await call(`/api/v1/results/${resultId}`, { key: a.key }))).interpretation).toBeNull();
  });
});

describe("GET /api/v1/submission-types", () => {
  it("lists new and every quick type with inputs as JSON Schema, defaults and a description, without a key", async () => {
    const res = await call("/api/v1/submission-types");
    expect(res.status).toBe(200);
    const { results } = await json(res);
    expect(results.map((t: { name: string }) => t.name)).toEqual([
      "new",
      "quick_binary_subset_sum",
      "quick_knapsack",
      "quick_sklearn_rfc_hyperparameters",
      "quick_sklearn_svc_hyperparameters",
      "quick_sklearn_knn_hyperparameters",
      "quick_sklearn_logreg_hyperparameters",
      "quick_keras_xor_training",
    ]);
    const knapsack = results.find((t: { name: string }) => t.name === "quick_knapsack");
    expect(knapsack.description).toContain("knapsack");
    expect(Object.keys(knapsack.inputs.properties)).toEqual([
      "item_names",
      "item_values",
      "item_weights",
      "dimension_names",
      "dimension_capacities",
    ]);
    expect(knapsack.defaults).toMatchObject({ num_generations: 100, sol_per_pop: 50 });
    const rfc = results.find((t: { name: string }) => t.name === "quick_sklearn_rfc_hyperparameters");
    expect(rfc.inputs.properties.dataset_name.enum).toEqual(["iris", "breast_cancer", "random"]);
    expect(results.find((t: { name: string }) => t.name === "quick_keras_xor_training").min_memory_mb).toBe(1024);
    expect(rfc.min_memory_mb).toBeNull();
  });
});
