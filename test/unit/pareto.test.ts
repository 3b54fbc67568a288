// The Pareto front of imported results (src/domain/pareto.ts), under plain Node: every objective
// maximised; a solution is on the front when no other is at least as good on every objective and better
// on one; a repeated gene row counts once (its first occurrence); the front keeps population order.
import { describe, expect, it } from "vitest";
import { frontLastChanged, frontSummary, type ParetoSnapshot, paretoFront } from "../../src/domain/pareto";

/** The definition, compared pair by pair over the whole population (what paretoFront's shortcut must equal). */
function bruteForceFront(objectives: number[][], population: number[][]) {
  const dominates = (a: number[], b: number[]) => a.every((v, k) => v >= b[k]!) && a.some((v, k) => v > b[k]!);
  const seen = new Set<string>();
  const kept: number[] = [];
  objectives.forEach((vector, i) => {
    if (objectives.some((other) => dominates(other, vector))) return;
    const key = population[i]!.join(",");
    if (seen.has(key)) return;
    seen.add(key);
    kept.push(i);
  });
  return { objectives: kept.map((i) => objectives[i]!), solutions: kept.map((i) => population[i]!) };
}

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("paretoFront", () => {
  it("keeps the non-dominated solutions of two objectives, in population order", () => {
    const objectives = [
      [1, 1], // dominated by every other row but the last
      [3, 3],
      [1, 5],
      [2, 2], // dominated by [3, 3]
      [2, 4],
      [0, 0],
    ];
    const population = objectives.map((_, i) => [i, i * 10]);
    expect(paretoFront(objectives, population)).toEqual({
      objectives: [
        [3, 3],
        [1, 5],
        [2, 4],
      ],
      solutions: [
        [1, 10],
        [2, 20],
        [4, 40],
      ],
    });
  });

  it("maximises: a larger value is better, negative values included", () => {
    const front = paretoFront(
      [
        [-1, -1],
        [0, -2],
        [-0.5, -0.5],
      ],
      [[1], [2], [3]],
    );
    expect(front.solutions).toEqual([[2], [3]]);
  });

  it("keeps equal objective vectors of different solutions (neither is better on any objective)", () => {
    const front = paretoFront(
      [
        [2, 2],
        [1, 1],
        [2, 2],
      ],
      [
        [1, 0],
        [0, 0],
        [0, 1],
      ],
    );
    expect(front.solutions).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });

  it("counts a repeated gene row once, keeping its first occurrence", () => {
    const front = paretoFront(
      [
        [1, 3],
        [3, 1],
        [1, 3],
      ],
      [
        [7, 7],
        [8, 8],
        [7, 7],
      ],
    );
    expect(front).toEqual({
      objectives: [
        [1, 3],
        [3, 1],
      ],
      solutions: [
        [7, 7],
        [8, 8],
      ],
    });
  });

  it("with one objective keeps the best solutions only", () => {
    expect(paretoFront([[0.5], [0.9], [0.1], [0.9]], [[1], [2], [3], [4]]).solutions).toEqual([[2], [4]]);
  });

  it("with three objectives: a solution better on one objective alone stays", () => {
    const front = paretoFront(
      [
        [1, 1, 1],
        [1, 1, 2], // dominates the first
        [0, 0, 3],
        [1, 1, 2], // equal to the second, other genes
      ],
      [[0], [1], [2], [3]],
    );
    expect(front.solutions).toEqual([[1], [2], [3]]);
  });

  it("of an empty population is empty", () => {
    expect(paretoFront([], [])).toEqual({ objectives: [], solutions: [] });
  });

  it("equals the front found by comparing every pair, on random populations with ties and repeats", () => {
    const next = random(20261126);
    for (let round = 0; round < 200; round++) {
      const size = 1 + Math.floor(next() * 40);
      const width = 1 + Math.floor(next() * 4);
      // Values from a few levels, so ties on some objectives and whole-vector ties are common.
      const objectives = Array.from({ length: size }, () => Array.from({ length: width }, () => Math.floor(next() * 5) - 2));
      const population = Array.from({ length: size }, () => [Math.floor(next() * 6), Math.floor(next() * 2)]);
      expect(paretoFront(objectives, population), `round ${round}`).toEqual(bruteForceFront(objectives, population));
    }
  });
});

describe("frontSummary: a front in numbers", () => {
  it("two objectives: size, spread, reference point and the hypervolume against it", () => {
    // Points (4, 1), (2, 3), (1, 4): spread 3 and 3, reference (1 - 0.3, 1 - 0.3) = (0.7, 0.7).
    const s = frontSummary([
      [2, 3],
      [4, 1],
      [1, 4],
    ])!;
    expect(s.size).toBe(3);
    expect(s.spread).toEqual([3, 3]);
    expect(s.reference.map((v) => Number(v.toFixed(10)))).toEqual([0.7, 0.7]);
    // Strips from the best objective 0 down: (4-0.7)(1-0.7) + (2-0.7)(3-1) + (1-0.7)(4-3)
    expect(s.hypervolume).toBeCloseTo(3.3 * 0.3 + 1.3 * 2 + 0.3 * 1, 10);
  });

  it("a dominated point adds nothing; three objectives have no hypervolume; an empty front is null", () => {
    const one = frontSummary([[1, 1]])!;
    expect(one.hypervolume).toBe(1); // reference (0, 0): range 0 gives a margin of 1
    // (0.5, 0.5) lies inside what (1, 1) dominates: the area is (1, 1)'s alone above (0.45, 0.45).
    expect(
      frontSummary([
        [1, 1],
        [0.5, 0.5],
      ])!.hypervolume,
    ).toBeCloseTo(0.55 * 0.55, 12);
    expect(frontSummary([[1, 2, 3]])!.hypervolume).toBeNull();
    expect(frontSummary([])).toBeNull();
  });
});

describe("frontLastChanged", () => {
  const snap = (generation: number, front: number[][], dominated: number[][] = []): ParetoSnapshot => ({
    generation,
    population_size: front.length + dominated.length,
    front,
    dominated,
  });
  const history = (snapshots: ParetoSnapshot[]) => ({ num_objectives: 2, objectives_shown: 2, snapshots });

  it("is the last snapshot whose front differs from the one before it (as a set of vectors)", () => {
    const h = history([
      snap(0, [[1, 1]], [[0, 0]]),
      snap(4, [
        [2, 1],
        [1, 2],
      ]),
      snap(
        8,
        [
          [1, 2],
          [2, 1],
          [2, 1],
        ],
        [[0, 0]],
      ), // the same set: order, repeats and the dominated ones do not count
      snap(12, [
        [1, 2],
        [2, 1],
      ]),
    ]);
    expect(frontLastChanged(h)).toBe(4);
    expect(frontLastChanged(history([...h.snapshots, snap(13, [[3, 3]])]))).toBe(13);
  });

  it("is the first generation for a front that never changed, and null without snapshots", () => {
    expect(frontLastChanged(history([snap(0, [[1, 1]]), snap(5, [[1, 1]])]))).toBe(0);
    expect(frontLastChanged(history([]))).toBeNull();
  });
});
