// The creation parameters of a submission (docs/api.md#submissions-runs-results) and the overrides of reexecute/continue.
import { z } from "zod";
import { ApiError, validationError } from "../../errors";
import { fieldErrors, TOO_LARGE, text } from "./validate";

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
] as const;
export type CodeField = (typeof CODE_FIELDS)[number];

export const MAX_CODE_BYTES = 64 * 1024;
/**
 * The most fitness workers one run may have, whatever its plan or overrides: the run's sandbox allows 64
 * processes and threads to its user (container/allele_worker/sandbox/plan.py), and 16 workers of either
 * kind fit in it beside the run's own (container/tests/test_parallel.py); 24 threads do not.
 */
export const MAX_PARALLEL_WORKERS = 16;
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

/**
 * A stop criterion as PyGAD 3.9.2 parses it: `word_number`, the number in Python's decimal syntax
 * (`1e-3`, `.5`, `+2`); `reach` may take one threshold per objective (`reach_1_0.5`); `saturate` and
 * `evaluations` take a positive whole number, `time` non-negative seconds; every value a finite
 * 64-bit float. The message says what is wrong.
 */
export function stopCriterionProblem(text: string): string | null {
  const [word, ...numbers] = text.split("_");
  if (!["reach", "saturate", "time", "evaluations"].includes(word!)) return "must start with reach_, saturate_, time_ or evaluations_";
  if (numbers.length === 0 || (word !== "reach" && numbers.length !== 1))
    return "has the form word_number; only reach takes several numbers (one per objective)";
  for (const number of numbers) {
    const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(number);
    if (!m || (m[2] === "" && !m[3])) return `${JSON.stringify(number)} is not a number`;
    const value = Number(number.trim());
    if (!Number.isFinite(value)) return `${JSON.stringify(number)} is beyond a 64-bit float`;
    if (word === "time" && value < 0) return "time takes a non-negative number of seconds";
    if (word === "saturate" || word === "evaluations") {
      // Exactly a whole number (as Python's Decimal sees "1e2" or "5.0"): no non-zero digit after the point.
      const fraction = m[3] ?? "";
      const exponent = Number(m[4] ?? 0);
      const digits = `${m[2]}${fraction}`.replace(/0+$/, "");
      const pointAt = m[2]!.length + exponent; // digits after this position are the fraction
      if (m[1] === "-" || /^0*$/.test(digits) || digits.length > pointAt) return `${word} takes a positive whole number`;
    }
  }
  return null;
}

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
const FLOAT_TYPES = ["float", "float16", "float32", "float64"] as const;
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

/**
 * save_solutions keeps every solution of every generation: at most this many gene values,
 * (num_generations + 1) × sol_per_pop × num_genes; save_best_solutions likewise (num_generations + 1) × num_genes.
 */
export const SAVED_VALUES_CAP = 1_000_000;

const range = z.strictObject({ low: z.number(), high: z.number(), step: z.number().positive().optional() });
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
  mutation_type: z.enum(["random", "swap", "inversion", "scramble", "adaptive"]).nullable().optional(),
  mutation_probability: z.union([z.number().min(0).max(1), pair(z.number().min(0).max(1))]).optional(),
  mutation_percent_genes: z.union([z.literal("default"), z.number().gt(0).max(100), pair(z.number().gt(0).max(100))]).optional(),
  mutation_num_genes: z.union([int(1, 1_000_000), pair(int(1, 1_000_000))]).optional(),
  mutation_by_replacement: z.boolean().optional(),
  random_mutation_min_val: bound.optional(),
  random_mutation_max_val: bound.optional(),
  crossover_type: z.enum(["single_point", "two_points", "uniform", "scattered"]).nullable().optional(),
  crossover_probability: z.number().min(0).max(1).optional(),
  parent_selection_type: z.enum(["sss", "rws", "sus", "rank", "random", "tournament", "nsga2", "tournament_nsga2"]).optional(),
  K_tournament: int(1, 5000).optional(),
  keep_parents: int(-1, 5000).optional(),
  keep_elitism: int(0, 5000).optional(),
  gene_type: geneType.optional(),
  gene_space: geneSpace.optional(),
  allow_duplicate_genes: z.boolean().optional(),
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
};

type Issue = { path: string[]; message: string };

/** Rules between parameters, checked once every field has its type. */
function crossFieldIssues(p: GaParameters): Issue[] {
  const issues: Issue[] = [];
  const add = (field: string, message: string) => issues.push({ path: [field], message });
  const upTo = (field: keyof GaParameters, max: number, what: string) => {
    const v = p[field];
    if (typeof v === "number" && v > max) add(field, `must be at most ${what} (${max})`);
  };
  upTo("num_parents_mating", p.sol_per_pop, "sol_per_pop");
  upTo("K_tournament", p.sol_per_pop, "sol_per_pop");
  upTo("keep_elitism", p.sol_per_pop, "sol_per_pop");
  upTo("keep_parents", p.num_parents_mating, "num_parents_mating");
  upTo("fitness_batch_size", p.sol_per_pop, "sol_per_pop");
  // PyGAD draws uniform(low, high), which overflows to inf when high - low does (e.g. ±1.7e308).
  const span = (low: number, high: number) => Number.isFinite(high - low);
  const SPAN = "must be within about ±8.9e307 of the other bound: high - low must be a finite 64-bit number";
  // Bounds are taken in either order, and may be equal (that value, as in PyGAD); scalars or one per gene.
  const bounds = (lowField: keyof GaParameters, highField: keyof GaParameters, defaults: [number, number]) => {
    const low = (p[lowField] ?? defaults[0]) as number | number[];
    const high = (p[highField] ?? defaults[1]) as number | number[];
    if (Array.isArray(low) !== Array.isArray(high)) {
      add(lowField, `${lowField} and ${highField} must both be numbers or both be lists (one value per gene)`);
      return;
    }
    if (Array.isArray(low) && Array.isArray(high)) {
      for (const [field, list] of [
        [lowField, low],
        [highField, high],
      ] as const) {
        if (list.length !== p.num_genes) add(field, `a list needs exactly num_genes (${p.num_genes}) values`);
      }
      if (low.some((l, i) => high[i] !== undefined && !span(l, high[i]!))) add(highField, SPAN);
    } else if (!span(low as number, high as number)) add(highField, SPAN);
  };
  bounds("init_range_low", "init_range_high", [-4, 4]);
  bounds("random_mutation_min_val", "random_mutation_max_val", [-1, 1]);
  // gene_type: [type, precision] rounds floats only; a per-gene list names every gene.
  const types = p.gene_type;
  const isPair = (t: unknown): t is [string, number | null] =>
    Array.isArray(t) && t.length === 2 && typeof t[0] === "string" && !Array.isArray(t[1]) && typeof t[1] !== "string";
  const entries = types === undefined ? [] : isPair(types) || !Array.isArray(types) ? [types] : types;
  if (Array.isArray(types) && !isPair(types) && types.length !== p.num_genes)
    add("gene_type", `a per-gene list needs exactly num_genes (${p.num_genes}) types`);
  if (entries.some((t) => isPair(t) && t[1] !== null && !(FLOAT_TYPES as readonly string[]).includes(t[0]))) {
    add("gene_type", 'only a float type takes a precision (["float", 2]); give an integer type alone or with null');
  }
  const snapshots = p.num_generations + 1;
  if (p.save_solutions && snapshots * p.sol_per_pop * p.num_genes > SAVED_VALUES_CAP) {
    add(
      "save_solutions",
      `keeps (num_generations + 1) × sol_per_pop × num_genes = ${snapshots * p.sol_per_pop * p.num_genes} gene values; at most ${SAVED_VALUES_CAP} are kept`,
    );
  }
  if (p.save_best_solutions && snapshots * p.num_genes > SAVED_VALUES_CAP) {
    add(
      "save_best_solutions",
      `keeps (num_generations + 1) × num_genes = ${snapshots * p.num_genes} gene values; at most ${SAVED_VALUES_CAP} are kept`,
    );
  }
  const adaptive = p.mutation_type === "adaptive";
  for (const field of ["mutation_probability", "mutation_percent_genes", "mutation_num_genes"] as const) {
    const v = p[field];
    if (v === undefined || v === "default") continue;
    if (adaptive !== Array.isArray(v)) {
      add(
        field,
        adaptive
          ? "must be a pair [low_quality, high_quality] when mutation_type is adaptive"
          : "must be a single value unless mutation_type is adaptive",
      );
    }
  }
  const numGenes = [p.mutation_num_genes].flat().filter((v) => v !== undefined) as number[];
  if (numGenes.some((n) => n > p.num_genes)) add("mutation_num_genes", `must be at most num_genes (${p.num_genes})`);
  if (Array.isArray(p.gene_space) && p.gene_space.some((g) => g === null || typeof g === "object")) {
    if (p.gene_space.length !== p.num_genes) add("gene_space", `a per-gene space needs exactly num_genes (${p.num_genes}) items`);
  }
  const ranges = [p.gene_space, ...(Array.isArray(p.gene_space) ? p.gene_space : [])];
  for (const r of ranges) {
    if (r && typeof r === "object" && !Array.isArray(r)) {
      if (r.low >= r.high) add("gene_space", "a range needs low < high");
      else if (!span(r.low, r.high)) add("gene_space", `a range ${SPAN}`);
    }
  }
  return issues;
}

function withCrossFieldRules<T extends z.ZodType<Omit<GaParameters, "fitness_func"> & { fitness_func?: string }>>(schema: T) {
  return schema.superRefine((p, ctx) => {
    for (const issue of crossFieldIssues(p as GaParameters)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });
}

const gaObject = z.strictObject(gaShape);

/** Every GA parameter a submission may carry, code fields and their entry names included (the GA
 * worker's own list, container/allele_worker/jobs.py, must agree: test/workers/parameters.test.ts). */
export const GA_PARAMETER_NAMES: readonly string[] = Object.keys(gaShape);
/** Each GA parameter's own schema (the dashboard's form reads its choices from them). */
export const GA_PARAMETER_SCHEMAS: Readonly<Record<string, z.ZodType>> = gaShape;
export type GaParameters = z.output<typeof gaObject>;

/** The body of POST /submissions. */
export const createSubmissionSchema = withCrossFieldRules(
  z.strictObject({
    name: text(200).default(""),
    description: text(2000).default(""),
    // What the Vilvik SDK sends (docs/clients.md): checked by refuseUnsupported, after validation.
    submission_type: z.string().max(100).optional(),
    webhook_url: z.unknown().optional(),
    notification_email: z.unknown().optional(),
    // A code upload in place of a code field (docs/api.md#code-uploads), resolved before the checks.
    ...Object.fromEntries(CODE_FIELDS.map((field) => [`${field}_id`, z.string().min(1).max(64).optional()])),
    ...gaShape,
    fitness_func: code.optional(), // or fitness_func_id: one of them is required (below)
  }),
).superRefine(
  (body, ctx) => {
    const given = body as unknown;
    if (!given || typeof given !== "object" || Array.isArray(given)) return; // the body itself is the error
    if ((given as Record<string, unknown>).fitness_func === undefined && (given as Record<string, unknown>).fitness_func_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["fitness_func"], message: "is required (or fitness_func_id, a code upload)" });
    }
  },
  { when: () => true }, // reported with every other failing field, not only once the rest is valid
);

/** The submission types Allele runs (the Vilvik interface also names quick types it does not have). */
export const SUBMISSION_TYPES = ["new"] as const;

/**
 * 422 for what the body names but Allele does not do: another submission type, or a per-submission
 * webhook URL or notification e-mail (the Vilvik SDK forwards them when its caller sets them).
 */
export function refuseUnsupported(body: { submission_type?: string; webhook_url?: unknown; notification_email?: unknown }): void {
  if (body.submission_type !== undefined && !(SUBMISSION_TYPES as readonly string[]).includes(body.submission_type)) {
    throw new ApiError(
      "unsupported_submission_type",
      `submission_type "${body.submission_type}" is not supported; the supported value is: ${SUBMISSION_TYPES.join(", ")}.`,
      {
        field: "submission_type",
        supported: [...SUBMISSION_TYPES],
      },
    );
  }
  const unsupported = (["webhook_url", "notification_email"] as const).filter((f) => body[f] !== undefined);
  if (unsupported.length) {
    throw new ApiError(
      "unsupported_field",
      `${unsupported.join(" and ")} ${unsupported.length > 1 ? "are" : "is"} not supported per submission; register account webhooks at /api/v1/webhooks instead.`,
      {
        fields: unsupported,
      },
    );
  }
}

/** Full GA parameters (used to re-check a submission's parameters merged with overrides). */
export const gaParametersSchema = withCrossFieldRules(gaObject);

/**
 * Overrides accepted by reexecute (any GA parameter) and continue (not num_genes, gene_type, sol_per_pop).
 * Without the creation defaults: an override changes only what it names (a `.partial()` of the creation
 * schema would fill init_range_low/high and sample_size with their defaults and reset the stored values).
 */
const overridable = z.strictObject(
  Object.fromEntries(
    Object.entries(gaShape).map(([name, schema]) => [name, schema instanceof z.ZodDefault ? schema.unwrap() : schema]),
  ) as {
    [K in keyof typeof gaShape]: (typeof gaShape)[K] extends z.ZodDefault<infer Inner> ? Inner : (typeof gaShape)[K];
  },
);
export const reexecuteSchema = overridable.partial();
export const continueSchema = overridable.omit({ num_genes: true, gene_type: true, sol_per_pop: true }).partial();

/** Top-level names a Python source defines, by a line scan: `def NAME`, `class NAME`, `NAME =`, `NAME: T =`. */
export function topLevelNames(source: string): Set<string> {
  const names = new Set<string>();
  const patterns = [/^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/, /^class\s+([A-Za-z_]\w*)\s*[(:]/, /^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)/];
  for (const line of source.split(/\r?\n/)) {
    for (const pattern of patterns) {
      const name = pattern.exec(line)?.[1];
      if (name) names.add(name);
    }
    // Chained assignment `a = b = ...`: every target before the last `=` is defined.
    const chained = /^((?:[A-Za-z_]\w*\s*=(?!=)\s*)+)/.exec(line)?.[1];
    for (const m of chained?.matchAll(/([A-Za-z_]\w*)\s*=/g) ?? []) names.add(m[1]!);
  }
  return names;
}

/**
 * Every code field needs its `<field>_entry` (422 entry_symbol_required), and the entry must be a
 * top-level name of that source (422 entry_symbol_not_found). An entry without its code field is 400.
 */
export function checkEntrySymbols(params: Record<string, unknown>): void {
  for (const field of CODE_FIELDS) {
    const source = params[field];
    const entryName = params[`${field}_entry`];
    if (source === undefined && entryName !== undefined) {
      throw new ApiError("validation_failed", `${field}_entry was sent without ${field}.`, {
        fields: [{ field: `${field}_entry`, message: `requires ${field}` }],
      });
    }
    if (typeof source !== "string") continue;
    if (typeof entryName !== "string") {
      throw new ApiError("entry_symbol_required", `${field} needs its entry symbol ${field}_entry: the top-level name to call.`, {
        field: `${field}_entry`,
      });
    }
    if (!topLevelNames(source).has(entryName)) {
      throw new ApiError("entry_symbol_not_found", `${field}_entry "${entryName}" is not a top-level name defined in ${field}.`, {
        field: `${field}_entry`,
        entry: entryName,
      });
    }
  }
}

/** A submission's stored parameters with a reexecute/continue's `overrides` applied, checked again as a whole. */
export function mergeParameters(base: Record<string, unknown>, overrides: Record<string, unknown>): GaParameters {
  const merged = { ...base, ...overrides };
  checkEntrySymbols(merged);
  const parsed = gaParametersSchema.safeParse(merged);
  if (!parsed.success) throw validationError(fieldErrors(parsed.error));
  return parsed.data;
}
