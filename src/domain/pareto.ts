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
