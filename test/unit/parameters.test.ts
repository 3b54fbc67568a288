// The GA parameters' cross-field rules (docs/api.md#creation-parameters) under plain Node: the rules
// between fields that zod checks once every field has its type, every failing field named at once, and
// the same rules again on a submission's parameters merged with reexecute/continue overrides.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors";
import { gaParametersSchema, mergeParameters } from "../../src/model/parameter-rules";
import { createSubmissionSchema } from "../../src/operations/submissions";

const FITNESS = "def fitness(ga, solution, idx):\n    return 0.0\n";
const BASE = {
  num_generations: 10,
  num_parents_mating: 4,
  sol_per_pop: 10,
  num_genes: 3,
  fitness_func: FITNESS,
  fitness_func_entry: "fitness",
};

/** The failing fields of `overrides` on top of a valid job, as [field, message] pairs ([] when valid). */
function problems(overrides: Record<string, unknown>): [string, string][] {
  const parsed = gaParametersSchema.safeParse({ ...BASE, ...overrides });
  return parsed.success ? [] : parsed.error.issues.map((issue) => [issue.path.join("."), issue.message]);
}
const fields = (overrides: Record<string, unknown>) => problems(overrides).map(([field]) => field);

describe("rules between parameters", () => {
  it("accepts a job that keeps every rule, at each rule's limit", () => {
    expect(problems({})).toEqual([]);
    expect(
      problems({
        num_parents_mating: 10,
        K_tournament: 10,
        keep_elitism: 10,
        keep_parents: 10,
        fitness_batch_size: 10,
        mutation_num_genes: 3,
      }),
    ).toEqual([]);
  });

  it.each([
    ["num_parents_mating", 11, "must be at most sol_per_pop (10)"],
    ["keep_elitism", 11, "must be at most sol_per_pop (10)"],
    ["fitness_batch_size", 11, "must be at most sol_per_pop (10)"],
    ["keep_parents", 5, "must be at most num_parents_mating (4)"],
    ["mutation_num_genes", 4, "must be at most num_genes (3)"],
  ])("%s past the field it depends on (%s)", (field, value, message) => {
    expect(problems({ [field]: value })).toEqual([[field, message]]);
  });

  it("checks the bound against the job's own value of the other field", () => {
    expect(fields({ num_parents_mating: 12, sol_per_pop: 12 })).toEqual([]);
    expect(fields({ num_parents_mating: 12, sol_per_pop: 11 })).toEqual(["num_parents_mating"]);
  });

  it("takes init_range and random_mutation bounds as two numbers or two lists of num_genes values", () => {
    expect(fields({ init_range_low: [0, 0, 0], init_range_high: [1, 2, 3] })).toEqual([]);
    expect(fields({ init_range_low: 5, init_range_high: -5 })).toEqual([]); // either order, as in PyGAD
    expect(problems({ init_range_low: [0, 0, 0], init_range_high: 1 })).toEqual([
      ["init_range_low", "init_range_low and init_range_high must both be numbers or both be lists (one value per gene)"],
    ]);
    expect(fields({ init_range_low: [0, 0], init_range_high: [1, 1, 1, 1] })).toEqual(["init_range_low", "init_range_high"]);
    expect(fields({ random_mutation_min_val: [-1, -1], random_mutation_max_val: [1, 1] })).toEqual([
      "random_mutation_min_val",
      "random_mutation_max_val",
    ]);
  });

  it("refuses bounds whose span overflows a 64-bit float (PyGAD's uniform draw would give inf)", () => {
    expect(fields({ init_range_low: -1.7e308, init_range_high: 1.7e308 })).toEqual(["init_range_high"]);
    expect(fields({ init_range_low: [0, -1.7e308, 0], init_range_high: [1, 1.7e308, 1] })).toEqual(["init_range_high"]);
    expect(fields({ random_mutation_min_val: -8e307, random_mutation_max_val: 8e307 })).toEqual([]); // a span of 1.6e308 is finite
    expect(fields({ gene_space: { low: -1.7e308, high: 1.7e308 } })).toEqual(["gene_space"]);
  });

  it("needs one gene_type per gene in a per-gene list, and a precision only on a float type", () => {
    expect(fields({ gene_type: ["int", "float", ["float", 2]] })).toEqual([]);
    expect(fields({ gene_type: ["float", 3] })).toEqual([]); // [type, precision] is one type for every gene
    expect(fields({ gene_type: ["int", null] })).toEqual([]);
    expect(problems({ gene_type: ["int", "float"] })).toEqual([["gene_type", "a per-gene list needs exactly num_genes (3) types"]]);
    expect(fields({ gene_type: ["int", 2] })).toEqual(["gene_type"]);
    expect(fields({ gene_type: ["float", ["int32", 1], "int"] })).toEqual(["gene_type"]);
  });

  it("caps what save_solutions and save_best_solutions keep at 1,000,000 gene values", () => {
    // (num_generations + 1) × sol_per_pop × num_genes
    expect(fields({ save_solutions: true, num_generations: 9_999, sol_per_pop: 10, num_genes: 10 })).toEqual([]);
    expect(problems({ save_solutions: true, num_generations: 10_000, sol_per_pop: 10, num_genes: 10 })).toEqual([
      ["save_solutions", "keeps (num_generations + 1) × sol_per_pop × num_genes = 1000100 gene values; at most 1000000 are kept"],
    ]);
    expect(fields({ save_solutions: false, num_generations: 10_000, sol_per_pop: 10, num_genes: 10 })).toEqual([]);
    // (num_generations + 1) × num_genes
    expect(fields({ save_best_solutions: true, num_generations: 99_999, num_genes: 10 })).toEqual([]);
    expect(fields({ save_best_solutions: true, num_generations: 100_000, num_genes: 10 })).toEqual(["save_best_solutions"]);
  });

  it("takes mutation pairs exactly when mutation_type is adaptive", () => {
    expect(fields({ mutation_type: "adaptive", mutation_probability: [0.5, 0.1] })).toEqual([]);
    expect(fields({ mutation_type: "random", mutation_probability: 0.1, mutation_percent_genes: "default" })).toEqual([]);
    expect(problems({ mutation_type: "adaptive", mutation_probability: 0.1 })).toEqual([
      ["mutation_probability", "must be a pair [low_quality, high_quality] when mutation_type is adaptive"],
    ]);
    expect(problems({ mutation_num_genes: [2, 1] })).toEqual([
      ["mutation_num_genes", "must be a single value unless mutation_type is adaptive"],
    ]);
    expect(fields({ mutation_type: "adaptive", mutation_num_genes: [2, 4] })).toEqual(["mutation_num_genes"]); // 4 > num_genes
  });

  it("takes K_tournament past sol_per_pop, as PyGAD does (it clips it and warns)", () => {
    expect(fields({ K_tournament: 11 })).toEqual([]);
  });

  it("needs a per-gene gene_space for every gene; a range in either order, but low < high with a step", () => {
    expect(fields({ gene_space: [1, 2, 3, 4, 5] })).toEqual([]); // one set of values for every gene
    expect(fields({ gene_space: [[1, 2], null, { low: 0, high: 1 }] })).toEqual([]);
    expect(problems({ gene_space: [[1, 2], null] })).toEqual([["gene_space", "a per-gene space needs exactly num_genes (3) items"]]);
    expect(fields({ gene_space: { low: 3, high: 1 } })).toEqual([]); // PyGAD draws uniform(low, high) either way
    expect(problems({ gene_space: { low: 1, high: 1, step: 0.5 } })).toEqual([["gene_space", "a range with a step needs low < high"]]);
    expect(fields({ gene_space: [{ low: 0, high: 1 }, { low: 2, high: 1, step: 1 }, null] })).toEqual(["gene_space"]);
  });

  it("names every failing field at once", () => {
    expect(
      fields({ num_parents_mating: 20, keep_elitism: 11, gene_type: ["int"], save_best_solutions: true, num_generations: 999_999 }),
    ).toEqual(["num_parents_mating", "keep_elitism", "gene_type", "save_best_solutions"]);
  });

  it("are checked only once every field has its type (a wrong type is the only problem named)", () => {
    expect(problems({ sol_per_pop: "10", num_parents_mating: 20 })).toEqual([["sol_per_pop", expect.any(String)]]);
  });
});

describe("the body of POST /submissions", () => {
  it("applies the same rules, and needs fitness_func or a code upload in its place, reported with the rest", () => {
    const { fitness_func: _, ...withoutCode } = BASE;
    const parsed = createSubmissionSchema.safeParse({ ...withoutCode, name: "n", num_parents_mating: 11 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual(
      expect.arrayContaining([
        ["num_parents_mating", "must be at most sol_per_pop (10)"],
        ["fitness_func", "is required (or fitness_func_id, a code upload)"],
      ]),
    );
    expect(createSubmissionSchema.safeParse({ ...withoutCode, fitness_func_id: "upload1" }).success).toBe(true);
  });
});

describe("overrides merged into stored parameters", () => {
  const STORED = gaParametersSchema.parse(BASE);
  it("are checked as a whole: an override can break a rule with a stored value", () => {
    expect(mergeParameters(STORED, { sol_per_pop: 20, num_parents_mating: 20 })).toMatchObject({ sol_per_pop: 20, num_parents_mating: 20 });
    let refused: unknown;
    try {
      mergeParameters(STORED, { sol_per_pop: 3 });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: "validation_failed",
      details: { fields: [{ field: "num_parents_mating", message: "must be at most sol_per_pop (3)" }] },
    });
  });

  it("need the entry of a code field they bring, defined at the top level of its source", () => {
    expect(() => mergeParameters(STORED, { on_start: "def begin(ga):\n    pass\n" })).toThrow(
      expect.objectContaining({ code: "entry_symbol_required" }),
    );
    expect(() => mergeParameters(STORED, { on_start: "def begin(ga):\n    pass\n", on_start_entry: "start" })).toThrow(
      expect.objectContaining({ code: "entry_symbol_not_found" }),
    );
    expect(mergeParameters(STORED, { on_start: "def begin(ga):\n    pass\n", on_start_entry: "begin" })).toMatchObject({
      on_start_entry: "begin",
    });
  });
});
