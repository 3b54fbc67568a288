// The Pareto front of a population, for results whose front the GA worker did not compute: imports
// (docs/api.md#imports). The same front as the worker's (container/allele_worker/child/objectives.py): every
// objective maximised, a solution on it when no other is at least as good on every objective and better
// on one; its distinct solutions (a repeated gene row counts once, its first occurrence kept), in
// population order.

/** Whether `a` dominates `b` (maximised): at least as good on every objective, better on one. */
function dominates(a: number[], b: number[]): boolean {
  let better = false;
  for (let k = 0; k < a.length; k++) {
    if (a[k]! < b[k]!) return false;
    if (a[k]! > b[k]!) better = true;
  }
  return better;
}

/**
 * The front of `population` (rows of genes) whose objective vectors are `objectives` (one row each):
 * its solutions and their objective vectors. A dominating vector is lexicographically larger, so in
 * descending lexicographic order a row can only be dominated by an earlier one, and then by an earlier
 * non-dominated one: each row is compared with the front found so far, not with the whole population.
 */
export function paretoFront(objectives: number[][], population: number[][]): { objectives: number[][]; solutions: number[][] } {
  const lexicographic = (i: number, j: number) => {
    const a = objectives[i]!;
    const b = objectives[j]!;
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return b[k]! - a[k]!;
    return i - j;
  };
  const order = objectives.map((_, i) => i).sort(lexicographic);
  const front: number[] = [];
  for (const i of order) if (!front.some((j) => dominates(objectives[j]!, objectives[i]!))) front.push(i);
  const seen = new Set<string>();
  const kept = front
    .sort((i, j) => i - j)
    .filter((i) => {
      const key = population[i]!.join(",");
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return { objectives: kept.map((i) => objectives[i]!), solutions: kept.map((i) => population[i]!) };
}

/**
 * What a final front is, in numbers a person compares (docs/dashboard.md#results; every objective
 * maximised): its size, each objective's spread (its range over the front), the reference point (each
 * objective's worst value on the front, less a tenth of its range, or 1 when the range is 0) and, for two
 * objectives, the hypervolume against it (the area the front dominates above the reference point; more is
 * better). Null for an empty front.
 */
export function frontSummary(front: number[][]): {
  size: number;
  spread: number[];
  reference: number[];
  hypervolume: number | null;
} | null {
  const count = front[0]?.length ?? 0;
  if (!front.length || count === 0) return null;
  const low = Array.from({ length: count }, (_, k) => Math.min(...front.map((o) => o[k]!)));
  const high = Array.from({ length: count }, (_, k) => Math.max(...front.map((o) => o[k]!)));
  const spread = high.map((h, k) => h - low[k]!);
  const reference = low.map((l, k) => l - (spread[k]! > 0 ? spread[k]! / 10 : 1));
  let hypervolume: number | null = null;
  if (count === 2) {
    // Sweep by objective 0, best first: each point adds the strip its objective 1 rises above the last.
    const sorted = [...front].sort((a, b) => b[0]! - a[0]! || b[1]! - a[1]!);
    let area = 0;
    let top = reference[1]!;
    for (const [x, y] of sorted) {
      if (y! > top) {
        area += (x! - reference[0]!) * (y! - top);
        top = y!;
      }
    }
    hypervolume = area;
  }
  return { size: front.length, spread, reference, hypervolume };
}

/** One snapshot of a run's history of fronts (pareto_history.json, docs/api.md#result-files). */
export interface ParetoSnapshot {
  generation: number;
  population_size: number;
  /** The objective vectors (the first objectives_shown objectives; null where not finite) of its non-dominated solutions. */
  front: (number | null)[][];
  /** …and of the others (all of them, or a sample past the file's bound). */
  dominated: (number | null)[][];
}

export interface ParetoHistory {
  num_objectives: number;
  objectives_shown: number;
  snapshots: ParetoSnapshot[];
}

const frontKey = (front: (number | null)[][]) => [...new Set(front.map((v) => JSON.stringify(v)))].sort().join(";");

/**
 * The generation in which the front last changed (docs/dashboard.md#results): the last snapshot whose
 * front (its set of objective vectors, on the objectives the file shows) differs from the snapshot's
 * before it; the first snapshot's generation when it never changed. At the history's resolution: the
 * change happened after the snapshot before it and by that generation. Null without snapshots.
 */
export function frontLastChanged(history: ParetoHistory): number | null {
  const { snapshots } = history;
  if (!snapshots.length) return null;
  let changed = snapshots[0]!.generation;
  for (let i = 1; i < snapshots.length; i++) {
    if (frontKey(snapshots[i]!.front) !== frontKey(snapshots[i - 1]!.front)) changed = snapshots[i]!.generation;
  }
  return changed;
}
