// The words and rules of a parameter sweep (docs/api.md#sweeps), each stated once: its statuses, which
// parameters a grid may vary, how the grid becomes combinations and the combinations children (the order
// they wait in), how each child's random_seed is derived, and how the combinations are compared —
// the best one and a rank test of every other against it (statistics.ts).
import { CODE_FIELDS, GA_PARAMETER_NAMES, isOperatorField, OPERATOR_NAMES } from "./parameters";
import { type MannWhitney, mannWhitneyU, type Summary, summarize } from "./statistics";

/** A sweep runs until every child has ended; then it is completed, or cancelled when that was asked. */
export const SWEEP_STATUSES = ["running", "completed", "cancelled"] as const;
export type SweepStatus = (typeof SWEEP_STATUSES)[number];
/** How a sweep is stored while its deletion is under way (never shown: the sweep is gone for readers). */
export type StoredSweepStatus = SweepStatus | "deleting";

/**
 * The parameters a grid may vary: every creation parameter but the code fields, their entries and
 * random_seed. The operators are varied by PyGAD's names only (a custom operator is the base's code).
 */
export const GRID_PARAMETERS: readonly string[] = GA_PARAMETER_NAMES.filter(
  (name) =>
    (isOperatorField(name) || !(CODE_FIELDS as readonly string[]).includes(name)) && !name.endsWith("_entry") && name !== "random_seed",
);
export const isGridParameter = (name: string) => GRID_PARAMETERS.includes(name);
/** Why a grid's value of an operator is refused: a grid varies PyGAD's names, never code (null if it is one). */
export function gridOperatorProblem(name: string, value: unknown): string | null {
  if (!isOperatorField(name) || typeof value !== "string") return null;
  const names: readonly string[] = OPERATOR_NAMES[name];
  return names.includes(value)
    ? null
    : `must be one of PyGAD's names (${names.join(", ")}): a custom operator is the base's code, not a grid's value`;
}

/** At most this many parameters in one grid, and this many values for one of them. */
export const MAX_GRID_PARAMETERS = 10;
export const MAX_GRID_VALUES = 100;
/** At most this many seeds per combination (the children cap, a plan limit, bounds the total). */
export const MAX_SEEDS = 1000;
/** At most this many children in any sweep, whatever the plan or an override says (one D1 batch writes them). */
export const MAX_SWEEP_CHILDREN = 1000;

/** A grid: each varied parameter with the values it takes, in the order given. */
export type Grid = Record<string, unknown[]>;
/** One combination: a value for every parameter of the grid. */
export type Combination = Record<string, unknown>;

/** How many combinations a grid has (the product of its lists' lengths). */
export const combinationCount = (grid: Grid) => Object.values(grid).reduce((n, values) => n * values.length, 1);

/**
 * Every combination of the grid, the first parameter varying slowest ({a: [1, 2], b: [x, y]} → a1 bx,
 * a1 by, a2 bx, a2 by). A combination's index in this list is its number in the sweep's answers.
 */
export function combinationsOf(grid: Grid): Combination[] {
  let combos: Combination[] = [{}];
  for (const [name, values] of Object.entries(grid)) {
    combos = combos.flatMap((combo) => values.map((value) => ({ ...combo, [name]: value })));
  }
  return combos;
}

/**
 * Child `index` of a sweep of `combinations` combinations: seed-major, so the children wait in the order
 * seed 0 of every combination, then seed 1 of every combination, … — the first results cover the grid.
 */
export const childAt = (index: number, combinations: number) => ({
  combination: index % combinations,
  seed: Math.floor(index / combinations),
});

const UINT32 = 2 ** 32;

/**
 * The random_seed of seed `j` (0-based): `base + j` modulo 2^32, the same `k` seeds for every
 * combination — so two combinations differ by their parameters, not by their draws. `base` is the
 * sweep's base.random_seed when given, else the first four bytes of SHA-256 of the sweep's id
 * (operations/sweeps.ts): deterministic for the sweep, different across sweeps.
 */
export const seedOf = (base: number, j: number) => (base + j) % UINT32;

/** A combination's final best fitness values (finite ones, one per succeeded child with a single objective). */
export interface CombinationSample {
  fitness: number[];
}

export interface CombinationComparison {
  summary: Summary;
  /** The Mann–Whitney test of this combination's values against the best's; null for the best itself and for empty samples. */
  test: MannWhitney | null;
}

/**
 * The best combination — the highest median final best fitness (PyGAD maximises fitness); a tie goes to
 * the higher mean, then to the lower index — and each combination's summary with its two-sided
 * Mann–Whitney U test against the best. Combinations without a value are never best and get no test;
 * with no value anywhere there is no best.
 */
export function compareCombinations(samples: readonly CombinationSample[]): { best: number | null; rows: CombinationComparison[] } {
  const summaries = samples.map((s) => summarize(s.fitness));
  let best: number | null = null;
  summaries.forEach((s, i) => {
    if (s.n === 0) return;
    if (best === null) {
      best = i;
      return;
    }
    const b = summaries[best]!;
    if (s.median! > b.median! || (s.median === b.median && s.mean! > b.mean!)) best = i;
  });
  const rows = summaries.map((summary, i) => ({
    summary,
    test: best === null || i === best || summary.n === 0 ? null : mannWhitneyU(samples[i]!.fitness, samples[best]!.fitness),
  }));
  return { best, rows };
}

/** The significance level the plain words use. */
export const SIGNIFICANCE = 0.05;

/** A p-value in plain words, at the 5 % level. */
export const verdict = (p: number) => (p < SIGNIFICANCE ? "a real difference at 5 % (p < 0.05)" : "no evidence of a difference at 5 %");
