// The sweep statistics (src/model/statistics.ts), node only: every expected value below was computed by
// scipy 1.17.1 (scipy.stats.mannwhitneyu with its defaults, scipy.special.ndtr) and numpy 2
// (numpy.quantile, numpy.median, mean) — the script is in the comment at the end of this file.
import { describe, expect, it } from "vitest";
import { mannWhitneyU, normalSf, quantile, summarize } from "../../src/model/statistics";

const close = (actual: number, expected: number, relative = 1e-12) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.abs(expected) * relative + 1e-300);

describe("Mann–Whitney U against scipy.stats.mannwhitneyu", () => {
  const SCIPY: { x: number[]; y: number[]; u: number; p: number; method: "exact" | "normal" }[] = [
    { x: [1, 2, 3], y: [4, 5, 6], u: 0, p: 0.1, method: "exact" },
    { x: [0.5, 1.7, 2.2, 3.9], y: [1.1, 2.8, 3.3, 4.4, 5.0], u: 5, p: 0.2857142857142857, method: "exact" },
    { x: [-0.3, -0.1, -0.25], y: [-0.9, -0.5, -0.7], u: 9, p: 0.1, method: "exact" },
    {
      x: [3.1, 2.2, 5.5, 1.0, 4.4, 6.6, 7.7, 8.8],
      y: [0.1, 0.2, 0.3, 9.9, 10.1, 11.2, 12.3, 13.4, 14.5],
      u: 24,
      p: 0.2765939942410531,
      method: "exact",
    },
    { x: [1, 2, 2, 3, 4], y: [2, 3, 5, 6], u: 4.5, p: 0.21090292605661043, method: "normal" },
    {
      x: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      y: [3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5],
      u: 21,
      p: 0.011129227614007952,
      method: "normal",
    },
    { x: [1, 1, 1], y: [1, 1, 1], u: 4.5, p: 1, method: "normal" },
    { x: [5], y: [1, 2, 3], u: 3, p: 0.5, method: "exact" },
    {
      x: [-0.001, -0.002, -0.0005, -0.0007, -0.0015],
      y: [-0.1, -0.05, -0.2, -0.01, -0.03],
      u: 25,
      p: 0.007936507936507936,
      method: "exact",
    },
    {
      x: Array.from({ length: 20 }, (_, i) => 0.1 * i),
      y: Array.from({ length: 15 }, (_, i) => 0.1 * i + 0.05),
      u: 180,
      p: 0.3254434096483142,
      method: "normal",
    },
    { x: [1, 2, 3, 4, 5, 6, 7, 8], y: [2.5, 3.5, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18], u: 11, p: 0.00298483765976026, method: "exact" },
  ];

  for (const c of SCIPY) {
    it(`U and p of ${c.x.length} against ${c.y.length} values (${c.method})`, () => {
      const got = mannWhitneyU(c.x, c.y);
      expect(got.u).toBe(c.u);
      expect(got.method).toBe(c.method);
      close(got.p, c.p, 1e-10);
    });
  }

  it("is symmetric: the two U's add up to n1·n2 and the p-value is the same either way round", () => {
    const x = [0.3, 1.9, 2.4, 0.8, 5.1];
    const y = [1.2, 3.3, 4.0, 4.1, 6.2, 7.0];
    const a = mannWhitneyU(x, y);
    const b = mannWhitneyU(y, x);
    expect(a.u + b.u).toBe(x.length * y.length);
    close(a.p, b.p, 1e-14);
  });

  it("refuses an empty sample", () => {
    expect(() => mannWhitneyU([], [1])).toThrow(RangeError);
  });
});

describe("the normal upper tail against scipy.special.ndtr(-z)", () => {
  const NDTR: [number, number][] = [
    [-3.0, 0.9986501019683699],
    [-1.2, 0.8849303297782918],
    [0, 0.5],
    [0.3, 0.3820885778110474],
    [1.0, 0.15865525393145707],
    [1.96, 0.024997895148220435],
    [2.5, 0.006209665325776132],
    [3.7, 0.00010779973347738823],
    [5.0, 2.866515718791933e-7],
    [8.2, 1.2019351542735735e-16],
    [12.0, 1.776482112077653e-33],
  ];
  for (const [z, p] of NDTR) it(`P(Z > ${z})`, () => close(normalSf(z), p, 1e-13));
  it("is 0 and 1 at the infinities", () => {
    expect(normalSf(Number.POSITIVE_INFINITY)).toBe(0);
    expect(normalSf(Number.NEGATIVE_INFINITY)).toBe(1);
  });
});

describe("quartiles against numpy (linear interpolation)", () => {
  const NUMPY = [
    { values: [3, 1, 2], q1: 1.5, median: 2, q3: 2.5, mean: 2 },
    { values: [1, 2, 3, 4], q1: 1.75, median: 2.5, q3: 3.25, mean: 2.5 },
    { values: [5.5, -1, 2, 8, 0.25, 3], q1: 0.6875, median: 2.5, q3: 4.875, mean: 2.9583333333333335 },
    { values: [7], q1: 7, median: 7, q3: 7, mean: 7 },
  ];
  for (const c of NUMPY) {
    it(`summarizes ${JSON.stringify(c.values)}`, () => {
      const s = summarize(c.values);
      expect(s.n).toBe(c.values.length);
      expect(s.min).toBe(Math.min(...c.values));
      expect(s.max).toBe(Math.max(...c.values));
      close(s.q1!, c.q1);
      close(s.median!, c.median);
      close(s.q3!, c.q3);
      close(s.mean!, c.mean);
    });
  }
  it("has no figures for an empty sample, and a repeated value is that value at every quantile", () => {
    expect(summarize([])).toEqual({ n: 0, min: null, q1: null, median: null, q3: null, max: null, mean: null });
    expect(quantile([0.1, 0.1, 0.1], 0.3)).toBe(0.1);
  });
});

// The expected values, with scipy 1.17.1 and numpy in a scratch venv:
//   from scipy.stats import mannwhitneyu; from scipy.special import ndtr; import numpy as np
//   r = mannwhitneyu(x, y); print(r.statistic, r.pvalue)     # for each (x, y) above
//   print(ndtr(-z))                                           # for each z above
//   a = np.array(values, float); print(np.quantile(a, .25), np.median(a), np.quantile(a, .75), a.mean())
