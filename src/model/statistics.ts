// The statistics of a sweep (docs/api.md#sweep-statistics), as pure functions of numbers: the summary of
// a sample (quartiles by linear interpolation, numpy's default), and the two-sided Mann–Whitney U test
// with scipy.stats.mannwhitneyu's choices (method "auto": the exact null distribution when one sample has
// at most 8 values and no value is tied, else the normal approximation with the tie correction and the
// continuity correction). Held to values scipy computed: test/unit/statistics.test.ts.

/** The summary of a sample: its size, extremes, quartiles and mean; null figures for an empty sample. */
export interface Summary {
  n: number;
  min: number | null;
  q1: number | null;
  median: number | null;
  q3: number | null;
  max: number | null;
  mean: number | null;
}

/**
 * The `p`-quantile (0 ≤ p ≤ 1) of ascending `sorted` values, by linear interpolation between the closest
 * ranks (Hyndman & Fan's type 7: numpy.quantile's and R's default). NaN for an empty sample.
 */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const below = sorted[lo]!;
  const above = sorted[hi]!;
  // Written so that equal neighbours give that value exactly, whatever the fraction.
  return below === above ? below : below + (h - lo) * (above - below);
}

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** Size, min, quartiles (type 7), median, max and mean of `values` (finite numbers). */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { n: 0, min: null, q1: null, median: null, q3: null, max: null, mean: null };
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0]!,
    q1: quantile(sorted, 0.25),
    median: quantile(sorted, 0.5),
    q3: quantile(sorted, 0.75),
    max: sorted.at(-1)!,
    mean: mean(sorted),
  };
}

/** The mean of `values`, or null for none. */
export const meanOrNull = (values: readonly number[]): number | null => (values.length ? mean(values) : null);

// ---- The normal distribution's upper tail ----

const SQRT_PI = Math.sqrt(Math.PI);

/**
 * erfc(x) for x ≥ 0 to about 1e-15 relative: the series of erf below 2 (its terms are all positive:
 * erf x = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)), no cancellation), and the continued fraction
 * of erfc (modified Lentz) from 2 up, where 1 − erf would lose the tail's digits.
 */
function erfcNonNegative(x: number): number {
  if (x < 2) {
    let term = x;
    let sum = x;
    for (let n = 1; n < 200; n++) {
      term *= (2 * x * x) / (2 * n + 1);
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-x * x) * sum;
  }
  // erfc x = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))), by modified Lentz.
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let k = 1; k < 500; k++) {
    const a = k / 2;
    d = x + a * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = x + a / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / SQRT_PI / f;
}

/** P(Z > z) for a standard normal Z (scipy.special.ndtr(−z)). */
export function normalSf(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  if (z === Number.POSITIVE_INFINITY) return 0;
  if (z === Number.NEGATIVE_INFINITY) return 1;
  const x = Math.abs(z) / Math.SQRT2;
  const tail = erfcNonNegative(x) / 2;
  return z >= 0 ? tail : 1 - tail;
}

// ---- Mann–Whitney U ----

/** Ranks of `values` (1-based; tied values share the mean of their ranks) and the sizes of the ties. */
function ranksOf(values: readonly number[]): { ranks: number[]; ties: number[] } {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(values.length);
  const ties: number[] = [];
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    const rank = (i + j + 2) / 2;
    for (let k = i; k <= j; k++) ranks[order[k]![1]] = rank;
    ties.push(j - i + 1);
    i = j + 1;
  }
  return { ranks, ties };
}

/**
 * How many of the C(m+n, m) arrangements of two samples of sizes m and n give each value u of U
 * (0..m·n), by the recurrence f(u; m, n) = f(u − n; m − 1, n) + f(u; m, n − 1). Counts are exact while
 * they stay below 2^53 (every sweep's: a sample of at most 8 against one of at most a few hundred).
 */
function uFrequencies(m: number, n: number): number[] {
  // previous[j][u]: the counts for samples of sizes (i − 1, j); current[j][u]: for (i, j).
  let previous: number[][] = Array.from({ length: n + 1 }, () => [1]); // i = 0: U is 0 in one way
  for (let i = 1; i <= m; i++) {
    const current: number[][] = [[1]]; // j = 0: U is 0 in one way
    for (let j = 1; j <= n; j++) {
      const counts = new Array<number>(i * j + 1).fill(0);
      const withLargest = previous[j]!; // the largest value is from the first sample: U grows by j
      const withoutLargest = current[j - 1]!; // it is from the second sample: U unchanged
      for (let u = 0; u < withLargest.length; u++) counts[u + j] = counts[u + j]! + withLargest[u]!;
      for (let u = 0; u < withoutLargest.length; u++) counts[u] = counts[u]! + withoutLargest[u]!;
      current.push(counts);
    }
    previous = current;
  }
  return previous[n]!;
}

/** The sample size at or below which, without ties, the exact distribution is used (scipy's choice). */
export const EXACT_MAX_SIZE = 8;

export interface MannWhitney {
  /** U of the first sample: how many (x, y) pairs have x > y, ties counting a half. */
  u: number;
  /** The two-sided p-value. */
  p: number;
  method: "exact" | "normal";
}

/**
 * The two-sided Mann–Whitney U test of `x` against `y` (each at least one finite value), as
 * scipy.stats.mannwhitneyu(x, y) with its defaults: U is the first sample's; the p-value comes from the
 * larger of the two U's — exact when a sample has at most 8 values and nothing is tied (2·P(U ≥ u),
 * at most 1), else by the normal approximation with the tie correction and a continuity correction of ½.
 * Two samples that are one value repeated have p = 1.
 */
export function mannWhitneyU(x: readonly number[], y: readonly number[]): MannWhitney {
  const n1 = x.length;
  const n2 = y.length;
  if (n1 === 0 || n2 === 0) throw new RangeError("each sample needs at least one value");
  const { ranks, ties } = ranksOf([...x, ...y]);
  const r1 = ranks.slice(0, n1).reduce((sum, r) => sum + r, 0);
  const u1 = r1 - (n1 * (n1 + 1)) / 2;
  const u = Math.max(u1, n1 * n2 - u1);
  const tied = ties.some((t) => t > 1);
  if ((n1 <= EXACT_MAX_SIZE || n2 <= EXACT_MAX_SIZE) && !tied) {
    const counts = uFrequencies(Math.min(n1, n2), Math.max(n1, n2));
    const total = counts.reduce((sum, c) => sum + c, 0);
    // P(U ≥ u) summed from the smaller side (the distribution is symmetric), as scipy does.
    const upper = counts.slice(u).reduce((sum, c) => sum + c, 0);
    return { u: u1, p: Math.min(1, (2 * upper) / total), method: "exact" };
  }
  const n = n1 + n2;
  const tieTerm = ties.reduce((sum, t) => sum + (t ** 3 - t), 0);
  const sigma = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  if (sigma === 0) return { u: u1, p: 1, method: "normal" };
  const z = (u - (n1 * n2) / 2 - 0.5) / sigma;
  return { u: u1, p: Math.min(1, Math.max(0, 2 * normalSf(z))), method: "normal" };
}
