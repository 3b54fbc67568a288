// The submission forms (docs/dashboard.md#new-submission): the new-submission form — every creation
// parameter the API accepts, grouped, with PyGAD's defaults shown — and the run-again form. The form's
// values become the API's JSON body and pass the same schema (operations/submissions.ts over
// model/parameters.ts), so a field error names the same field as the API would; the choices of a select
// are read from that schema too. A GA parameter this table does not list yet (added to the schema later)
// still appears, under "Other".

import { z } from "zod";
import { type ApiError, type FieldError, refusedField, refusedFields } from "../../errors";
import type { GaParameters } from "../../model/parameters";
import {
  CODE_FIELDS,
  GA_PARAMETER_NAMES,
  GA_PARAMETER_SCHEMAS,
  holdsCode,
  isOperatorField,
  OPERATOR_FIELDS,
  OPERATOR_NAMES,
} from "../../model/parameters";
import { wholeGenerations } from "../shared/actions";

/**
 * How a field's text becomes a value: `numbers` is a number or a list of them (one per gene: `1, 2, 3`
 * or `[1, 2, 3]`); `words` is a word or a list of them (`reach_1e-3, time_60`), or any JSON value
 * (`["float", 2]`); `json` is JSON, or a bare word as a string.
 */
export type FieldKind = "text" | "textarea" | "int" | "number" | "numbers" | "select" | "bool" | "json" | "words" | "code";

export interface FormField {
  name: string;
  label: string;
  kind: FieldKind;
  group: "basic" | "operators" | "saved" | "callbacks" | "custom" | "other";
  /** A custom operator's code field: the API field it fills (with its `_entry`) in place of the select's name. */
  param?: string;
  required?: boolean;
  /** What PyGAD (or Allele) uses when the field is left empty. */
  default?: string;
  hint?: string;
  /** A select's choices: [value, label]; read from the API's schema (an enum, and `null` where it is nullable). */
  options?: [string, string][];
  /** Values offered as you type (a datalist); any other value may be typed too. */
  suggestions?: string[];
  /** What the field takes, said after the schema's bare "Invalid input" (a union of forms). */
  expects?: string;
  /** Initial value of a new form. */
  initial?: string;
}

const SPHERE =
  "import numpy\n\n\ndef fitness(ga, solution, solution_idx):\n    # Higher is better: the sphere function, maximised at 0.\n    return -float(numpy.sum(solution ** 2))\n";

/**
 * A select's choices from the parameter's schema: its enum values (an operator's: PyGAD's names, the
 * other branch of its union being a custom operator's code), and "none" (null) where null is allowed.
 */
function choicesOf(name: string, noneLabel = "none"): [string, string][] {
  let schema: z.ZodType | undefined = GA_PARAMETER_SCHEMAS[name];
  let nullable = false;
  while (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    if (schema instanceof z.ZodNullable) nullable = true;
    schema = schema.unwrap() as z.ZodType;
  }
  const options = isOperatorField(name) ? OPERATOR_NAMES[name] : schema instanceof z.ZodEnum ? (schema.options as string[]) : null;
  if (!options) throw new Error(`${name} is not an enum in the API's schema`);
  const values = options.map((v): [string, string] => [v, v]);
  return nullable ? [...values, ["null", noneLabel]] : values;
}

/** The form's name of a custom operator's code field (the select keeps the operator's own name). */
const customField = (field: string) => `custom_${field}`;

/** The arguments PyGAD calls each custom operator with (docs/api.md#custom-operators). */
const OPERATOR_CALLS: Record<(typeof OPERATOR_FIELDS)[number], string> = {
  parent_selection_type: "(fitness, num_parents, ga) returning (parents, their indices) as numpy arrays",
  crossover_type: "(parents, offspring_size, ga) returning the offspring as a numpy array",
  mutation_type: "(offspring, ga) returning the mutated offspring as a numpy array",
};

const PER_GENE = "a number, or a list of numbers (one per gene)";

const CURATED: FormField[] = [
  { name: "name", label: "Name", kind: "text", group: "basic", initial: "sphere", hint: "A label for the list (≤ 200 characters)." },
  { name: "description", label: "Description", kind: "textarea", group: "basic", hint: "Free text (≤ 2,000 characters)." },
  {
    name: "num_generations",
    label: "Generations",
    kind: "int",
    group: "basic",
    required: true,
    initial: "100",
    hint: "1 and up, at most your plan's cap.",
  },
  { name: "sol_per_pop", label: "Solutions per population", kind: "int", group: "basic", required: true, initial: "20", hint: "2..5000." },
  {
    name: "num_parents_mating",
    label: "Parents mating",
    kind: "int",
    group: "basic",
    required: true,
    initial: "4",
    hint: "1..solutions per population.",
  },
  {
    name: "num_genes",
    label: "Genes",
    kind: "int",
    group: "basic",
    required: true,
    initial: "10",
    hint: "1 and up, at most your plan's cap.",
  },
  {
    name: "init_range_low",
    label: "Initial range, low",
    kind: "numbers",
    group: "basic",
    default: "-4",
    expects: PER_GENE,
    hint: "A number, or one per gene: 0, 0, -5 (then both bounds per gene).",
  },
  {
    name: "init_range_high",
    label: "Initial range, high",
    kind: "numbers",
    group: "basic",
    default: "4",
    expects: PER_GENE,
    hint: "A number, or one per gene: 1, 1, 5.",
  },
  {
    name: "gene_type",
    label: "Gene type",
    kind: "words",
    group: "basic",
    default: "float",
    suggestions: [
      "int",
      "float",
      "float32",
      "float64",
      "int8",
      "int16",
      "int32",
      "int64",
      "uint8",
      '["float", 1]',
      '["float", 2]',
      '["float", 3]',
    ],
    expects: "int, float, a numpy type (int8 … uint64, float16 … float64), a pair [type, precision], or a list of them (one per gene)",
    hint: 'int, float or a numpy type; ["float", 2] rounds to 2 decimals; one per gene: int, float, float or [["float", 2], "int", "int"].',
  },
  { name: "random_seed", label: "Random seed", kind: "int", group: "basic", hint: "0..4294967295; the same seed gives the same run." },
  {
    name: "fitness_func",
    label: "Fitness function",
    kind: "code",
    group: "basic",
    required: true,
    initial: SPHERE,
    hint: "Python: a function (ga, solution, solution_idx) returning a number, higher is better — or a list of numbers for several objectives (each maximised; use nsga2 selection).",
  },
  {
    name: "parent_selection_type",
    label: "Parent selection",
    kind: "select",
    group: "operators",
    options: choicesOf("parent_selection_type"),
    default: "sss",
    hint: "nsga2, tournament_nsga2, nsga3 and tournament_nsga3 are made for a fitness returning several objectives (nsga3 for three or more).",
  },
  {
    name: "K_tournament",
    label: "Tournament size (K)",
    kind: "int",
    group: "operators",
    default: "3",
    hint: "With the tournament selections; past the solutions per population PyGAD uses all of them (and warns).",
  },
  {
    name: "nsga3_num_divisions",
    label: "NSGA-III divisions",
    kind: "int",
    group: "operators",
    hint: "Required with nsga3 and tournament_nsga3: divisions per objective axis of the reference points (C(M + p − 1, p) of them for M objectives; at most 5,000).",
  },
  {
    name: "keep_parents",
    label: "Parents kept",
    kind: "int",
    group: "operators",
    default: "-1",
    hint: "-1 keeps all; only without elitism.",
  },
  { name: "keep_elitism", label: "Elites kept", kind: "int", group: "operators", default: "1" },
  {
    name: "crossover_type",
    label: "Crossover",
    kind: "select",
    group: "operators",
    options: choicesOf("crossover_type", "none (no crossover)"),
    default: "single_point",
  },
  { name: "crossover_probability", label: "Crossover probability", kind: "number", group: "operators", hint: "0..1." },
  {
    name: "sbx_crossover_eta",
    label: "SBX distribution index",
    kind: "number",
    group: "operators",
    default: "30",
    hint: "With sbx crossover: higher keeps the children closer to their parents (> 0).",
  },
  {
    name: "mutation_type",
    label: "Mutation",
    kind: "select",
    group: "operators",
    options: choicesOf("mutation_type", "none (no mutation)"),
    default: "random",
  },
  {
    name: "mutation_probability",
    label: "Mutation probability",
    kind: "json",
    group: "operators",
    expects: "a number in 0..1, or a pair [low, high] with adaptive mutation",
    hint: "0..1, or a pair [low, high] with adaptive mutation.",
  },
  {
    name: "mutation_percent_genes",
    label: "Mutation percent of genes",
    kind: "json",
    group: "operators",
    default: "default (10)",
    expects: '"default", a number in (0, 100], or a pair with adaptive mutation',
    hint: '(0, 100], "default", or a pair with adaptive mutation.',
  },
  {
    name: "mutation_num_genes",
    label: "Genes mutated",
    kind: "json",
    group: "operators",
    expects: "a whole number 1..genes, or a pair with adaptive mutation",
    hint: "1..genes, or a pair with adaptive mutation.",
  },
  {
    name: "polynomial_mutation_eta",
    label: "Polynomial mutation index",
    kind: "number",
    group: "operators",
    default: "20",
    hint: "With polynomial mutation: higher makes smaller steps (> 0).",
  },
  { name: "mutation_by_replacement", label: "Mutation by replacement", kind: "bool", group: "operators", default: "no" },
  {
    name: "random_mutation_min_val",
    label: "Random mutation, min",
    kind: "numbers",
    group: "operators",
    default: "-1",
    expects: PER_GENE,
    hint: "A number, or one per gene: -1, -1, 0 (then both bounds per gene).",
  },
  {
    name: "random_mutation_max_val",
    label: "Random mutation, max",
    kind: "numbers",
    group: "operators",
    default: "1",
    expects: PER_GENE,
    hint: "A number, or one per gene; equal bounds give that value.",
  },
  {
    name: "gene_space",
    label: "Gene space",
    kind: "json",
    group: "operators",
    expects: 'a list of values, a range {"low", "high", "step"}, or one item per gene',
    hint: 'JSON: a list of values, {"low": 0, "high": 1, "step": 0.1}, or one item per gene.',
  },
  {
    name: "gene_categorical",
    label: "Categorical genes",
    kind: "json",
    group: "operators",
    expects: "true, false, or a list of true/false (one per gene)",
    hint: "Genes whose values are categories without order: true for all, or one true/false per gene; each needs a finite gene space. SBX copies a parent's value there and polynomial mutation picks another allowed value.",
  },
  { name: "allow_duplicate_genes", label: "Allow duplicate genes", kind: "bool", group: "operators", default: "yes" },
  {
    name: "sample_size",
    label: "Sample size",
    kind: "int",
    group: "operators",
    default: "100",
    hint: "1..10000: values tried when a gene needs a new allowed value.",
  },
  {
    name: "stop_criteria",
    label: "Stop criteria",
    kind: "words",
    group: "operators",
    expects: "reach_N, saturate_N, time_N or evaluations_N, or a list of them",
    hint: "reach_<fitness> (reach_1e-3; several objectives: reach_<n1>_<n2>), saturate_<generations>, time_<seconds>, evaluations_<fitness calls>; several separated by commas: reach_-0.01, time_60.",
  },
  {
    name: "fitness_batch_size",
    label: "Fitness batch size",
    kind: "int",
    group: "operators",
    hint: "1..solutions per population; the fitness then gets a batch of solutions.",
  },
  {
    name: "parallel_processing",
    label: "Parallel fitness",
    kind: "json",
    group: "operators",
    hint: 'Fitness evaluations at once: N (threads), ["process", N] or ["thread", N]; the same result as one at a time; at most the workers of how the run is paid (below); the run waits for N places.',
  },
  {
    name: "save_solutions",
    label: "Save every solution",
    kind: "bool",
    group: "saved",
    default: "no",
    hint: "The result's solutions.json: every solution of every generation; at most 1,000,000 gene values ((generations + 1) × solutions × genes). The run then takes stock PyGAD's path.",
  },
  {
    name: "save_best_solutions",
    label: "Save each generation's best",
    kind: "bool",
    group: "saved",
    default: "no",
    hint: "The result's best_solutions.json: the best solution of every generation; at most 1,000,000 gene values ((generations + 1) × genes).",
  },
  {
    name: "gene_constraint",
    label: "Gene constraint",
    kind: "code",
    group: "callbacks",
    hint: "Python defining a list, one item per gene: None or a function (solution, values) returning the allowed values.",
  },
  { name: "on_start", label: "on_start", kind: "code", group: "callbacks", hint: "Called with (ga) before the first generation." },
  { name: "on_fitness", label: "on_fitness", kind: "code", group: "callbacks", hint: "Called with (ga, population_fitness)." },
  { name: "on_parents", label: "on_parents", kind: "code", group: "callbacks", hint: "Called with (ga, selected_parents)." },
  { name: "on_crossover", label: "on_crossover", kind: "code", group: "callbacks", hint: "Called with (ga, offspring_crossover)." },
  { name: "on_mutation", label: "on_mutation", kind: "code", group: "callbacks", hint: "Called with (ga, offspring_mutation)." },
  {
    name: "on_generation",
    label: "on_generation",
    kind: "code",
    group: "callbacks",
    hint: 'Called with (ga) after each generation; returning "stop" ends the run.',
  },
  { name: "on_stop", label: "on_stop", kind: "code", group: "callbacks", hint: "Called with (ga, last_population_fitness) at the end." },
  { name: "suppress_warnings", label: "Suppress PyGAD's warnings", kind: "bool", group: "other", default: "no" },
  {
    name: "initial_population",
    label: "Start population",
    kind: "json",
    group: "other",
    expects: "a list of solutions, each a list of one number per gene",
    hint: "JSON: one row per solution (solutions per population), one number per gene, in place of the population PyGAD draws: [[0.1, 2, 3], [4, 5, 6]]. Each run but a continue starts from it.",
  },
  ...OPERATOR_FIELDS.map(
    (field): FormField => ({
      name: customField(field),
      param: field,
      label: `Custom ${field}`,
      kind: "code",
      group: "custom",
      hint: `Python defining a function PyGAD calls with ${OPERATOR_CALLS[field]}; it takes the place of the choice above.`,
    }),
  ),
];

const listed = new Set([...CURATED.map((f) => f.name), ...CODE_FIELDS.map((f) => `${f}_entry`)]);

/** Every field of the form: the curated ones, then any GA parameter of the schema they do not cover (as JSON). */
export const FORM_FIELDS: FormField[] = [
  ...CURATED,
  ...GA_PARAMETER_NAMES.filter((name) => !listed.has(name)).map(
    (name): FormField => ({ name, label: name, kind: "json", group: "other", hint: "JSON value, as the API takes it." }),
  ),
];

export const GROUPS: [FormField["group"], string][] = [
  ["basic", "Basic"],
  ["operators", "GA operators"],
  ["saved", "Saved solutions"],
  ["callbacks", "Callbacks"],
  ["custom", "Custom operators"],
  ["other", "Other parameters"],
];

export type FormValues = Record<string, string>;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const number = (text: string): number | null => (NUMBER.test(text) && Number.isFinite(Number(text)) ? Number(text) : null);

/** A value of a field of kind `kind` from its (trimmed, non-empty) text, or the words of its error. */
function parseField(kind: FieldKind, text: string): { value: unknown } | { error: string } {
  switch (kind) {
    case "select":
      return { value: text === "null" ? null : text };
    case "bool":
      return { value: text === "true" };
    case "int":
    case "number": {
      const n = number(text);
      if (n === null) return { error: "must be a number" };
      return kind === "int" && !Number.isInteger(n) ? { error: "must be a whole number" } : { value: n };
    }
    case "numbers": {
      // One number, or one per gene: `1, 2, 3`, `1 2 3` or JSON `[1, 2, 3]`.
      const items = text
        .replace(/^\[(.*)\]$/s, "$1")
        .split(/[\s,]+/)
        .filter(Boolean);
      const values = items.map(number);
      if (!items.length || values.some((v) => v === null))
        return { error: "must be a number, or a list of numbers (one per gene) such as 0, 0.5, -1" };
      return { value: text.startsWith("[") || values.length > 1 ? values : values[0] };
    }
    case "words": {
      // JSON (`["float", 2]`, `["reach_1", "time_5"]`), else one word or a list of words.
      try {
        return { value: JSON.parse(text) };
      } catch {
        if (text.startsWith("[") || text.startsWith("{"))
          return { error: 'is not valid JSON (a list is written ["a", "b"], or a, b without brackets)' };
        const words = text.split(/[\s,]+/).filter(Boolean);
        return { value: words.length === 1 ? words[0] : words };
      }
    }
    case "json":
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { value: text }; // a bare word ("default") is a string value
      }
    default:
      return { value: text };
  }
}

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
      const field = f.param ?? f.name; // a custom operator fills its operator's field
      if (raw.trim()) {
        body[field] = raw.replace(/\r\n/g, "\n");
        body[`${field}_entry`] = (values[`${field}_entry`] ?? "").trim() || undefined;
      } else if ((values[`${field}_entry`] ?? "").trim()) {
        body[`${field}_entry`] = values[`${field}_entry`]!.trim();
      }
      continue;
    }
    if (isOperatorField(f.name) && (values[customField(f.name)] ?? "").trim()) continue; // the custom code is the operator
    if (!raw) continue;
    if (f.kind === "text" || f.kind === "textarea") {
      body[f.name] = raw;
      continue;
    }
    const parsed = parseField(f.kind, raw.trim());
    if ("error" in parsed) errors[f.name] = parsed.error;
    else body[f.name] = parsed.value;
  }
  for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
  return { body, errors };
}

const BY_NAME = new Map(FORM_FIELDS.map((f) => [f.name, f]));

/**
 * The API's field errors as the form shows them, by form field: an item of a list is named
 * (`stop_criteria.1` → "item 2: …"), and the schema's bare "Invalid input" (none of a union's forms)
 * says what the field takes. The first error of a field is kept.
 */
export function formErrors(fields: FieldError[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { field, message } of fields) {
    const [name, ...rest] = field.split(".");
    if (!name || out[name] !== undefined) continue;
    const expects = BY_NAME.get(name)?.expects;
    const text = message === "Invalid input" && expects ? `must be ${expects}` : plainWords(message);
    out[name] = /^\d+$/.test(rest[0] ?? "") ? `item ${Number(rest[0]) + 1}: ${text}` : text;
  }
  return out;
}

const KIND_WORDS: Record<string, string> = {
  number: "a number",
  int: "a whole number",
  string: "text",
  array: "a list",
  object: "an object",
  boolean: "yes or no",
};

/**
 * A validator's message in plain words, said of the field ("Too small: expected number to be >=1" →
 * "must be at least 1"); a message it does not know is kept as it is.
 */
export function plainWords(message: string): string {
  let m = /^Too (small|big): expected number to be (>=|>|<=|<)(.+)$/.exec(message);
  if (m) {
    const words = { ">=": "at least", ">": "greater than", "<=": "at most", "<": "less than" }[m[2] as ">=" | ">" | "<=" | "<"];
    return `must be ${words} ${m[3]}`;
  }
  m = /^Too (small|big): expected (string|array) to have (>=|>|<=|<)(\d+) (characters|items)$/.exec(message);
  if (m) {
    const words = { ">=": "at least", ">": "more than", "<=": "at most", "<": "fewer than" }[m[3] as ">=" | ">" | "<=" | "<"];
    return `must have ${words} ${m[4]} ${m[5]}`;
  }
  m = /^Invalid input: expected (\w+), received (\w+)$/.exec(message);
  if (m) return m[2] === "undefined" ? "is required" : `must be ${KIND_WORDS[m[1]!] ?? m[1]}`;
  m = /^Invalid option: expected one of (.+)$/.exec(message);
  if (m) return `must be one of ${m[1]!.split("|").join(", ")}`;
  if (message === "Invalid input") return "is not a value this field takes";
  return message;
}

/** The form's label of a field name of its errors (an entry field: "<label>, entry"); the name when unknown. */
export function labelOfField(name: string): string {
  const f = BY_NAME.get(name);
  if (f) return f.label;
  const entry = /^(.+)_entry$/.exec(name);
  const owner = entry ? FORM_FIELDS.find((x) => (x.param ?? x.name) === entry[1]) : undefined;
  return owner ? `${owner.label}, entry` : name;
}

/** The form's values of stored parameters (a copy of an earlier submission). */
export function bodyToForm(params: Record<string, unknown>, extra: { name?: string; description?: string } = {}): FormValues {
  const values: FormValues = {};
  for (const [key, value] of Object.entries(params)) {
    // A custom operator's source goes to its code field, not to the select of PyGAD's names.
    const name = isOperatorField(key) && holdsCode(params, key) ? customField(key) : key;
    values[name] = typeof value === "string" ? value : JSON.stringify(value);
  }
  if (extra.name !== undefined) values.name = extra.name;
  if (extra.description !== undefined) values.description = extra.description;
  return values;
}

export const initialValues = (): FormValues =>
  Object.fromEntries(
    FORM_FIELDS.filter((f) => f.initial !== undefined)
      .map((f) => [f.name, f.initial!])
      .concat([["fitness_func_entry", "fitness"]]),
  );

/**
 * A refusal of the form's fields (an entry symbol, a size, the schema) by field, or null: a refusal of
 * the whole form (a gate). `toForm` names the API's fields as the form does (the sweep form's grid rows).
 */
export function refusalByField(err: ApiError, toForm?: (fields: FieldError[]) => Record<string, string>): Record<string, string> | null {
  const fields = refusedFields(err);
  if (fields?.length) return (toForm ?? formErrors)(fields);
  const field = refusedField(err);
  if (field) return toForm ? toForm([{ field, message: err.message }]) : { [field]: err.message };
  return null;
}

/** The run-again form's overrides: its number of generations when one is given (else the submission's own). */
export function runAgainOverrides(form: Record<string, string>): Partial<GaParameters> {
  return form.num_generations?.trim() ? { num_generations: wholeGenerations(form.num_generations) } : {};
}
