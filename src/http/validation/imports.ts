// The body of POST /imports: what the Vilvik SDK's `vilvik.push(ga)` / `client.imports.create` sends for a
// pygad.GA run made elsewhere (docs/api.md#imports) — its parameters, its captured code, its outcome.
import { z } from "zod";
import { validationError, type FieldError } from "../../errors";
import { fieldErrors, text } from "./validate";
import { CODE_FIELDS, checkEntrySymbols, code, entry, gaParametersSchema, gaShape, type GaParameters } from "./submission";

/** The largest import body: a population rides inside it (docs/api.md#imports). */
export const MAX_IMPORT_BYTES = 8 * 1024 * 1024;

/**
 * PyGAD attributes the SDK reads off every GA that an import does not keep: what the run kept locally
 * (`save_*`: its saved solutions are not part of an import, so they would describe files the result does
 * not have; a continue asks for them again if it wants them) and the settings of operators Allele does
 * not offer (SBX crossover, polynomial mutation, NSGA-III). They are taken and dropped.
 */
const DROPPED = {
  save_best_solutions: z.boolean(),
  save_solutions: z.boolean(),
  sbx_crossover_eta: z.number(),
  polynomial_mutation_eta: z.number(),
  nsga3_num_divisions: z.number(),
};

const codeEntries = (fields: readonly string[]) => Object.fromEntries(fields.map((field) => [field, field.endsWith("_entry") ? entry.optional() : code.optional()]));
const ROLE_KEYS = CODE_FIELDS.flatMap((field) => [field, `${field}_entry`]);
const isRoleKey = (key: string) => ROLE_KEYS.includes(key);

const finite = z.number();
const gaOnlyShape = Object.fromEntries(Object.entries(gaShape).filter(([name]) => !isRoleKey(name))) as {
  [K in keyof typeof gaShape as K extends `${(typeof CODE_FIELDS)[number]}${"" | "_entry"}` ? never : K]: (typeof gaShape)[K];
};
const dropped = Object.fromEntries(Object.entries(DROPPED).map(([name, schema]) => [name, schema.optional()])) as {
  [K in keyof typeof DROPPED]: z.ZodOptional<(typeof DROPPED)[K]>;
};

const MAX_GENES = 1_000_000;

export const importSchema = z.strictObject({
  name: text(200).optional(),
  description: text(2000).default(""),
  /** The GA's parameters as PyGAD holds them (`vilvik._extract.extract_ga_parameters`). */
  ga_parameters: z.strictObject({ ...gaOnlyShape, ...dropped }),
  /** Each code field's source (the preamble merged in) and its entry name (`vilvik.push._code_payload`). */
  code: z.strictObject({ ...codeEntries(ROLE_KEYS), fitness_func: code }),
  /** The run's outcome (`vilvik._extract.extract_result`). */
  result: z.strictObject({
    best_solution: z.array(finite).min(1).max(MAX_GENES),
    best_solution_idx: z.number().int().min(0).optional(),
    best_solution_fitness: finite,
    best_solutions_fitness: z.array(finite.nullable()).max(1_000_001),
    generations_completed: z.number().int().min(0).max(1_000_000),
    best_solution_generation: z.number().int().min(-1).max(1_000_000).optional(),
    gene_type_single: z.boolean().optional(),
    last_generation_fitness: z.array(finite.nullable()).optional(),
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
const bodyField = (name: string) => (isRoleKey(name.split(".")[0]!) ? `code.${name}` : `ga_parameters.${name}`);

/**
 * The submission parameters of an import (those a submission created with the API would store), checked
 * with the creation rules and against the outcome it reports; 400 `validation_failed` naming each field
 * as the body holds it. `K_tournament`, which PyGAD sets on every GA, is kept only for tournament selection.
 */
export function importParameters(body: ImportBody): GaParameters {
  const { save_best_solutions: _1, save_solutions: _2, sbx_crossover_eta: _3, polynomial_mutation_eta: _4, nsga3_num_divisions: _5, ...ga } = body.ga_parameters;
  if (ga.parent_selection_type !== "tournament") delete ga.K_tournament;
  const merged = { ...ga, ...body.code };
  try {
    checkEntrySymbols(merged);
  } catch (err) {
    const details = (err as { details?: { field?: string; fields?: FieldError[] } }).details;
    if (details?.field) details.field = bodyField(details.field);
    for (const f of details?.fields ?? []) f.field = bodyField(f.field);
    throw err;
  }
  const parsed = gaParametersSchema.safeParse(merged);
  if (!parsed.success) throw validationError(fieldErrors(parsed.error).map((f) => ({ ...f, field: bodyField(f.field) })));
  const parameters = parsed.data;
  const issues = outcomeIssues(parameters, body.result);
  if (issues.length) throw validationError(issues);
  return parameters;
}

/** The outcome must be one of a GA with these parameters. */
function outcomeIssues(p: GaParameters, r: ImportBody["result"]): FieldError[] {
  const issues: FieldError[] = [];
  const add = (field: string, message: string) => issues.push({ field: `result.${field}`, message });
  if (r.best_solution.length !== p.num_genes) add("best_solution", `must hold num_genes (${p.num_genes}) values`);
  if (r.generations_completed > p.num_generations) add("generations_completed", `must be at most num_generations (${p.num_generations})`);
  if (r.best_solutions_fitness.length > r.generations_completed + 1) add("best_solutions_fitness", `may hold at most generations_completed + 1 (${r.generations_completed + 1}) values`);
  if (r.best_solution_generation !== undefined && r.best_solution_generation > r.generations_completed) add("best_solution_generation", "must be at most generations_completed");
  if (r.last_generation_fitness && r.last_generation_fitness.length !== p.sol_per_pop) add("last_generation_fitness", `must hold sol_per_pop (${p.sol_per_pop}) values`);
  if (r.population) {
    if (r.population.length !== p.sol_per_pop) add("population", `must hold sol_per_pop (${p.sol_per_pop}) solutions`);
    else if (r.population.some((row) => row.length !== p.num_genes)) add("population", `each solution must hold num_genes (${p.num_genes}) values`);
  }
  return issues;
}
