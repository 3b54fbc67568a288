// What a sweep's statistics are made of (docs/api.md#sweep-statistics): each combination's children and
// the final best fitness values its figures count — one per child that succeeded with a finite single
// best fitness (a failed or cancelled child, an infinite fitness and a result of several objectives count
// none).
import { type CombinationSample, childAt } from "../model/sweeps";
import type { ChildRow } from "../storage/sweeps";

/** The final best fitness a child contributes, or null. */
export const countedFitness = (child: ChildRow): number | null =>
  child.status === "succeeded" && child.resultId !== null && (child.numObjectives ?? 1) === 1 ? child.bestSolutionFitness : null;

/** The children of each of `combinations` combinations, in the sweep's order. */
export function childrenByCombination(combinations: number, children: readonly ChildRow[]): ChildRow[][] {
  const groups: ChildRow[][] = Array.from({ length: combinations }, () => []);
  for (const child of children) groups[childAt(child.index, combinations).combination]?.push(child);
  return groups;
}

/** Each combination's sample of final best fitness values. */
export const combinationSamples = (combinations: number, children: readonly ChildRow[]): CombinationSample[] =>
  childrenByCombination(combinations, children).map((group) => ({
    fitness: group.map(countedFitness).filter((f): f is number => f !== null),
  }));
