// The quick submission types (docs/api.md#quick-submission-types): built-in problems chosen by
// `submission_type`, each with its inputs (a zod schema: the API's 400s, the listing's JSON Schema and the
// dashboard's form read it), its GA defaults, its built-in fitness function (Python source, held here and
// nowhere else) and what its genes mean (`interpretation`). A quick submission is stored as any other:
// its GA parameters, with the fitness function's source built from the type and its inputs. That source
// opens with the type and the inputs, so a result's interpretation is read back from the run's own
// parameters (and only when the source is exactly the one this module builds).
import { z } from "zod";
import { ENVIRONMENT } from "./environment";
import type { GaParameters } from "./parameters";

export const QUICK_TYPES = [
  "quick_binary_subset_sum",
  "quick_knapsack",
  "quick_sklearn_rfc_hyperparameters",
  "quick_sklearn_svc_hyperparameters",
  "quick_sklearn_knn_hyperparameters",
  "quick_sklearn_logreg_hyperparameters",
  "quick_keras_xor_training",
] as const;
export type QuickType = (typeof QUICK_TYPES)[number];
export const isQuickType = (value: unknown): value is QuickType => (QUICK_TYPES as readonly unknown[]).includes(value);

/** The GA parameters a quick type sets itself: a quick body cannot give them, a reexecute or continue cannot change them. */
export const QUICK_FIXED_FIELDS = ["fitness_func", "fitness_func_entry", "num_genes", "gene_space", "gene_type", "data_files"] as const;

const MAX_ITEMS = 1000;
const SAFE = 1_000_000_000;
const int = (min: number, max: number) => z.number().int().min(min).max(max);

// --- inputs -------------------------------------------------------------------------------------------

const subsetSumInputs = z
  .strictObject({
    integers: z
      .array(int(-SAFE, SAFE))
      .min(1)
      .max(MAX_ITEMS)
      .optional()
      .meta({ description: "the integers to choose from (or num_integers: the server generates them)" }),
    num_integers: int(1, MAX_ITEMS)
      .optional()
      .meta({ description: "how many integers the server generates (1 to 100 each), echoed as generated.integers" }),
    target: int(-SAFE * MAX_ITEMS, SAFE * MAX_ITEMS)
      .optional()
      .meta({
        description:
          "the sum to reach; required with integers; with num_integers, optional (the server then picks a reachable one, echoed as generated.target) and reachable by the generated integers",
      }),
  })
  .superRefine((b, ctx) => {
    if (b.integers !== undefined && b.num_integers !== undefined)
      ctx.addIssue({ code: "custom", path: ["num_integers"], message: "give integers or num_integers, not both" });
    else if (b.integers === undefined && b.num_integers === undefined)
      ctx.addIssue({ code: "custom", path: ["integers"], message: "is required (or num_integers: the server generates them)" });
    if (b.integers !== undefined && b.target === undefined)
      ctx.addIssue({ code: "custom", path: ["target"], message: "is required with integers" });
    if (b.num_integers !== undefined && b.target !== undefined && b.target < 1)
      ctx.addIssue({
        code: "custom",
        path: ["target"],
        message: "must be at least 1 with num_integers (the generated integers are positive)",
      });
  });

const knapsackInputs = z
  .strictObject({
    item_names: z.array(z.string().min(1).max(200)).min(1).max(MAX_ITEMS).meta({ description: "one name per item" }),
    item_values: z.array(z.number().min(-1e12).max(1e12)).min(1).max(MAX_ITEMS).meta({ description: "one value per item" }),
    item_weights: z
      .array(z.array(z.number().min(0).max(1e12)).min(1).max(100))
      .min(1)
      .max(MAX_ITEMS)
      .meta({ description: "one list per item, one weight per dimension" }),
    dimension_names: z.array(z.string().min(1).max(200)).min(1).max(100).meta({ description: "one name per capacity dimension" }),
    dimension_capacities: z.array(z.number().min(0).max(1e15)).min(1).max(100).meta({ description: "one capacity per dimension" }),
  })
  .superRefine((b, ctx) => {
    const items = b.item_names.length;
    if (b.item_values.length !== items)
      ctx.addIssue({ code: "custom", path: ["item_values"], message: `needs one value per item (${items}), got ${b.item_values.length}` });
    if (b.item_weights.length !== items)
      ctx.addIssue({ code: "custom", path: ["item_weights"], message: `needs one list per item (${items}), got ${b.item_weights.length}` });
    const dims = b.dimension_names.length;
    if (b.dimension_capacities.length !== dims)
      ctx.addIssue({
        code: "custom",
        path: ["dimension_capacities"],
        message: `needs one capacity per dimension (${dims}), got ${b.dimension_capacities.length}`,
      });
    b.item_weights.forEach((w, i) => {
      if (w.length !== dims)
        ctx.addIssue({ code: "custom", path: ["item_weights", i], message: `needs one weight per dimension (${dims}), got ${w.length}` });
    });
  });

type HyperKind = "int" | "float" | "choice";
interface Hyper {
  kind: HyperKind;
  min?: number;
  max?: number;
  /** A choice's values, or values a number may also be fixed to (gamma: "scale"). */
  values?: readonly (string | boolean | null)[];
}

/** Each model's hyperparameters a quick type tunes or fixes, with their bounds (scikit-learn's own). */
const MODELS = {
  rfc: {
    label: "a random forest (sklearn.ensemble.RandomForestClassifier, random_state=0)",
    hyper: {
      n_estimators: { kind: "int", min: 1, max: 1000 },
      max_depth: { kind: "int", min: 1, max: 200, values: [null] },
      min_samples_split: { kind: "int", min: 2, max: 500 },
      min_samples_leaf: { kind: "int", min: 1, max: 500 },
      max_features: { kind: "float", min: 0.01, max: 1, values: ["sqrt", "log2", null] },
      criterion: { kind: "choice", values: ["gini", "entropy", "log_loss"] },
      bootstrap: { kind: "choice", values: [true, false] },
    },
    example: { n_estimators: { tune: true, min: 50, max: 150 }, max_depth: { tune: true, min: 2, max: 20 } },
  },
  svc: {
    label: "a support-vector classifier (sklearn.svm.SVC after StandardScaler)",
    hyper: {
      C: { kind: "float", min: 1e-6, max: 1e6 },
      gamma: { kind: "float", min: 1e-9, max: 1e3, values: ["scale", "auto"] },
      kernel: { kind: "choice", values: ["linear", "poly", "rbf", "sigmoid"] },
      degree: { kind: "int", min: 1, max: 10 },
      coef0: { kind: "float", min: -100, max: 100 },
    },
    example: { C: { tune: true, min: 0.01, max: 100 }, gamma: { tune: true, min: 0.0001, max: 1 }, kernel: { fixed: "rbf" } },
  },
  knn: {
    label: "k nearest neighbours (sklearn.neighbors.KNeighborsClassifier after StandardScaler)",
    hyper: {
      n_neighbors: { kind: "int", min: 1, max: 500 },
      p: { kind: "int", min: 1, max: 10 },
      leaf_size: { kind: "int", min: 1, max: 500 },
      weights: { kind: "choice", values: ["uniform", "distance"] },
    },
    example: { n_neighbors: { tune: true, min: 1, max: 30 }, weights: { fixed: "distance" } },
  },
  logreg: {
    label: "a logistic regression (sklearn.linear_model.LogisticRegression after StandardScaler)",
    hyper: {
      C: { kind: "float", min: 1e-6, max: 1e6 },
      max_iter: { kind: "int", min: 10, max: 10_000 },
      tol: { kind: "float", min: 1e-10, max: 1 },
      solver: { kind: "choice", values: ["lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga"] },
    },
    example: { C: { tune: true, min: 0.001, max: 100 }, max_iter: { fixed: 1000 } },
  },
} as const satisfies Record<string, { label: string; hyper: Record<string, Hyper>; example: Record<string, unknown> }>;
type Model = keyof typeof MODELS;

const DATASETS = ["iris", "breast_cancer", "random"] as const;

const hyperEntry = z.union([
  z.strictObject({ tune: z.literal(true), min: z.number(), max: z.number() }),
  z.strictObject({ fixed: z.union([z.number(), z.string().max(100), z.boolean(), z.null()]) }),
]);

function mlInputs(model: Model) {
  const hyper: Record<string, Hyper> = MODELS[model].hyper;
  const names = Object.keys(hyper);
  return z
    .strictObject({
      dataset_name: z
        .enum(DATASETS)
        .optional()
        .meta({ description: "scikit-learn's iris or breast_cancer, or random (make_classification seeded by the run's random_seed)" }),
      data_file: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .meta({ description: "instead of dataset_name: a data file id (a CSV with a header row), with target_column" }),
      target_column: z.string().min(1).max(200).optional().meta({ description: "with data_file: the CSV column holding the class labels" }),
      hyperparameters: z.record(z.string(), hyperEntry).meta({
        description: `each hyperparameter by name (${names.join(", ")}): {"tune": true, "min": a, "max": b} or {"fixed": value}; at least one tuned`,
      }),
      cv_folds: int(2, 10).default(5).meta({ description: "folds of the stratified cross-validation (shuffled, random_state=0)" }),
    })
    .superRefine((b, ctx) => {
      if (b.dataset_name !== undefined && b.data_file !== undefined)
        ctx.addIssue({ code: "custom", path: ["data_file"], message: "give dataset_name or data_file, not both" });
      else if (b.dataset_name === undefined && b.data_file === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["dataset_name"],
          message: `is required: one of ${DATASETS.join(", ")} (or data_file with target_column)`,
        });
      if (b.data_file !== undefined && b.target_column === undefined)
        ctx.addIssue({ code: "custom", path: ["target_column"], message: "is required with data_file" });
      if (b.data_file === undefined && b.target_column !== undefined)
        ctx.addIssue({ code: "custom", path: ["target_column"], message: "is taken only with data_file" });
      let tuned = 0;
      for (const [name, entry] of Object.entries(b.hyperparameters)) {
        const path = ["hyperparameters", name];
        const spec = hyper[name];
        if (!spec) {
          ctx.addIssue({ code: "custom", path, message: `is not a hyperparameter this type takes (${names.join(", ")})` });
          continue;
        }
        if ("tune" in entry) {
          tuned++;
          if (spec.kind === "choice") {
            ctx.addIssue({
              code: "custom",
              path,
              message: `cannot be tuned (a choice); fix it: {"fixed": one of ${JSON.stringify(spec.values)}}`,
            });
            continue;
          }
          for (const bound of ["min", "max"] as const) {
            const v = entry[bound];
            if (v < spec.min! || v > spec.max! || (spec.kind === "int" && !Number.isInteger(v)))
              ctx.addIssue({
                code: "custom",
                path: [...path, bound],
                message: `must be ${spec.kind === "int" ? "an integer" : "a number"} from ${spec.min} to ${spec.max}`,
              });
          }
          if (entry.min > entry.max) ctx.addIssue({ code: "custom", path: [...path, "max"], message: "must be at least min" });
        } else {
          const v = entry.fixed;
          const allowed = (spec.values as readonly unknown[] | undefined)?.includes(v) ?? false;
          const numeric =
            spec.kind !== "choice" &&
            typeof v === "number" &&
            v >= spec.min! &&
            v <= spec.max! &&
            (spec.kind === "float" || Number.isInteger(v));
          if (!allowed && !numeric) {
            const range =
              spec.kind === "choice" ? "" : `${spec.kind === "int" ? "an integer" : "a number"} from ${spec.min} to ${spec.max}`;
            const choices = spec.values?.length ? `one of ${JSON.stringify(spec.values)}` : "";
            ctx.addIssue({ code: "custom", path: [...path, "fixed"], message: `must be ${[range, choices].filter(Boolean).join(" or ")}` });
          }
        }
      }
      if (tuned === 0)
        ctx.addIssue({
          code: "custom",
          path: ["hyperparameters"],
          message: 'needs at least one tuned hyperparameter ({"tune": true, "min": a, "max": b})',
        });
    });
}

const xorInputs = z.strictObject({});

// --- the fitness functions' sources ---------------------------------------------------------------------

/** The first lines of every quick type's fitness source: the type and its inputs (read back by `quickOf`). */
const header = (type: QuickType, inputs: unknown) =>
  `# Allele quick submission type ${type}: its built-in fitness function (docs/api.md#quick-submission-types).\n` +
  `import json\n\nQUICK_INPUTS = json.loads(${JSON.stringify(JSON.stringify(inputs))})\n`;

const SUBSET_SUM_BODY = `
import numpy

INTEGERS = numpy.array(QUICK_INPUTS["integers"], dtype=numpy.int64)
TARGET = int(QUICK_INPUTS["target"])


def fitness_func(ga_instance, solution, solution_idx):
    # A gene per integer: 1 takes it. 0 is the best fitness: the chosen integers sum to the target.
    total = int(numpy.dot(INTEGERS, numpy.asarray(solution, dtype=numpy.int64)))
    return -float(abs(total - TARGET))
`;

const KNAPSACK_BODY = `
import numpy

VALUES = numpy.array(QUICK_INPUTS["item_values"], dtype=numpy.float64)
WEIGHTS = numpy.array(QUICK_INPUTS["item_weights"], dtype=numpy.float64)
CAPACITIES = numpy.array(QUICK_INPUTS["dimension_capacities"], dtype=numpy.float64)


def fitness_func(ga_instance, solution, solution_idx):
    # A gene per item: 1 packs it. Within every capacity the fitness is the packed value; past one,
    # minus the total excess (so the search heads back inside), always below any packing that fits.
    chosen = numpy.asarray(solution) > 0.5
    excess = float(numpy.maximum(WEIGHTS[chosen].sum(axis=0) - CAPACITIES, 0).sum())
    if excess > 0:
        return -excess - float(numpy.abs(VALUES).sum()) - 1.0
    return float(VALUES[chosen].sum())
`;

const ML_BODY = `
import os

import numpy
from sklearn.model_selection import StratifiedKFold, cross_val_score

MODEL = QUICK_INPUTS["model"]
_DATA = {}


def load_data(seed):
    """The dataset as (X, y): scikit-learn's bundled ones, a seeded random one, or the run's data file."""
    if "X" not in _DATA:
        name = QUICK_INPUTS.get("dataset_name")
        if name == "iris":
            from sklearn.datasets import load_iris

            X, y = load_iris(return_X_y=True)
        elif name == "breast_cancer":
            from sklearn.datasets import load_breast_cancer

            X, y = load_breast_cancer(return_X_y=True)
        elif name == "random":
            from sklearn.datasets import make_classification

            X, y = make_classification(n_samples=300, n_features=10, n_informative=5, random_state=seed)
        else:
            import pandas

            files = sorted(os.listdir("/data"))
            table = pandas.read_csv(os.path.join("/data", files[0]))
            target = QUICK_INPUTS["target_column"]
            if target not in table.columns:
                raise ValueError(f"the data file has no column {target!r} (its columns: {list(table.columns)})")
            y = table[target].to_numpy()
            features = table.drop(columns=[target])
            X = pandas.get_dummies(features, dummy_na=False).to_numpy(dtype=numpy.float64)
        _DATA["X"], _DATA["y"] = X, y
    return _DATA["X"], _DATA["y"]


def hyperparameters(solution):
    """The model's hyperparameters: the fixed ones, and the tuned ones decoded from the genes in order."""
    params, gene = {}, 0
    for name, spec in QUICK_INPUTS["hyperparameters"].items():
        if "fixed" in spec:
            params[name] = spec["fixed"]
        else:
            value = solution[gene]
            gene += 1
            params[name] = int(round(float(value))) if spec["kind"] == "int" else float(value)
    return params


def estimator(params):
    if MODEL == "rfc":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(random_state=0, n_jobs=1, **params)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if MODEL == "svc":
        from sklearn.svm import SVC

        return make_pipeline(StandardScaler(), SVC(**params))
    if MODEL == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        return make_pipeline(StandardScaler(), KNeighborsClassifier(**params))
    from sklearn.linear_model import LogisticRegression

    return make_pipeline(StandardScaler(), LogisticRegression(**params))


def fitness_func(ga_instance, solution, solution_idx):
    # The mean accuracy of a stratified k-fold cross-validation (shuffled with random_state=0).
    seed = ga_instance.random_seed if ga_instance.random_seed is not None else 0
    X, y = load_data(seed)
    folds = StratifiedKFold(n_splits=QUICK_INPUTS["cv_folds"], shuffle=True, random_state=0)
    return float(cross_val_score(estimator(hyperparameters(solution)), X, y, cv=folds).mean())
`;

const XOR_BODY = `
import numpy
import pygad.kerasga
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
# 2 inputs, 4 tanh units, 1 sigmoid output: 17 weights (kernels then biases, layer by layer), one gene each.
MODEL = tf.keras.Sequential(
    [tf.keras.Input((2,)), tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1, activation="sigmoid")]
)
X = numpy.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype="float32")
Y = numpy.array([0, 1, 1, 0], dtype="float32")


def fitness_func(ga_instance, solution, solution_idx):
    # The count of right answers (output past 0.5 for 1) plus 1 - the mean squared error: 4.75 and more is all four right.
    out = pygad.kerasga.predict(model=MODEL, solution=solution, data=X).ravel()
    return float(numpy.sum((out > 0.5) == (Y > 0.5))) + 1.0 - float(numpy.mean((out - Y) ** 2))
`;

// --- the types ------------------------------------------------------------------------------------------

/** A seeded random source (mulberry32): the server's draws for generated inputs. */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a quick type sets on the GA parameters, and the inputs it generated (echoed as `generated`). */
export interface QuickBuild {
  parameters: Partial<GaParameters> & Pick<GaParameters, "fitness_func" | "num_genes">;
  generated: Record<string, unknown>;
}

/** The GA defaults a quick type applies when the body leaves them out. */
type Defaults = Partial<
  Pick<GaParameters, "num_generations" | "sol_per_pop" | "num_parents_mating" | "mutation_percent_genes" | "keep_elitism" | "stop_criteria">
>;

interface QuickDefinition<S extends z.ZodType> {
  description: string;
  inputs: S;
  defaults: Defaults;
  /** An example body's inputs (the listing's and the dashboard form's starting values). */
  example: Record<string, unknown>;
  /** The normalized inputs the fitness source carries, and what the server generated. */
  normalize: (inputs: z.output<S>, random: () => number) => { stored: Record<string, unknown>; generated: Record<string, unknown> };
  /** The GA parameters of these inputs (beside the fitness source). */
  genes: (stored: Record<string, unknown>) => Partial<GaParameters> & Pick<GaParameters, "num_genes">;
  body: string;
  interpret: (stored: Record<string, unknown>, solution: number[], fitness: number | null) => Record<string, unknown>;
  /** The smallest run memory cap its code runs under (TensorFlow's: docs/environment.md#memory); none: any. */
  minMemoryMb?: number;
}

const define = <S extends z.ZodType>(d: QuickDefinition<S>) => d;

const binaryGenes = (n: number) => ({ num_genes: n, gene_space: [0, 1], gene_type: "int" as const });
const chosenOf = (solution: number[]) => solution.map((g, i) => (g > 0.5 ? i : -1)).filter((i) => i >= 0);

/** `parts` positive integers summing to `total`, drawn by `random` (stars and bars). */
function composition(total: number, parts: number, random: () => number): number[] {
  const cuts = new Set<number>();
  while (cuts.size < parts - 1) cuts.add(1 + Math.floor(random() * (total - 1)));
  const sorted = [0, ...[...cuts].sort((a, b) => a - b), total];
  return sorted.slice(1).map((c, i) => c - sorted[i]!);
}

function mlType(model: Model, short: string) {
  const m = MODELS[model];
  return define({
    description: `Tunes the hyperparameters of ${m.label} by the mean accuracy of a stratified k-fold cross-validation on a dataset: scikit-learn's iris or breast_cancer, a random one, or a data file (a CSV with a target column). One gene per tuned hyperparameter; ${short}.`,
    inputs: mlInputs(model),
    defaults: { num_generations: 10, sol_per_pop: 8, num_parents_mating: 4, keep_elitism: 2, mutation_percent_genes: 50 },
    example: { dataset_name: "iris", hyperparameters: m.example },
    normalize: (inputs) => {
      const hyper: Record<string, Hyper> = m.hyper;
      const hyperparameters = Object.fromEntries(
        Object.entries(inputs.hyperparameters).map(([name, entry]) =>
          "tune" in entry
            ? [name, { tune: true, min: entry.min, max: entry.max, kind: hyper[name]!.kind }]
            : [name, { fixed: entry.fixed }],
        ),
      );
      const dataset =
        inputs.data_file !== undefined
          ? { data_file: inputs.data_file, target_column: inputs.target_column }
          : { dataset_name: inputs.dataset_name };
      return { stored: { model, ...dataset, hyperparameters, cv_folds: inputs.cv_folds }, generated: {} };
    },
    genes: (stored) => {
      const tuned = Object.values(
        stored.hyperparameters as Record<string, { tune?: true; min: number; max: number; kind: HyperKind }>,
      ).filter((e) => e.tune);
      return {
        num_genes: tuned.length,
        gene_space: tuned.map((e) => (e.kind === "int" ? { low: e.min, high: e.max + 1, step: 1 } : { low: e.min, high: e.max })),
        gene_type: tuned.map((e) => (e.kind === "int" ? "int" : "float")),
        ...(stored.data_file !== undefined ? { data_files: [stored.data_file as string] } : {}),
      };
    },
    body: ML_BODY,
    interpret: (stored, solution, fitness) => {
      const hyperparameters: Record<string, unknown> = {};
      const tuned: string[] = [];
      let gene = 0;
      for (const [name, spec] of Object.entries(
        stored.hyperparameters as Record<string, { fixed?: unknown; tune?: true; kind?: HyperKind }>,
      )) {
        if (!spec.tune) hyperparameters[name] = spec.fixed;
        else {
          const v = solution[gene++] ?? Number.NaN;
          hyperparameters[name] = spec.kind === "int" ? Math.round(v) : v;
          tuned.push(name);
        }
      }
      return {
        model,
        dataset:
          stored.data_file !== undefined ? { data_file: stored.data_file, target_column: stored.target_column } : stored.dataset_name,
        hyperparameters,
        tuned,
        cv_folds: stored.cv_folds,
        cv_accuracy: fitness,
      };
    },
  });
}

export const QUICK = {
  quick_binary_subset_sum: define({
    description:
      "Chooses a subset of integers whose sum is the target (one 0/1 gene per integer; fitness −|sum − target|, 0 when reached, which stops the run). Give integers and target, or num_integers: the server generates them (and a reachable target unless given) and echoes them under generated.",
    inputs: subsetSumInputs,
    defaults: { num_generations: 100, sol_per_pop: 50, num_parents_mating: 10, keep_elitism: 2, stop_criteria: "reach_0" },
    example: { integers: [3, 7, 1, 9, 4, 2, 8, 5], target: 20 },
    normalize: (inputs, random) => {
      if (inputs.integers) return { stored: { integers: inputs.integers, target: inputs.target! }, generated: {} };
      const n = inputs.num_integers!;
      const integers = Array.from({ length: n }, () => 1 + Math.floor(random() * 100));
      // A subset whose sum is the target: a random one (its sum the target when none was given), or
      // one whose values are a composition of the given target.
      const subset = Array.from({ length: n }, (_, i) => i).filter(() => random() < 0.5);
      if (subset.length === 0) subset.push(Math.floor(random() * n));
      if (inputs.target === undefined) {
        const target = subset.reduce((s, i) => s + integers[i]!, 0);
        return { stored: { integers, target }, generated: { integers, target } };
      }
      const size = Math.min(subset.length, inputs.target);
      const parts = composition(inputs.target, size, random);
      subset.slice(0, size).forEach((index, k) => {
        integers[index] = parts[k]!;
      });
      return { stored: { integers, target: inputs.target }, generated: { integers } };
    },
    genes: (stored) => binaryGenes((stored.integers as number[]).length),
    body: SUBSET_SUM_BODY,
    interpret: (stored, solution) => {
      const integers = stored.integers as number[];
      const chosen = chosenOf(solution);
      const sum = chosen.reduce((s, i) => s + integers[i]!, 0);
      return {
        chosen_indices: chosen,
        chosen_integers: chosen.map((i) => integers[i]),
        sum,
        target: stored.target,
        reaches_target: sum === stored.target,
      };
    },
  }),
  quick_knapsack: define({
    description:
      "A 0/1 knapsack over one or more capacity dimensions: packs the items of the most total value within every capacity (one 0/1 gene per item).",
    inputs: knapsackInputs,
    defaults: { num_generations: 100, sol_per_pop: 50, num_parents_mating: 10, keep_elitism: 2 },
    example: {
      item_names: ["map", "compass", "water", "rope"],
      item_values: [5, 8, 3, 4],
      item_weights: [[2], [1], [3], [2]],
      dimension_names: ["weight"],
      dimension_capacities: [5],
    },
    normalize: (inputs) => ({ stored: { ...inputs }, generated: {} }),
    genes: (stored) => binaryGenes((stored.item_names as string[]).length),
    body: KNAPSACK_BODY,
    interpret: (stored, solution) => {
      const names = stored.item_names as string[];
      const values = stored.item_values as number[];
      const weights = stored.item_weights as number[][];
      const dims = stored.dimension_names as string[];
      const caps = stored.dimension_capacities as number[];
      const chosen = chosenOf(solution);
      const totals = dims.map((_, d) => chosen.reduce((s, i) => s + weights[i]![d]!, 0));
      return {
        items: chosen.map((i) => names[i]),
        chosen_indices: chosen,
        total_value: chosen.reduce((s, i) => s + values[i]!, 0),
        dimensions: dims.map((name, d) => ({ name, total: totals[d], capacity: caps[d] })),
        within_capacity: totals.every((t, d) => t <= caps[d]!),
      };
    },
  }),
  quick_sklearn_rfc_hyperparameters: mlType("rfc", "each fitness is a cross-validation, so a run takes seconds per solution"),
  quick_sklearn_svc_hyperparameters: mlType("svc", "gamma and C are searched on a linear scale"),
  quick_sklearn_knn_hyperparameters: mlType("knn", "integers are rounded"),
  quick_sklearn_logreg_hyperparameters: mlType("logreg", "C is searched on a linear scale"),
  quick_keras_xor_training: define({
    description:
      "Trains the 17 weights of a small Keras network (2 inputs, 4 tanh units, 1 sigmoid output) for XOR with pygad.kerasga, on the built-in XOR data; fitness: right answers + 1 − mean squared error (4.75 and more: all four right, which stops the run).",
    inputs: xorInputs,
    defaults: {
      num_generations: 100,
      sol_per_pop: 10,
      num_parents_mating: 6,
      keep_elitism: 2,
      mutation_percent_genes: 10,
      stop_criteria: "reach_4.75",
    },
    example: {},
    minMemoryMb: ENVIRONMENT.memory.tensorflow_min_memory_mb,
    normalize: () => ({ stored: { network: [2, 4, 1] }, generated: {} }),
    genes: () => ({ num_genes: 17 }),
    body: XOR_BODY,
    interpret: (_stored, solution, fitness) => {
      const w = solution;
      const predictions = [
        [0, 0],
        [0, 1],
        [1, 0],
        [1, 1],
      ].map(([a, b]) => {
        // kerasga's order: the first layer's kernel (2×4, row by row), its 4 biases, the output kernel (4), its bias.
        const hidden = [0, 1, 2, 3].map((j) => Math.tanh(a! * w[j]! + b! * w[4 + j]! + w[8 + j]!));
        const out = 1 / (1 + Math.exp(-(hidden.reduce((s, h, j) => s + h * w[12 + j]!, 0) + w[16]!)));
        const expected = a! ^ b!;
        return { input: [a, b], output: out, predicted: out > 0.5 ? 1 : 0, expected };
      });
      return {
        network: "Dense(4, tanh) → Dense(1, sigmoid)",
        predictions,
        correct: predictions.filter((p) => p.predicted === p.expected).length,
        fitness,
      };
    },
  }),
} satisfies Record<QuickType, QuickDefinition<z.ZodType>>;

/** The fitness source of a quick type with its (normalized) inputs. */
export const quickSource = (type: QuickType, stored: Record<string, unknown>) => header(type, stored) + QUICK[type].body;

/**
 * A quick body's GA parameters: the type's inputs checked (`inputs`: already valid), the server's draws
 * made, the genes, the fitness source and its entry; the type's defaults under `given` (the body's own GA
 * parameters), which win.
 */
export function buildQuick(type: QuickType, inputs: unknown, given: Partial<GaParameters>, random: () => number): QuickBuild {
  const def = QUICK[type] as QuickDefinition<z.ZodType>;
  const { stored, generated } = def.normalize(inputs, random);
  const defaults: Defaults = { ...def.defaults };
  const population = given.sol_per_pop ?? defaults.sol_per_pop!;
  // The defaults that depend on the population stay within it (a smaller sol_per_pop given).
  if (defaults.num_parents_mating !== undefined) defaults.num_parents_mating = Math.min(defaults.num_parents_mating, population);
  if (defaults.keep_elitism !== undefined) defaults.keep_elitism = Math.min(defaults.keep_elitism, population);
  const genes = def.genes(stored);
  // PyGAD mutates ⌊num_genes × mutation_percent_genes / 100⌋ genes and warns when that is none (its
  // default 10 % of fewer than 10 genes: a small knapsack): unless the body says how to mutate, at least one.
  const mutationGiven = (["mutation_type", "mutation_percent_genes", "mutation_num_genes", "mutation_probability"] as const).some(
    (name) => given[name] !== undefined,
  );
  if (!mutationGiven && defaults.mutation_percent_genes === undefined && genes.num_genes < 10)
    defaults.mutation_percent_genes = Math.ceil(100 / genes.num_genes);
  return {
    parameters: {
      ...defaults,
      ...given,
      ...genes,
      fitness_func: quickSource(type, stored),
      fitness_func_entry: "fitness_func",
    },
    generated,
  };
}

const HEADER_LINE = /^# Allele quick submission type (\w+): /;
const INPUTS_LINE = /^QUICK_INPUTS = json\.loads\((".*")\)$/m;

/** The quick type and inputs a run's fitness source was built from, or null (not exactly a quick type's source). */
export function quickOf(parameters: Pick<GaParameters, "fitness_func">): { type: QuickType; stored: Record<string, unknown> } | null {
  const source = parameters.fitness_func;
  if (typeof source !== "string") return null;
  const type = HEADER_LINE.exec(source)?.[1];
  const literal = INPUTS_LINE.exec(source)?.[1];
  if (!isQuickType(type) || literal === undefined) return null;
  try {
    const stored = JSON.parse(JSON.parse(literal) as string) as Record<string, unknown>;
    return quickSource(type, stored) === source ? { type, stored } : null;
  } catch {
    return null;
  }
}

/**
 * What a result's genes mean (docs/api.md#interpretation): the chosen subset or items, the tuned
 * hyperparameters with the cross-validated accuracy, the network's answers; null for a run that is not
 * a quick type's, or without a best solution.
 */
export function interpretation(
  parameters: Pick<GaParameters, "fitness_func">,
  bestSolution: number[] | null | undefined,
  bestFitness: number | null | undefined,
): ({ submission_type: QuickType } & Record<string, unknown>) | null {
  const quick = quickOf(parameters);
  if (!quick || !Array.isArray(bestSolution)) return null;
  try {
    const def = QUICK[quick.type] as QuickDefinition<z.ZodType>;
    return { submission_type: quick.type, ...def.interpret(quick.stored, bestSolution, bestFitness ?? null) };
  } catch {
    return null;
  }
}

/** Every quick type as `GET /api/v1/submission-types` lists it: inputs as JSON Schema (from the same zod schemas), defaults, an example. */
export function quickTypeListing() {
  return QUICK_TYPES.map((name) => {
    const def = QUICK[name] as QuickDefinition<z.ZodType>;
    return {
      name,
      description: def.description,
      inputs: z.toJSONSchema(def.inputs, { io: "input", target: "draft-2020-12", unrepresentable: "any" }) as Record<string, unknown>,
      defaults: def.defaults as Record<string, unknown>,
      example: def.example,
      fixed_parameters: [...QUICK_FIXED_FIELDS],
      min_memory_mb: def.minMemoryMb ?? null,
    };
  });
}

/** The smallest run memory cap a quick submission's runs need (null: any), from its stored parameters. */
export function quickMinMemoryMb(parameters: Pick<GaParameters, "fitness_func">): number | null {
  const quick = quickOf(parameters);
  return quick ? ((QUICK[quick.type] as QuickDefinition<z.ZodType>).minMemoryMb ?? null) : null;
}

/** A quick type's inputs schema (its body's own fields). */
export const quickInputs = (type: QuickType): z.ZodType => QUICK[type].inputs;
/** The field names of a quick type's inputs. */
export const quickInputNames = (type: QuickType): string[] =>
  Object.keys((QUICK[type].inputs as unknown as { shape?: object }).shape ?? {});
