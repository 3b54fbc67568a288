// The rules between GA parameters (docs/api.md#creation-parameters), checked once every field has its
// type, and a stored job's parameters with a reexecute's or a continue's overrides checked again as a whole.
import type { z } from "zod";
import { validationError } from "../errors";
import { checkEntrySymbols } from "./entry-symbols";
import { fieldErrors } from "./fields";
import { FLOAT_TYPES, type GaParameters, gaObject, holdsCode, OPERATOR_FIELDS, SAVED_VALUES_CAP } from "./parameters";

type Issue = { path: string[]; message: string };
/** What the rules read: every parameter but the code (a creation body may name its fitness function by upload). */
type RuledParameters = Omit<GaParameters, "fitness_func">;
type BoundField = "init_range_low" | "init_range_high" | "random_mutation_min_val" | "random_mutation_max_val";

/** Rules between parameters, checked once every field has its type. */
function crossFieldIssues(p: RuledParameters): Issue[] {
  const issues: Issue[] = [];
  const add = (field: string, message: string) => issues.push({ path: [field], message });
  const upTo = (field: keyof RuledParameters, max: number, what: string) => {
    const v = p[field];
    if (typeof v === "number" && v > max) add(field, `must be at most ${what} (${max})`);
  };
  upTo("num_parents_mating", p.sol_per_pop, "sol_per_pop");
  // K_tournament past sol_per_pop: PyGAD clips it and warns (the run's warnings), as it does here.
  upTo("keep_elitism", p.sol_per_pop, "sol_per_pop");
  upTo("keep_parents", p.num_parents_mating, "num_parents_mating");
  upTo("fitness_batch_size", p.sol_per_pop, "sol_per_pop");
  // PyGAD draws uniform(low, high), which overflows to inf when high - low does (e.g. ±1.7e308).
  const span = (low: number, high: number) => Number.isFinite(high - low);
  const SPAN = "must be within about ±8.9e307 of the other bound: high - low must be a finite 64-bit number";
  // Bounds are taken in either order, and may be equal (that value, as in PyGAD); scalars or one per gene.
  const bounds = (lowField: BoundField, highField: BoundField, defaults: [number, number]) => {
    const low = p[lowField] ?? defaults[0];
    const high = p[highField] ?? defaults[1];
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
    } else if (typeof low === "number" && typeof high === "number" && !span(low, high)) add(highField, SPAN);
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
    const kept = snapshots * p.sol_per_pop * p.num_genes;
    add(
      "save_solutions",
      `keeps (num_generations + 1) × sol_per_pop × num_genes = ${kept} gene values; at most ${SAVED_VALUES_CAP} are kept`,
    );
  }
  if (p.save_best_solutions && snapshots * p.num_genes > SAVED_VALUES_CAP) {
    const kept = snapshots * p.num_genes;
    add("save_best_solutions", `keeps (num_generations + 1) × num_genes = ${kept} gene values; at most ${SAVED_VALUES_CAP} are kept`);
  }
  const adaptive = p.mutation_type === "adaptive";
  const controls = ["mutation_probability", "mutation_percent_genes", "mutation_num_genes"] as const;
  // PyGAD refuses adaptive mutation at its constructor unless one control is a pair.
  if (adaptive && controls.every((field) => p[field] === undefined || p[field] === "default"))
    add(
      "mutation_type",
      "adaptive needs mutation_probability, mutation_num_genes or mutation_percent_genes as a pair [low_quality, high_quality]",
    );
  for (const field of controls) {
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
  const numGenes = [p.mutation_num_genes].flat().filter((v): v is number => v !== undefined);
  if (numGenes.some((n) => n > p.num_genes)) add("mutation_num_genes", `must be at most num_genes (${p.num_genes})`);
  if (Array.isArray(p.gene_space) && p.gene_space.some((g) => g === null || typeof g === "object")) {
    if (p.gene_space.length !== p.num_genes) add("gene_space", `a per-gene space needs exactly num_genes (${p.num_genes}) items`);
  }
  const ranges = [p.gene_space, ...(Array.isArray(p.gene_space) ? p.gene_space : [])];
  for (const r of ranges) {
    if (r && typeof r === "object" && !Array.isArray(r)) {
      // Without a step PyGAD takes the bounds in either order; a step must lead from low up to high.
      if (r.step !== undefined && r.low >= r.high) add("gene_space", "a range with a step needs low < high");
      else if (!span(r.low, r.high)) add("gene_space", `a range ${SPAN}`);
    }
  }
  if ((p.parent_selection_type === "nsga3" || p.parent_selection_type === "tournament_nsga3") && p.nsga3_num_divisions === undefined)
    add("nsga3_num_divisions", `is required with parent_selection_type ${p.parent_selection_type} (PyGAD has no default)`);
  categoricalIssues(p, add);
  return issues;
}

/**
 * gene_categorical: one bool, or one per gene; each categorical gene needs a finite gene space — a list
 * of numbers or a range with a step — as PyGAD's constructor requires.
 */
function categoricalIssues(p: RuledParameters, add: (field: string, message: string) => void): void {
  const flags = p.gene_categorical;
  if (flags === undefined || flags === null) return;
  if (Array.isArray(flags) && flags.length !== p.num_genes) {
    add("gene_categorical", `a list needs exactly num_genes (${p.num_genes}) values`);
    return;
  }
  const space = p.gene_space;
  const perGene = Array.isArray(space) && space.some((g) => g === null || typeof g === "object");
  const finite = (s: unknown) =>
    (Array.isArray(s) && s.every((v) => typeof v === "number")) ||
    (s !== null && typeof s === "object" && !Array.isArray(s) && "step" in s && s.step !== undefined);
  const gene = Array.from({ length: p.num_genes }, (_, i) => i).find(
    (i) => (flags === true || (Array.isArray(flags) && flags[i])) && !finite(perGene ? (space as unknown[])[i] : space),
  );
  if (gene !== undefined)
    add(
      "gene_categorical",
      `gene ${gene} is categorical, so its gene_space must be a list of numbers or a range with a step (a finite set of values)`,
    );
}

/** `schema` with the rules between parameters added (a creation body, the full parameters). */
export function withCrossFieldRules<T extends z.ZodType<RuledParameters>>(schema: T) {
  return schema.superRefine((p, ctx) => {
    for (const issue of crossFieldIssues(p)) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  });
}

/** Full GA parameters (used to re-check a submission's parameters merged with overrides, and an import's). */
export const gaParametersSchema = withCrossFieldRules(gaObject);

/**
 * A submission's stored parameters with a reexecute/continue's `overrides` applied, checked again as a
 * whole. An operator overridden by one of PyGAD's names drops the custom operator's `_entry` it replaces.
 */
export function mergeParameters(base: GaParameters, overrides: Partial<GaParameters>): GaParameters {
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const field of OPERATOR_FIELDS) {
    const entryField = `${field}_entry`;
    if (overrides[field] !== undefined && !(entryField in overrides) && !holdsCode({ [field]: overrides[field] }, field))
      delete merged[entryField];
  }
  checkEntrySymbols(merged);
  const parsed = gaParametersSchema.safeParse(merged);
  if (!parsed.success) throw validationError(fieldErrors(parsed.error));
  return parsed.data;
}
