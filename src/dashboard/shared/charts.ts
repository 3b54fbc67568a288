// The data of the dashboard's charts (drawn by web/browser/chart.ts with uPlot). A history chart has one
// panel per objective (one for a single-objective run), each with one series per result; a continued
// result's curve starts where its parent's ended, so a continue chain reads as one line across runs
// (docs/dashboard.md#results). A run's progress trail is drawn the same way while it runs.
import { MAX_PANELS } from "../../domain/plots";
import { IMPORTED } from "../../domain/result-files";
import type { TrailPoint } from "../../model/runs";
import type { ResultRow } from "../../storage/results";
import type { RunRow } from "../../storage/submissions";

/** A point: [generation, value or null]; null where the value is not finite (or not known yet). */
export type Point = [number, number | null];

export interface Series {
  label: string;
  points: Point[];
  resultId?: string;
  /** Drawn dashed: a multi-objective result's second series, each objective's maximum over the population. */
  dash?: boolean;
  /** Words for points whose value is null: "+∞" where the best fitness was infinite. */
  special?: Record<number, string>;
  /**
   * A population statistic of the curve labelled `of`: its mean, its median, or its worst
   * (the chart fills the band from the worst to that curve's best).
   */
  role?: PopulationRole;
  of?: string;
}

export type PopulationRole = "mean" | "median" | "worst";
const ROLES: PopulationRole[] = ["mean", "median", "worst"];

/** The population statistics of a curve labelled `of`, from its points per role (empty when it has none). */
function statSeries(of: string, pointsOf: (role: PopulationRole) => Point[]): Series[] {
  return ROLES.map((role) => ({ label: `${of} · population ${role}`, role, of, points: pointsOf(role) })).filter((s) =>
    s.points.some((p) => p[1] !== null),
  );
}

export interface Panel {
  /** Empty for a single-objective chart; "objective i" otherwise. */
  title: string;
  /** The y axis's name: "best fitness", "best objective i". */
  yLabel: string;
  series: Series[];
}

export interface ChartData {
  panels: Panel[];
  /** Where the client polls for live progress while a run is live. */
  live?: string;
  /** Said under the chart (how many objectives are left out, where values are infinite). */
  notes?: string[];
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

/** Objective `i` of one generation's entry: a vector's i-th value; a single objective's value is objective 0. */
function valueAt(entry: number | null | number[], i: number): number | null {
  if (Array.isArray(entry)) return entry[i] ?? null;
  return i === 0 ? entry : null;
}

/** The largest number of objectives among `results` (1 when none has several). */
const objectivesOf = (results: ResultRow[]) => results.reduce((n, r) => Math.max(n, r.numObjectives), 1);

/** Titles and axis names of the panels of a chart of `count` objectives: up to MAX_PANELS (as fitness.svg). */
function panelFrames(count: number): Omit<Panel, "series">[] {
  if (count <= 1) return [{ title: "", yLabel: "best fitness" }];
  return Array.from({ length: Math.min(count, MAX_PANELS) }, (_, i) => ({ title: `objective ${i}`, yLabel: `best objective ${i}` }));
}

/** What an imported multi-objective curve is (docs/api.md#imports-multi-objective): the SDK sends PyGAD's history only. */
const IMPORTED_HISTORY =
  "An imported run's curves are PyGAD's own history only: the objective values of its best solution in each generation; each objective's maximum over the population (a run's dashed curve here) was not sent.";
/** A multi-objective result's second series' label suffix. */
export const MAXIMA_LABEL = "population maximum";

/**
 * The history chart of `results`: one panel per objective (the first MAX_PANELS), each with one series
 * per result that has that objective. A chain mixing one- and several-objective results (a continue
 * that changed the fitness) draws a single objective's fitness as objective 0.
 */
export function historyChart(results: ResultRow[], runs: RunRow[], label: (r: ResultRow, i: number) => string): ChartData {
  const at = offsets(results, new Map(runs.map((r) => [r.id, r])));
  const count = objectivesOf(results);
  const panels = panelFrames(count).map((frame, i) => {
    const shown = results.map((r, k) => ({ r, k })).filter(({ r }) => i === 0 || r.numObjectives > i);
    return {
      ...frame,
      series: [
        ...shown.map(
          ({ r, k }): Series => ({
            label: label(r, k),
            resultId: r.id,
            points: r.bestSolutionsFitness.map((f, g): Point => [at.get(r.id)! + g, valueAt(f, i)]),
          }),
        ),
        // The population's mean, median and worst per generation, when the result kept them.
        ...shown.flatMap(({ r, k }): Series[] =>
          r.populationHistory
            ? statSeries(label(r, k), (role) =>
                r.populationHistory!.map((p): Point => [at.get(r.id)! + p.generation, valueAt(p[role] as number | null | number[], i)]),
              )
            : [],
        ),
        // Several objectives: each one's maximum over the population, after the histories (dashed).
        ...shown.flatMap(({ r, k }): Series[] =>
          r.numObjectives > 1 && r.objectiveMaxima
            ? [
                {
                  label: `${label(r, k)} · ${MAXIMA_LABEL}`,
                  dash: true,
                  points: r.objectiveMaxima.map((row, g): Point => [at.get(r.id)! + g, row[i] ?? null]),
                },
              ]
            : [],
        ),
      ],
    };
  });
  const notes = [
    ...(count > MAX_PANELS ? [`Objectives 0–${MAX_PANELS - 1} of ${count} are drawn; fitness_history.csv holds every one.`] : []),
    ...(results.some((r) => r.numObjectives > 1 && r.stoppedReason === IMPORTED) ? [IMPORTED_HISTORY] : []),
  ];
  return { panels, notes };
}

/**
 * The chart of a run's progress trail (a point per generation from a GA worker that sends them all, else
 * one per progress report that reached a new generation):
 * the best fitness, or, when the reports carry several objectives, one panel per objective with the
 * best solution's value (PyGAD's history) and, dashed, the objective's maximum over the population
 * (a trail kept before migration 0007 has the maxima only).
 */
export function trailChart(trail: TrailPoint[], label: string): Panel[] {
  const count = trail.reduce((n, p) => Math.max(n, p[2]?.length ?? 1), 1);
  const history = trail.some((p) => p[3]);
  return panelFrames(count).map((frame, i) => ({
    ...frame,
    series:
      count > 1
        ? [
            // The best solution's values come with each report's own generation only (docs/runner-protocol.md).
            ...(history ? [{ label, points: trail.filter((p) => p[3]).map((p): Point => [p[0], p[3]?.[i] ?? null]) }] : []),
            { label: `${label} · ${MAXIMA_LABEL}`, dash: true, points: trail.map((p): Point => [p[0], p[2]?.[i] ?? null]) },
          ]
        : [
            { label, points: trail.map((p): Point => [p[0], p[1]]) },
            // The population's mean, median and worst at each report (the trail's fifth item).
            ...(trail.some((p) => p[4])
              ? statSeries(label, (role) => trail.filter((p) => p[4]).map((p): Point => [p[0], p[4]![ROLES.indexOf(role) + 1] ?? null]))
              : []),
          ],
  }));
}

/** "3, 5–9, 12": generations as ranges. */
function ranges(generations: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < generations.length; i++) {
    let j = i;
    while (j + 1 < generations.length && generations[j + 1] === generations[j]! + 1) j++;
    parts.push(i === j ? String(generations[i]) : `${generations[i]}–${generations[j]}`);
    i = j;
  }
  return parts.join(", ");
}

/**
 * Marks where one result's best fitness was infinite (its history's "+∞" / "−∞" by the result's own
 * generation): the table says so and a note under the chart names those generations (not drawn).
 */
export function markInfinite(chart: ChartData, resultId: string, history: Record<number, string>): void {
  const series = chart.panels[0]?.series.find((s) => s.resultId === resultId);
  const local = Object.keys(history)
    .map(Number)
    .sort((a, b) => a - b);
  if (!series || !local.length) return;
  series.special = Object.fromEntries(local.filter((g) => series.points[g]).map((g) => [series.points[g]![0], history[g]!]));
  for (const text of new Set(local.map((g) => history[g]!))) {
    const at = local.filter((g) => history[g] === text && series.points[g]).map((g) => series.points[g]![0]);
    chart.notes ??= [];
    chart.notes.push(
      `The best fitness was ${text} at generation${at.length === 1 ? "" : "s"} ${ranges(at)} (not drawn: the curve breaks there).`,
    );
  }
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

/** One curve of a comparison: a run's result history, or (no result) its progress trail. */
export interface ComparedCurve {
  label: string;
  runId: string;
  /** The result's history per generation (one value, or one per objective), when the run has a result. */
  history: (number | null | number[])[] | null;
  trail: TrailPoint[];
}

/**
 * The chart of a comparison (docs/dashboard.md#compare): every run from generation 0 on one axis — its
 * result's best fitness per generation, or, without a result (live, failed, cancelled), its progress
 * reports — one panel per objective when any run has several (the first MAX_PANELS).
 */
export function compareChart(curves: ComparedCurve[]): ChartData {
  const count = curves.reduce(
    (n, c) => Math.max(n, ...(c.history ?? []).map((e) => (Array.isArray(e) ? e.length : 1)), ...c.trail.map((p) => p[2]?.length ?? 1)),
    1,
  );
  const panels = panelFrames(count).map((frame, i) => ({
    ...frame,
    series: curves.map(
      (c): Series => ({
        label: c.label,
        points: c.history
          ? c.history.map((f, g): Point => [g, valueAt(f, i)])
          : c.trail.map((p): Point => [p[0], count > 1 ? (p[2]?.[i] ?? null) : p[1]]),
      }),
    ),
  }));
  const notes = [
    ...(count > MAX_PANELS ? [`Objectives 0–${MAX_PANELS - 1} of ${count} are drawn.`] : []),
    ...(curves.some((c) => !c.history) ? ["A run without a result is drawn from its progress reports (one point per report)."] : []),
  ];
  return { panels, notes };
}
