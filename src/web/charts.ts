// Fitness curves for the dashboard's charts (drawn by web/client/chart.ts with uPlot): one series per
// result, and a continued result's curve starts where its parent's ended, so a continue chain reads as
// one line across runs (docs/dashboard.md#results).
import type { ResultRow } from "../storage/results";
import type { RunRow } from "../storage/submissions";

export interface Series {
  label: string;
  /** [generation, best fitness or null] */
  points: [number, number | null][];
  resultId?: string;
}

export interface ChartData {
  series: Series[];
  /** Where the client polls for live progress while a run is live. */
  live?: string;
}

/** The generation each result's curve starts at: 0, or after the end of the result it continued. */
function offsets(results: ResultRow[], runs: Map<string, RunRow>): Map<string, number> {
  const byId = new Map(results.map((r) => [r.id, r]));
  const memo = new Map<string, number>();
  const start = (r: ResultRow, depth = 0): number => {
    if (memo.has(r.id)) return memo.get(r.id)!;
    const run = runs.get(r.runId);
    const parent = run?.kind === "continue" && run.parentResultId ? byId.get(run.parentResultId) : undefined;
    const value = parent && depth < 1000 ? start(parent, depth + 1) + parent.generationsCompleted : 0;
    memo.set(r.id, value);
    return value;
  };
  for (const r of results) start(r);
  return memo;
}

export function curves(results: ResultRow[], runs: RunRow[], label: (r: ResultRow, i: number) => string): Series[] {
  const byRun = new Map(runs.map((r) => [r.id, r]));
  const at = offsets(results, byRun);
  return results.map((r, i) => ({
    label: label(r, i),
    resultId: r.id,
    points: r.bestSolutionsFitness.map((f, g) => [at.get(r.id)! + g, f] as [number, number | null]),
  }));
}

/** The results of a continue chain that ends at `result`: its ancestors first, then itself. */
export function chainOf(result: ResultRow, all: ResultRow[], runs: RunRow[]): ResultRow[] {
  const byId = new Map(all.map((r) => [r.id, r]));
  const byRun = new Map(runs.map((r) => [r.id, r]));
  const chain = [result];
  let current: ResultRow | undefined = result;
  while (current && chain.length < 1000) {
    const run = byRun.get(current.runId);
    current = run?.kind === "continue" && run.parentResultId ? byId.get(run.parentResultId) : undefined;
    if (current) chain.unshift(current);
  }
  return chain;
}

/** A `<script type="application/json">` body: JSON that cannot close the script element. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");
