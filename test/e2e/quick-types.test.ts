// The quick submission types through the whole service (`wrangler dev` + the real GA worker, as `npm start`
// runs them; docs/api.md#quick-submission-types): each built-in fitness function runs in the sandbox and
// comes to a sensible answer, read from the result's interpretation.
import { beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, newAccount, waitForStatus } from "./client";

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

  it("packs a knapsack within every capacity, at the best value, with no warning", async () => {
    const { result, submission } = await run({
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
    // Six genes: the type mutates at least one (PyGAD's default 10 % would select none, and warn).
    expect(submission.warnings).toEqual([]);
  });

  it("trains the XOR network: all four answers right, and the interpretation's forward pass agrees with the fitness", async () => {
    const { result } = await run({ submission_type: "quick_keras_xor_training", random_seed: 1 }, 300_000);
    const it = result.interpretation;
    expect(it.correct).toBe(4);
    for (const p of it.predictions) expect(p.predicted).toBe(p.expected);
    // The fitness the GA worker computed with Keras, from the outputs the interpretation computes from the genes.
    const mse = it.predictions.reduce((s: number, p: { output: number; expected: number }) => s + (p.output - p.expected) ** 2, 0) / 4;
    expect(Math.abs(4 + 1 - mse - result.best_solution_fitness)).toBeLessThan(1e-4);
  }, 320_000);

  it("tunes the SVC, k-NN and logistic regression on iris to a high cross-validated accuracy", async () => {
    const runs = await Promise.all(
      [
        [
          "quick_sklearn_svc_hyperparameters",
          { C: { tune: true, min: 0.1, max: 10 }, gamma: { fixed: "scale" }, kernel: { fixed: "rbf" } },
        ],
        ["quick_sklearn_knn_hyperparameters", { n_neighbors: { tune: true, min: 1, max: 15 }, weights: { fixed: "distance" } }],
        ["quick_sklearn_logreg_hyperparameters", { C: { tune: true, min: 0.01, max: 10 }, max_iter: { fixed: 1000 } }],
      ].map(([type, hyperparameters]) =>
        run({ submission_type: type, dataset_name: "iris", hyperparameters, num_generations: 3, sol_per_pop: 4, random_seed: 4 }, 300_000),
      ),
    );
    for (const { result } of runs) {
      const it = result.interpretation;
      expect(it.cv_accuracy).toBeGreaterThan(0.9);
      expect(it.cv_accuracy).toBe(result.best_solution_fitness);
      expect(it.tuned).toHaveLength(1);
    }
    expect(runs[1]!.result.interpretation.hyperparameters).toMatchObject({ weights: "distance" });
    expect(Number.isInteger(runs[1]!.result.interpretation.hyperparameters.n_neighbors)).toBe(true);
  }, 320_000);

  it("tunes a k-NN on a data file (a CSV with a target column) and on a random dataset", async () => {
    const rows = ["x,y,colour,label"];
    for (let i = 0; i < 60; i++) {
      const label = i % 2;
      rows.push(`${label * 4 + (i % 5) * 0.3},${label * 3 - (i % 7) * 0.2},${label ? "red" : "blue"},${label ? "b" : "a"}`);
    }
    const form = new FormData();
    form.append("file", new Blob([`${rows.join("\n")}\n`], { type: "text/csv" }), "points.csv");
    const uploaded = await (
      await fetch(`${baseUrl()}/api/v1/data-files`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form })
    ).json();
    const hyperparameters = { n_neighbors: { tune: true, min: 1, max: 9 } };
    const [file, random] = await Promise.all([
      run(
        {
          submission_type: "quick_sklearn_knn_hyperparameters",
          data_file: uploaded.id,
          target_column: "label",
          hyperparameters,
          num_generations: 2,
          sol_per_pop: 4,
        },
        300_000,
      ),
      run(
        {
          submission_type: "quick_sklearn_knn_hyperparameters",
          dataset_name: "random",
          hyperparameters,
          num_generations: 2,
          sol_per_pop: 4,
          random_seed: 9,
        },
        300_000,
      ),
    ]);
    expect(file.submission.parameters.data_files).toEqual([uploaded.id]);
    expect(file.result.interpretation.dataset).toEqual({ data_file: uploaded.id, target_column: "label" });
    expect(file.result.interpretation.cv_accuracy).toBe(1); // two well-separated groups
    expect(random.result.interpretation.dataset).toBe("random");
    expect(random.result.interpretation.cv_accuracy).toBeGreaterThan(0.5);
  }, 320_000);

  it("tunes a random forest on breast_cancer past the default hyperparameters' cross-validated accuracy", async () => {
    // The default forest's accuracy with the same folds and seed, computed by a plain submission's fitness.
    const DEFAULT = `from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score

X, y = load_breast_cancer(return_X_y=True)
ACCURACY = float(cross_val_score(RandomForestClassifier(random_state=0, n_jobs=1), X, y, cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=0)).mean())


def fitness(ga, solution, idx):
    return ACCURACY
`;
    const [tuned, baseline] = await Promise.all([
      run(
        {
          submission_type: "quick_sklearn_rfc_hyperparameters",
          dataset_name: "breast_cancer",
          hyperparameters: {
            n_estimators: { tune: true, min: 10, max: 60 },
            max_features: { tune: true, min: 0.05, max: 0.3 },
            min_samples_leaf: { tune: true, min: 1, max: 3 },
          },
          random_seed: 3,
        },
        600_000,
      ),
      (async () => {
        const created = await call("/api/v1/submissions/", {
          key,
          body: {
            name: "default forest",
            fitness_func: DEFAULT,
            fitness_func_entry: "fitness",
            num_genes: 1,
            num_generations: 1,
            sol_per_pop: 2,
            num_parents_mating: 1,
          },
        });
        expect(created.status, created.text).toBe(202);
        const done = await waitForStatus(key, created.body.id, undefined, 600_000);
        expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
        return done.best_solution_fitness as number;
      })(),
    ]);
    const it = tuned.result.interpretation;
    expect(baseline).toBeGreaterThan(0.9);
    expect(it.cv_accuracy).toBeGreaterThan(baseline);
    expect(it.cv_folds).toBe(5);
    expect(Object.keys(it.hyperparameters)).toEqual(["n_estimators", "max_features", "min_samples_leaf"]);
    expect(Number.isInteger(it.hyperparameters.n_estimators)).toBe(true);
  }, 620_000);
});
