// The new-submission form (docs/dashboard.md#new-submission): every creation parameter the API accepts,
// grouped, with PyGAD's defaults shown. The form's values become the API's JSON body and pass the same
// schema (http/validation/submission.ts), so a field error names the same field as the API would. A GA
// parameter this table does not list yet (added to the schema later) still appears, under "Other".
import { CODE_FIELDS, GA_PARAMETER_NAMES } from "../http/validation/submission";

export type FieldKind = "text" | "textarea" | "int" | "number" | "select" | "bool" | "json" | "code";

export interface FormField {
  name: string;
  label: string;
  kind: FieldKind;
  group: "basic" | "operators" | "callbacks" | "other";
  required?: boolean;
  /** What PyGAD (or Allele) uses when the field is left empty. */
  default?: string;
  hint?: string;
  options?: string[];
  /** Initial value of a new form. */
  initial?: string;
}

const SPHERE = "import numpy\n\n\ndef fitness(ga, solution, solution_idx):\n    # Higher is better: the sphere function, maximised at 0.\n    return -float(numpy.sum(solution ** 2))\n";

const CURATED: FormField[] = [
  { name: "name", label: "Name", kind: "text", group: "basic", initial: "sphere", hint: "A label for the list (≤ 200 characters)." },
  { name: "description", label: "Description", kind: "textarea", group: "basic", hint: "Free text (≤ 2,000 characters)." },
  { name: "num_generations", label: "Generations", kind: "int", group: "basic", required: true, initial: "100", hint: "1 and up, at most your plan's cap." },
  { name: "sol_per_pop", label: "Solutions per population", kind: "int", group: "basic", required: true, initial: "20", hint: "2..5000." },
  { name: "num_parents_mating", label: "Parents mating", kind: "int", group: "basic", required: true, initial: "4", hint: "1..solutions per population." },
  { name: "num_genes", label: "Genes", kind: "int", group: "basic", required: true, initial: "5", hint: "1 and up, at most your plan's cap." },
  { name: "init_range_low", label: "Initial range, low", kind: "number", group: "basic", default: "-4" },
  { name: "init_range_high", label: "Initial range, high", kind: "number", group: "basic", default: "4" },
  { name: "gene_type", label: "Gene type", kind: "select", group: "basic", options: ["int", "float"], default: "float" },
  { name: "random_seed", label: "Random seed", kind: "int", group: "basic", hint: "0..4294967295; the same seed gives the same run." },
  { name: "fitness_func", label: "Fitness function", kind: "code", group: "basic", required: true, initial: SPHERE, hint: "Python: a function (ga, solution, solution_idx) returning a number; higher is better." },
  { name: "parent_selection_type", label: "Parent selection", kind: "select", group: "operators", options: ["sss", "rws", "sus", "rank", "random", "tournament"], default: "sss" },
  { name: "K_tournament", label: "Tournament size (K)", kind: "int", group: "operators", default: "3", hint: "With tournament selection; 1..solutions per population." },
  { name: "keep_parents", label: "Parents kept", kind: "int", group: "operators", default: "-1", hint: "-1 keeps all; only without elitism." },
  { name: "keep_elitism", label: "Elites kept", kind: "int", group: "operators", default: "1" },
  { name: "crossover_type", label: "Crossover", kind: "select", group: "operators", options: ["single_point", "two_points", "uniform", "scattered"], default: "single_point" },
  { name: "crossover_probability", label: "Crossover probability", kind: "number", group: "operators", hint: "0..1." },
  { name: "mutation_type", label: "Mutation", kind: "select", group: "operators", options: ["random", "swap", "inversion", "scramble", "adaptive"], default: "random" },
  { name: "mutation_probability", label: "Mutation probability", kind: "json", group: "operators", hint: "0..1, or a pair [low, high] with adaptive mutation." },
  { name: "mutation_percent_genes", label: "Mutation percent of genes", kind: "json", group: "operators", default: "default (10)", hint: "(0, 100], \"default\", or a pair with adaptive mutation." },
  { name: "mutation_num_genes", label: "Genes mutated", kind: "json", group: "operators", hint: "1..genes, or a pair with adaptive mutation." },
  { name: "mutation_by_replacement", label: "Mutation by replacement", kind: "bool", group: "operators", default: "no" },
  { name: "random_mutation_min_val", label: "Random mutation, min", kind: "number", group: "operators", default: "-1" },
  { name: "random_mutation_max_val", label: "Random mutation, max", kind: "number", group: "operators", default: "1" },
  { name: "gene_space", label: "Gene space", kind: "json", group: "operators", hint: 'JSON: a list of values, {"low": 0, "high": 1, "step": 0.1}, or one item per gene.' },
  { name: "allow_duplicate_genes", label: "Allow duplicate genes", kind: "bool", group: "operators", default: "yes" },
  { name: "sample_size", label: "Sample size", kind: "int", group: "operators", default: "100", hint: "1..10000: values tried when a gene needs a new allowed value." },
  { name: "stop_criteria", label: "Stop criteria", kind: "json", group: "operators", hint: 'reach_<fitness> or saturate_<generations>, or a JSON list of them, e.g. ["reach_-0.01", "saturate_20"].' },
  { name: "fitness_batch_size", label: "Fitness batch size", kind: "int", group: "operators", hint: "1..solutions per population; the fitness then gets a batch of solutions." },
  { name: "gene_constraint", label: "Gene constraint", kind: "code", group: "callbacks", hint: "Python defining a list, one item per gene: None or a function (solution, values) returning the allowed values." },
  { name: "on_start", label: "on_start", kind: "code", group: "callbacks", hint: "Called with (ga) before the first generation." },
  { name: "on_fitness", label: "on_fitness", kind: "code", group: "callbacks", hint: "Called with (ga, population_fitness)." },
  { name: "on_parents", label: "on_parents", kind: "code", group: "callbacks", hint: "Called with (ga, selected_parents)." },
  { name: "on_crossover", label: "on_crossover", kind: "code", group: "callbacks", hint: "Called with (ga, offspring_crossover)." },
  { name: "on_mutation", label: "on_mutation", kind: "code", group: "callbacks", hint: "Called with (ga, offspring_mutation)." },
  { name: "on_generation", label: "on_generation", kind: "code", group: "callbacks", hint: 'Called with (ga) after each generation; returning "stop" ends the run.' },
  { name: "on_stop", label: "on_stop", kind: "code", group: "callbacks", hint: "Called with (ga, last_population_fitness) at the end." },
];

const listed = new Set([...CURATED.map((f) => f.name), ...CODE_FIELDS.map((f) => `${f}_entry`)]);

/** Every field of the form: the curated ones, then any GA parameter of the schema they do not cover (as JSON). */
export const FORM_FIELDS: FormField[] = [
  ...CURATED,
  ...GA_PARAMETER_NAMES.filter((name) => !listed.has(name)).map((name): FormField => ({ name, label: name, kind: "json", group: "other", hint: "JSON value, as the API takes it." })),
];

export const GROUPS: [FormField["group"], string][] = [
  ["basic", "Basic"],
  ["operators", "GA operators"],
  ["callbacks", "Callbacks"],
  ["other", "Other parameters"],
];

export type FormValues = Record<string, string>;

/**
 * The API body the form's values stand for, and the fields whose text is not even a value of their
 * kind (a word in a number field). Empty fields are left out (the API's defaults apply).
 */
export function formToBody(values: FormValues): { body: Record<string, unknown>; errors: Record<string, string> } {
  const body: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of FORM_FIELDS) {
    const raw = (values[f.name] ?? "").trim() === "" ? "" : values[f.name]!;
    if (f.kind === "code") {
      if (raw.trim()) {
        body[f.name] = raw.replace(/\r\n/g, "\n");
        body[`${f.name}_entry`] = (values[`${f.name}_entry`] ?? "").trim() || undefined;
      } else if ((values[`${f.name}_entry`] ?? "").trim()) {
        body[`${f.name}_entry`] = values[`${f.name}_entry`]!.trim();
      }
      continue;
    }
    if (!raw) continue;
    const text = raw.trim();
    switch (f.kind) {
      case "text":
      case "textarea":
        body[f.name] = raw;
        break;
      case "select":
        body[f.name] = text;
        break;
      case "bool":
        body[f.name] = text === "true";
        break;
      case "int":
      case "number": {
        const n = Number(text);
        if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) || !Number.isFinite(n)) errors[f.name] = "must be a number";
        else if (f.kind === "int" && !Number.isInteger(n)) errors[f.name] = "must be a whole number";
        else body[f.name] = n;
        break;
      }
      case "json":
        try {
          body[f.name] = JSON.parse(text);
        } catch {
          body[f.name] = text; // a bare word ("default", "reach_-0.5") is a string value
        }
        break;
    }
  }
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return { body, errors };
}

/** The form's values of stored parameters (a copy of an earlier submission). */
export function bodyToForm(params: Record<string, unknown>, extra: { name?: string; description?: string } = {}): FormValues {
  const values: FormValues = {};
  for (const [key, value] of Object.entries(params)) values[key] = typeof value === "string" ? value : JSON.stringify(value);
  if (extra.name !== undefined) values.name = extra.name;
  if (extra.description !== undefined) values.description = extra.description;
  return values;
}

export const initialValues = (): FormValues => Object.fromEntries(FORM_FIELDS.filter((f) => f.initial !== undefined).map((f) => [f.name, f.initial!]).concat([["fitness_func_entry", "fitness"]]));
