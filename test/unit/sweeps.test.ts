// A sweep's pure rules (src/model/sweeps.ts), node only: the combinations of a grid and their order, the
// children's seed-major order, the seeds, the parameters a grid may vary, and the choice of the best
// combination with its ties and the tests against it.
import { describe, expect, it } from "vitest";
import {
  childAt,
  combinationCount,
  combinationsOf,
  compareCombinations,
  GRID_PARAMETERS,
  isGridParameter,
  seedOf,
  verdict,
} from "../../src/model/sweeps";

describe("the grid", () => {
  it("makes every combination, the first parameter varying slowest", () => {
    const grid = { a: [1, 2], b: ["x", "y", "z"] };
    expect(combinationCount(grid)).toBe(6);
    expect(combinationsOf(grid)).toEqual([
      { a: 1, b: "x" },
      { a: 1, b: "y" },
      { a: 1, b: "z" },
      { a: 2, b: "x" },
      { a: 2, b: "y" },
      { a: 2, b: "z" },
    ]);
    expect(combinationsOf({ mutation_type: [null, "swap"] })).toEqual([{ mutation_type: null }, { mutation_type: "swap" }]);
  });

  it("varies parameters but not code, entries or random_seed", () => {
    expect(isGridParameter("sol_per_pop")).toBe(true);
    expect(isGridParameter("mutation_probability")).toBe(true);
    for (const name of ["random_seed", "fitness_func", "fitness_func_entry", "on_generation", "name", "colour"])
      expect(isGridParameter(name), name).toBe(false);
    expect(GRID_PARAMETERS.length).toBeGreaterThan(20);
  });
});

describe("children and seeds", () => {
  it("orders children seed-major: seed 0 of every combination first", () => {
    expect(Array.from({ length: 6 }, (_, i) => childAt(i, 3))).toEqual([
      { combination: 0, seed: 0 },
      { combination: 1, seed: 0 },
      { combination: 2, seed: 0 },
      { combination: 0, seed: 1 },
      { combination: 1, seed: 1 },
      { combination: 2, seed: 1 },
    ]);
  });
  it("gives seed j the base plus j, modulo 2^32", () => {
    expect([0, 1, 2].map((j) => seedOf(42, j))).toEqual([42, 43, 44]);
    expect(seedOf(4_294_967_295, 1)).toBe(0);
  });
});

describe("the best combination", () => {
  it("is the highest median; a tie goes to the higher mean, then to the lower index", () => {
    expect(compareCombinations([{ fitness: [1, 2, 3] }, { fitness: [2, 3, 4] }]).best).toBe(1);
    // Equal medians (2): the mean decides.
    expect(compareCombinations([{ fitness: [1, 2, 3] }, { fitness: [0, 2, 9] }]).best).toBe(1);
    // Equal medians and means: the first.
    expect(compareCombinations([{ fitness: [1, 2, 3] }, { fitness: [3, 2, 1] }]).best).toBe(0);
  });

  it("skips combinations without values, and there is none without any value", () => {
    const { best, rows } = compareCombinations([{ fitness: [] }, { fitness: [-1, -2] }, { fitness: [-5] }]);
    expect(best).toBe(1);
    expect(rows[0]!.test).toBeNull();
    expect(rows[1]!.test).toBeNull();
    expect(rows[2]!.test).toMatchObject({ u: 0, method: "exact" });
    expect(compareCombinations([{ fitness: [] }, { fitness: [] }]).best).toBeNull();
  });

  it("tests every other combination against the best, two-sided", () => {
    const { rows } = compareCombinations([{ fitness: [-1, -2, -3] }, { fitness: [-0.1, -0.2, -0.3] }]);
    expect(rows[0]!.test).toEqual({ u: 0, p: 0.1, method: "exact" });
    expect(rows[0]!.summary.median).toBe(-2);
  });

  it("says a p-value in words at 5 %", () => {
    expect(verdict(0.049)).toBe("a real difference at 5 % (p < 0.05)");
    expect(verdict(0.05)).toBe("no evidence of a difference at 5 %");
  });
});
