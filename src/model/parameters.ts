// The GA parameters of a job (docs/api.md#creation-parameters): PyGAD's, each with its schema, and the
// code fields with their entry names. One model for every reader — the API's bodies, the dashboard's
// form, the admission caps, the stored rows and the GA worker's start request. The rules between
// parameters are parameter-rules.ts; the entry symbols of the code fields, entry-symbols.ts.
import { z } from "zod";
import { TOO_LARGE } from "./fields";
import { stopCriterionProblem } from "./stop-criteria";

/**
 * PyGAD's operators: each one of PyGAD's names, or Python source with `<field>_entry` — a custom operator
 * PyGAD calls with its own arguments (docs/api.md#custom-operators). The `_entry` decides which.
 */
export const OPERATOR_NAMES = {
  parent_selection_type: ["sss", "rws", "sus", "rank", "random", "tournament", "nsga2", "tournament_nsga2", "nsga3", "tournament_nsga3"],
  crossover_type: ["single_point", "two_points", "uniform", "scattered", "sbx"],
  mutation_type: ["random", "swap", "inversion", "scramble", "adaptive", "polynomial"],
} as const;
export const OPERATOR_FIELDS = ["parent_selection_type", "crossover_type", "mutation_type"] as const;
export type OperatorField = (typeof OPERATOR_FIELDS)[number];
export const isOperatorField = (name: string): name is OperatorField => (OPERATOR_FIELDS as readonly string[]).includes(name);
/** The selections made for a fitness of several objectives (the GA worker's exact mode, docs/engine.md). */
export const MULTI_OBJECTIVE_SELECTIONS = ["nsga2", "tournament_nsga2", "nsga3", "tournament_nsga3"] as const;

/** Fields that hold Python source with `<field>_entry` (the operators only when their `_entry` is given). */
export const CODE_FIELDS = [
  "fitness_func",
  "gene_constraint",
  "on_start",
  "on_fitness",
  "on_parents",
  "on_crossover",
  "on_mutation",
  "on_generation",
  "on_stop",
  ...OPERATOR_FIELDS,
] as const;
export type CodeField = (typeof CODE_FIELDS)[number];
export const isCodeField = (name: string): name is CodeField => (CODE_FIELDS as readonly string[]).includes(name);

/**
 * Whether `params` hold Python source in `field`: a code field's string, except an operator's name (an
 * operator is code only with its `_entry`; without it, a string that is not one of PyGAD's names is code
 * missing its entry, which checkEntrySymbols refuses).
 */
export function holdsCode(params: Readonly<Record<string, unknown>>, field: string): boolean {
  if (!isCodeField(field) || typeof params[field] !== "string") return false;
  if (!isOperatorField(field)) return true;
  return params[`${field}_entry`] !== undefined || !(OPERATOR_NAMES[field] as readonly string[]).includes(params[field] as string);
}

export const MAX_CODE_BYTES = 64 * 1024;
/**
 * The most fitness workers one run may have, whatever its plan or overrides: the run's sandbox allows 64
 * processes and threads to its user (container/allele_worker/sandbox/plan.py), and 16 workers of either
 * kind fit in it beside the run's own (container/tests/test_parallel.py); 24 threads do not.
 */
export const MAX_PARALLEL_WORKERS = 16;
/**
 * save_solutions keeps every solution of every generation: at most this many gene values,
 * (num_generations + 1) × sol_per_pop × num_genes; save_best_solutions likewise (num_generations + 1) × num_genes.
 */
export const SAVED_VALUES_CAP = 1_000_000;
/**
 * The most data files one run may name, whatever its plan (the plan's own count per submission is lower:
 * src/admission/limits.ts, docs/api.md#data-files).
 */
export const MAX_DATA_FILES = 100;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const pair = <T extends z.ZodType>(item: T) => z.tuple([item, item]);

/** A code field's source: at most 64 KiB (413 past it, naming the field). */
export const code = z
  .string()
  .min(1)
  .refine((s) => new TextEncoder().encode(s).byteLength <= MAX_CODE_BYTES, {
    message: `${TOO_LARGE} a code field may hold at most ${MAX_CODE_BYTES} bytes`,
  });
export const entry = z.string().regex(IDENTIFIER, "must be a Python identifier");

const stopCriterion = z
  .string()
  .max(200)
  .superRefine((text, ctx) => {
    const problem = stopCriterionProblem(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** A bound of init_range / random_mutation: one number for every gene, or one per gene (num_genes of them). */
const bound = z.union([z.number(), z.array(z.number()).min(1).max(1_000_000)]);

/** numpy's fixed-size types by name, as PyGAD accepts them (its supported_int_float_types). */
const INT_TYPES = ["int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"] as const;
export const FLOAT_TYPES = ["float", "float16", "float32", "float64"] as const;
const typeName = z.enum([...INT_TYPES, ...FLOAT_TYPES]);
/** `[type, precision]`: a float type rounded to `precision` decimals (null: not rounded). */
const typePair = z.tuple([typeName, z.number().int().min(-1000).max(1000).nullable()]);
const geneType = z.union([
  typeName,
  typePair,
  z
    .array(z.union([typeName, typePair]))
    .min(1)
    .max(1_000_000),
]);

const range = z.strictObject({ low: z.number(), high: z.number(), step: z.number().positive().optional() });
/**
 * An operator: one of PyGAD's names, or a custom operator's source (with `<field>_entry`, at most 64 KiB
 * as any code field). A bare word that is none of the names is a misspelt name, said as such (a
 * custom operator's source is never one word).
 */
const operator = <F extends OperatorField>(field: F) => {
  const names: readonly string[] = OPERATOR_NAMES[field];
  return z
    .string()
    .min(1)
    .superRefine((value, ctx) => {
      if (names.includes(value)) return;
      if (/^\s*[A-Za-z_][\w.-]*\s*$/.test(value))
        ctx.addIssue({
          code: "custom",
          message: `is not one of PyGAD's ${field} names (${names.join(", ")}); a custom operator is Python source with ${field}_entry`,
        });
      else if (new TextEncoder().encode(value).byteLength > MAX_CODE_BYTES)
        ctx.addIssue({ code: "custom", message: `${TOO_LARGE} a code field may hold at most ${MAX_CODE_BYTES} bytes` });
    })
    .meta({
      description: `one of PyGAD's names (${names.join(", ")}), or the Python source of a custom operator with ${field}_entry`,
    });
};
/** A positive finite number (PyGAD's distribution indexes). */
const positive = z.number().gt(0);
const geneSpaceItem = z.union([z.number(), z.array(z.number()).min(1).max(10_000), range, z.null()]);
const geneSpace = z.union([range, z.array(geneSpaceItem).min(1).max(10_000)]);

export const gaShape = {
  num_generations: int(1, 1_000_000),
  num_parents_mating: int(1, 5000),
  sol_per_pop: int(2, 5000),
  num_genes: int(1, 1_000_000),
  init_range_low: bound.default(-4),
  init_range_high: bound.default(4),
  sample_size: int(1, 10_000).default(100),
  mutation_type: operator("mutation_type").nullable().optional(),
  mutation_probability: z.union([z.number().min(0).max(1), pair(z.number().min(0).max(1))]).optional(),
  mutation_percent_genes: z.union([z.literal("default"), z.number().gt(0).max(100), pair(z.number().gt(0).max(100))]).optional(),
  mutation_num_genes: z.union([int(1, 1_000_000), pair(int(1, 1_000_000))]).optional(),
  mutation_by_replacement: z.boolean().optional(),
  random_mutation_min_val: bound.optional(),
  random_mutation_max_val: bound.optional(),
  crossover_type: operator("crossover_type").nullable().optional(),
  crossover_probability: z.number().min(0).max(1).optional(),
  parent_selection_type: operator("parent_selection_type").optional(),
  // Past sol_per_pop PyGAD clips it and warns (the run's warnings say so).
  K_tournament: int(1, 1_000_000).optional(),
  // NSGA-III's divisions per objective axis: C(M + p - 1, p) reference points for M objectives, at most
  // 5,000 (the largest population, which PyGAD grows to that many; checked by the GA worker once M is known).
  nsga3_num_divisions: int(1, 1000).optional(),
  sbx_crossover_eta: positive.optional(),
  polynomial_mutation_eta: positive.optional(),
  keep_parents: int(-1, 5000).optional(),
  keep_elitism: int(0, 5000).optional(),
  gene_type: geneType.optional(),
  gene_space: geneSpace.optional(),
  // Genes whose values are categories (one bool for all, or one per gene); each needs a finite gene_space.
  gene_categorical: z
    .union([z.boolean(), z.array(z.boolean()).min(1).max(1_000_000)])
    .nullable()
    .optional(),
  allow_duplicate_genes: z.boolean().optional(),
  suppress_warnings: z.boolean().optional(),
  stop_criteria: z.union([stopCriterion, z.array(stopCriterion).min(1).max(10)]).optional(),
  random_seed: int(0, 4_294_967_295).optional(),
  fitness_batch_size: int(1, 5000).optional(),
  save_solutions: z.boolean().optional(),
  save_best_solutions: z.boolean().optional(),
  // PyGAD's forms; the number of workers is capped per plan (403 past it, docs/api.md#parameter-caps)
  // and by what one run's sandbox holds (400 past it, docs/api.md#parallel-fitness).
  parallel_processing: z
    .union([int(0, MAX_PARALLEL_WORKERS), z.tuple([z.enum(["process", "thread"]), int(0, MAX_PARALLEL_WORKERS)])])
    .nullable()
    .optional(),
  fitness_func: code,
  fitness_func_entry: entry.optional(),
  gene_constraint: code.optional(),
  gene_constraint_entry: entry.optional(),
  on_start: code.optional(),
  on_start_entry: entry.optional(),
  on_fitness: code.optional(),
  on_fitness_entry: entry.optional(),
  on_parents: code.optional(),
  on_parents_entry: entry.optional(),
  on_crossover: code.optional(),
  on_crossover_entry: entry.optional(),
  on_mutation: code.optional(),
  on_mutation_entry: entry.optional(),
  on_generation: code.optional(),
  on_generation_entry: entry.optional(),
  on_stop: code.optional(),
  on_stop_entry: entry.optional(),
  parent_selection_type_entry: entry.optional(),
  crossover_type_entry: entry.optional(),
  mutation_type_entry: entry.optional(),
  // The job's data files (docs/api.md#data-files): ids of the account's uploads, read-only at /data/<name>
  // in the run. Not a PyGAD parameter: admission resolves them (operations/data-files.ts) and the GA
  // worker's start request carries the files themselves (docs/runner-protocol.md).
  data_files: z.array(z.string().min(1).max(64)).max(MAX_DATA_FILES).optional(),
};

/** Every parameter checked on its own (the rules between them: parameter-rules.ts). */
export const gaObject = z.strictObject(gaShape);
/** A job's GA parameters, as stored with its submission and each of its runs and results. */
export type GaParameters = z.output<typeof gaObject>;

/** The parameter that names the job's data files: stored with the others, never passed to PyGAD. */
export const DATA_FILES_FIELD = "data_files";
/** Every GA parameter a submission may carry, code fields and their entry names included (the GA
 * worker's own list, container/allele_worker/wire.py, must agree: test/workers/parameters.test.ts);
 * not `data_files`, which the GA worker receives as files. */
export const GA_PARAMETER_NAMES: readonly string[] = Object.keys(gaShape).filter((name) => name !== DATA_FILES_FIELD);
/** Each GA parameter's own schema (the dashboard's form reads its choices from them). */
export const GA_PARAMETER_SCHEMAS: Readonly<Record<string, z.ZodType>> = gaShape;

/**
 * How many fitness evaluations a run's `parallel_processing` asks to run at once (PyGAD's forms: `N`,
 * `["process", N]`, `["thread", N]`; null, absent or 0: one). A run takes that many places — CPUs — in
 * the Dispatcher and on the GA worker (docs/runner-protocol.md#places), at most the whole capacity.
 */
export function parallelWorkers(params: Pick<GaParameters, "parallel_processing">): number {
  const value = params.parallel_processing;
  const count = Array.isArray(value) ? value[1] : value;
  return typeof count === "number" && Number.isInteger(count) && count > 1 ? count : 1;
}
