// The body of POST /imports: what the Vilvik SDK's `vilvik.push(ga)` / `client.imports.create` sends for a
// pygad.GA run made elsewhere (docs/api.md#imports) — its parameters, its captured code, its outcome.
import { z } from "zod";
import type { ImportedOutcome } from "../../domain/imports";
import { type FieldError, validationError } from "../../errors";
import { checkEntrySymbols } from "../../model/entry-symbols";
import { fieldErrors, text } from "../../model/fields";
import { parseGeneTypeExpression, typeName } from "../../model/gene-type-expression";
import { gaParametersSchema } from "../../model/parameter-rules";
import { CODE_FIELDS, code, entry, type GaParameters, gaShape, isOperatorField, type OperatorField } from "../../model/parameters";

/** The largest import body: a population rides inside it (docs/api.md#imports). */
export const MAX_IMPORT_BYTES = 8 * 1024 * 1024;

/**
 * PyGAD attributes the SDK reads off every GA that an import does not keep: what the run kept locally
 * (`save_*`: its saved solutions are not part of an import, so they would describe files the result does
 * not have; a continue asks for them again if it wants them). They are taken and dropped.
 */
const DROPPED = {
  save_best_solutions: z.boolean(),
  save_solutions: z.boolean(),
};

const codeEntries = (fields: readonly string[]) =>
  Object.fromEntries(fields.map((field) => [field, field.endsWith("_entry") ? entry.optional() : code.optional()]));
/**
 * The code the SDK captures (its roles) comes under `code`; the operators' names under `ga_parameters`,
 * and a custom operator's source with its `_entry` under either (like any code field, under `code`).
 */
const ROLE_KEYS = CODE_FIELDS.filter((field) => !isOperatorField(field)).flatMap((field) => [field, `${field}_entry`]);
const CODE_KEYS = CODE_FIELDS.flatMap((field) => [field, `${field}_entry`]);
const isRoleKey = (key: string) => ROLE_KEYS.includes(key);

const finite = z.number();
// An import names no data files: its run was made elsewhere (a continue of it may name some).
const gaOnlyShape = Object.fromEntries(Object.entries(gaShape).filter(([name]) => !isRoleKey(name) && name !== "data_files")) as {
  [K in keyof typeof gaShape as K extends `${Exclude<(typeof CODE_FIELDS)[number], OperatorField>}${"" | "_entry"}` | "data_files"
    ? never
    : K]: (typeof gaShape)[K];
};
const dropped = Object.fromEntries(Object.entries(DROPPED).map(([name, schema]) => [name, schema.optional()])) as {
  [K in keyof typeof DROPPED]: z.ZodOptional<(typeof DROPPED)[K]>;
};

const MAX_GENES = 1_000_000;
/** A fitness of several objectives holds at most this many values, as in a run (docs/api.md#multi-objective). */
const MAX_OBJECTIVES = 1000;
/** A fitness as PyGAD gives it: one number, or a list of objective values (a list of one is one objective, as in a run). */
const fitness = z
  .union([finite, z.array(finite).min(1).max(MAX_OBJECTIVES)])
  .meta({ description: "one objective: a number (or a list of one); several: a list of one value per objective" });

/**
 * gene_type as the SDK sends it: the API's forms, a numpy type's name with its module (`numpy.float32`),
 * or `"custom"` with the Python expression in `custom_gene_type` (`[float, 2]`); read by `readGeneType`.
 */
const sdkGeneType = z.union([gaShape.gene_type.unwrap(), z.string().max(100)]).optional();

export const importSchema = z.strictObject({
  name: text(200).optional(),
  description: text(2000).default(""),
  /** The GA's parameters as PyGAD holds them (`vilvik._extract.extract_ga_parameters`). */
  ga_parameters: z.strictObject({
    ...gaOnlyShape,
    ...dropped,
    gene_type: sdkGeneType,
    custom_gene_type: z.string().max(100_000).optional(),
  }),
  /** Each code field's source (the preamble merged in) and its entry name (`vilvik.push._code_payload`). */
  code: z.strictObject({ ...codeEntries(CODE_KEYS), fitness_func: code }),
  /** The run's outcome (`vilvik._extract.extract_result`). */
  result: z.strictObject({
    best_solution: z.array(finite).min(1).max(MAX_GENES),
    best_solution_idx: z.number().int().min(0).optional(),
    best_solution_fitness: fitness,
    best_solutions_fitness: z.array(fitness.nullable()).max(1_000_001),
    generations_completed: z.number().int().min(0).max(1_000_000),
    best_solution_generation: z.number().int().min(-1).max(1_000_000).optional(),
    gene_type_single: z.boolean().optional(),
    last_generation_fitness: z.array(fitness.nullable()).optional(),
    population: z.array(z.array(finite)).min(1).optional(),
  }),
  /** Where the import came from (the SDK: client, sdk_version, python_version); stored in result.json. */
  origin: z
    .record(z.string().max(64), z.union([z.string().max(200), z.number(), z.boolean(), z.null()]))
    .refine((o) => Object.keys(o).length <= 20, "may hold at most 20 entries")
    .optional(),
});
export type ImportBody = z.output<typeof importSchema>;

/** A stored parameter's name in the import body: code fields live under `code`, the rest under `ga_parameters`. */
const bodyField = (name: string, code: Record<string, unknown> = {}) => {
  const field = name.split(".")[0]!;
  return isRoleKey(field) || field in code || field.replace(/_entry$/, "") in code ? `code.${name}` : `ga_parameters.${name}`;
};

/**
 * An import checked: its submission parameters (those a submission created with the API would store),
 * checked with the creation rules, and its outcome, checked against them and read as one objective or
 * several (`result.best_solution_fitness` a list of N > 1 values); 400 `validation_failed` naming each
 * field as the body holds it. `K_tournament`, which PyGAD sets on every GA, is kept only for the tournament selections.
 */
export function checkImport(body: ImportBody): { parameters: GaParameters; outcome: ImportedOutcome } {
  const { save_best_solutions: _1, save_solutions: _2, gene_type, custom_gene_type, ...ga } = body.ga_parameters;
  if (!TOURNAMENTS.includes(ga.parent_selection_type ?? "")) delete ga.K_tournament;
  const type = readGeneType(gene_type, custom_gene_type);
  const merged = { ...ga, ...(type !== undefined && { gene_type: type }), ...body.code };
  try {
    checkEntrySymbols(merged);
  } catch (err) {
    const details = (err as { details?: { field?: string; fields?: FieldError[] } }).details;
    if (details?.field) details.field = bodyField(details.field, body.code);
    for (const f of details?.fields ?? []) f.field = bodyField(f.field, body.code);
    throw err;
  }
  const parsed = gaParametersSchema.safeParse(merged);
  if (!parsed.success) throw validationError(fieldErrors(parsed.error).map((f) => ({ ...f, field: bodyField(f.field, body.code) })));
  const parameters = parsed.data;
  const issues = outcomeIssues(parameters, body.result);
  const outcome = readObjectives(body.result, issues);
  if (issues.length) throw validationError(issues);
  return { parameters, outcome: outcome! };
}

/** The selections that use K_tournament, which PyGAD sets on every GA. */
const TOURNAMENTS = ["tournament", "tournament_nsga2", "tournament_nsga3"];

/**
 * The API's gene_type of the SDK's: `numpy.float32` → `"float32"`, `"custom"` with `custom_gene_type`
 * `"[float, 2]"` → `["float", 2]` (model/gene-type-expression.ts); anything else as sent, for the
 * creation rules to check. 400 naming `ga_parameters.custom_gene_type` for an expression it cannot read.
 */
function readGeneType(geneType: unknown, expression: string | undefined): unknown {
  const refuse = (message: string) => {
    throw validationError([{ field: "ga_parameters.custom_gene_type", message }]);
  };
  if (geneType === "custom") {
    if (expression === undefined) refuse('is required with gene_type "custom"');
    const parsed = parseGeneTypeExpression(expression!);
    if ("error" in parsed) refuse(parsed.error);
    return "value" in parsed ? parsed.value : undefined;
  }
  if (expression !== undefined) refuse('is taken only with gene_type "custom"');
  if (typeof geneType === "string" && geneType.startsWith("numpy.")) return typeName(geneType) ?? geneType;
  return geneType;
}

/** The outcome must be one of a GA with these parameters. */
function outcomeIssues(p: GaParameters, r: ImportBody["result"]): FieldError[] {
  const issues: FieldError[] = [];
  const add = (field: string, message: string) => issues.push({ field: `result.${field}`, message });
  if (r.best_solution.length !== p.num_genes) add("best_solution", `must hold num_genes (${p.num_genes}) values`);
  if (r.generations_completed > p.num_generations) add("generations_completed", `must be at most num_generations (${p.num_generations})`);
  if (r.best_solutions_fitness.length > r.generations_completed + 1)
    add("best_solutions_fitness", `may hold at most generations_completed + 1 (${r.generations_completed + 1}) values`);
  if (r.best_solution_generation !== undefined && r.best_solution_generation > r.generations_completed)
    add("best_solution_generation", "must be at most generations_completed");
  if (r.last_generation_fitness && r.last_generation_fitness.length !== p.sol_per_pop)
    add("last_generation_fitness", `must hold sol_per_pop (${p.sol_per_pop}) values`);
  if (r.population) {
    if (r.population.length !== p.sol_per_pop) add("population", `must hold sol_per_pop (${p.sol_per_pop}) solutions`);
    else if (r.population.some((row) => row.length !== p.num_genes))
      add("population", `each solution must hold num_genes (${p.num_genes}) values`);
  }
  return issues;
}

type Fitness = z.output<typeof fitness>;

/**
 * The outcome with its objectives read: N = the length of `best_solution_fitness` when it is a list (1
 * when a number). With one objective every fitness becomes a number (a list of one, PyGAD's form for a
 * fitness returned as a list, is unwrapped); with N > 1 every history entry and every row of
 * `last_generation_fitness` must hold N values. Adds the first broken entry of each list to `issues`.
 */
function readObjectives(r: ImportBody["result"], issues: FieldError[]): ImportedOutcome | null {
  const {
    best_solution_generation: generation,
    best_solution_fitness: best,
    best_solutions_fitness: history,
    last_generation_fitness: last,
    ...rest
  } = r;
  const count = Array.isArray(best) ? best.length : 1;
  const scalar = (v: Fitness | null) => (v === null || typeof v === "number" ? v : v.length === 1 ? v[0]! : undefined);
  const vector = (v: Fitness | null) => (Array.isArray(v) && v.length === count ? v : undefined);
  /** One entry in this outcome's form, else undefined. */
  const form: (v: Fitness | null) => Fitness | null | undefined = count === 1 ? scalar : vector;
  const what =
    count === 1
      ? "one number, as result.best_solution_fitness is"
      : `a list of ${count} values (num_objectives), as result.best_solution_fitness is`;
  /** Every entry in this outcome's form; null when one does not fit (the first such is named in `issues`). */
  const read = (field: string, values: (Fitness | null)[]) => {
    const out: (Fitness | null)[] = [];
    for (const [i, v] of values.entries()) {
      const got = form(v);
      if (got === undefined) {
        issues.push({ field: `result.${field}.${i}`, message: `must be ${what}` });
        return null;
      }
      out.push(got);
    }
    return out;
  };
  const h = read("best_solutions_fitness", history);
  const l = last && read("last_generation_fitness", last);
  if (!h || l === null) return null;
  const outcome = {
    ...rest,
    best_solution_generation: generation === undefined || generation < 0 ? null : generation,
    best_solutions_fitness: h,
    ...(l && { last_generation_fitness: l }),
  };
  return (
    count === 1
      ? { ...outcome, num_objectives: 1, best_solution_fitness: scalar(best)!, best_solution_objectives: null }
      : { ...outcome, num_objectives: count, best_solution_fitness: best, best_solution_objectives: best }
  ) as ImportedOutcome;
}
