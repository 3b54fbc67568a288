// The SVG plots of a result (docs/api.md#result-files): fitness.svg and, for several objectives,
// pareto_front.svg. Plain SVG text, no fonts or scripts, the same frame and style for every plot.
import type { PopulationPoint } from "../model/runs";

/** One objective's fitness as the GA worker reports it: JSON has no infinity (docs/runner-protocol.md). */
export type Fitness = number | "inf" | "-inf" | null;

const WIDTH = 640;
const COLOR = "#1f77b4";
/** The second series of a multi-objective panel (each objective's population maximum), drawn dashed. */
const MAXIMA_COLOR = "#ff7f0e";
/** Panels of fitness.svg for a multi-objective run; further objectives are named in the title only. */
export const MAX_PANELS = 6;

const fmt = (v: number) => (Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : String(+v.toFixed(4)));
const escapeXml = (s: string) => s.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
const px = (v: number) => v.toFixed(2);

interface Frame {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The range of `values` (finite), widened when it is a single value or empty. */
function span(values: number[]): [number, number] {
  let lo = values.length ? Infinity : 0;
  let hi = values.length ? -Infinity : 1;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === hi) {
    lo -= 1;
    hi += 1;
  }
  return [lo, hi];
}

const ticks = (lo: number, hi: number) => [0, 0.25, 0.5, 0.75, 1].map((t) => lo + t * (hi - lo));

function svg(height: number, title: string, body: string[]): string {
  return `${[
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
    ...body,
    `</svg>`,
  ].join("\n")}\n`;
}

/** Grid, tick labels and axis lines of one frame; x ticks are `xTicks` mapped by `sx`. */
function axes(
  f: Frame,
  sy: (y: number) => number,
  [lo, hi]: [number, number],
  xTicks: { at: number; label: string }[],
  xLabel: string,
  yLabel: string,
): string[] {
  const bottom = f.top + f.height;
  return [
    ...ticks(lo, hi).map(
      (y) =>
        `<line x1="${f.left}" x2="${f.left + f.width}" y1="${px(sy(y))}" y2="${px(sy(y))}" stroke="#e5e5e5"/>` +
        `<text x="${f.left - 6}" y="${px(sy(y) + 4)}" text-anchor="end">${fmt(y)}</text>`,
    ),
    ...xTicks.map((t) => `<text x="${px(t.at)}" y="${bottom + 16}" text-anchor="middle">${escapeXml(t.label)}</text>`),
    `<line x1="${f.left}" x2="${f.left}" y1="${f.top}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${f.left}" x2="${f.left + f.width}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`,
    `<text x="${f.left + f.width / 2}" y="${bottom + 32}" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="16" y="${f.top + f.height / 2}" text-anchor="middle" transform="rotate(-90 16 ${f.top + f.height / 2})">${escapeXml(yLabel)}</text>`,
  ];
}

/**
 * One line of values per generation in `f`: finite values joined by a line (a point when there is
 * one), +inf / −inf generations as triangles on the top / bottom edge (JSON and the plot have no
 * infinity; docs/api.md#result-files).
 */
const finite = (y: Fitness): y is number => typeof y === "number" && Number.isFinite(y);

/** Runs of consecutive finite generations: a line breaks where a generation has no finite value. */
function finiteRuns(history: Fitness[]): { x: number; y: number }[][] {
  const runs: { x: number; y: number }[][] = [];
  history.forEach((y, x) => {
    if (!finite(y)) return;
    const last = runs.at(-1);
    if (last && last.at(-1)!.x === x - 1) last.push({ x, y });
    else runs.push([{ x, y }]);
  });
  return runs;
}

type Scale = (v: number) => number;

/** One series' lines (a dot for a run of one finite value), in `color`, dashed when asked. */
function seriesLines(runs: { x: number; y: number }[][], sx: Scale, sy: Scale, color: string, dashed: boolean): string[] {
  const dash = dashed ? ' stroke-dasharray="6 4"' : "";
  return runs.map((run) =>
    run.length > 1
      ? `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${run.map((p) => `${px(sx(p.x))},${px(sy(p.y))}`).join(" ")}"/>`
      : `<circle cx="${px(sx(run[0]!.x))}" cy="${px(sy(run[0]!.y))}" r="3" fill="${color}"/>`,
  );
}

/** One objective's population statistics at one generation (a point of population_history). */
interface Statistics {
  generation: number;
  best: number | null;
  mean: number | null;
  median: number | null;
  worst: number | null;
}

/** Objective `i`'s statistics of `population_history` (one objective: i = null). */
function statisticsOf(points: PopulationPoint[], i: number | null): Statistics[] {
  const pick = (v: PopulationPoint["best"]) => {
    const x = i === null ? v : Array.isArray(v) ? v[i] : null;
    return typeof x === "number" && Number.isFinite(x) ? x : null;
  };
  return points.map((p) => ({
    generation: p.generation,
    best: pick(p.best),
    mean: pick(p.mean),
    median: pick(p.median),
    worst: pick(p.worst),
  }));
}

/** Runs of consecutive points (in the list's order) where `ok` holds. */
function runsOf<T>(items: T[], ok: (item: T) => boolean): T[][] {
  const runs: T[][] = [];
  let open = false;
  for (const item of items) {
    if (!ok(item)) {
      open = false;
      continue;
    }
    if (open) runs.at(-1)!.push(item);
    else runs.push([item]);
    open = true;
  }
  return runs;
}

/**
 * The population's band from worst to best (a filled path, class "band") and its mean (dashed) and
 * median (dotted) lines, in `color`, under the best curve.
 */
function statisticsLayers(stats: Statistics[], sx: Scale, sy: Scale, color: string): string[] {
  const bands = runsOf(stats, (s) => s.best !== null && s.worst !== null)
    .filter((run) => run.length > 1)
    .map((run) => {
      const top = run.map((s) => `${px(sx(s.generation))},${px(sy(s.best!))}`);
      const bottom = run.map((s) => `${px(sx(s.generation))},${px(sy(s.worst!))}`).reverse();
      return `<path class="band" d="M${[...top, ...bottom].join(" L")} Z" fill="${color}" fill-opacity="0.15" stroke="none"/>`;
    });
  const line = (key: "mean" | "median", dash: string) =>
    runsOf(stats, (s) => s[key] !== null)
      .filter((run) => run.length > 1)
      .map(
        (run) =>
          `<polyline class="${key}" fill="none" stroke="${color}" stroke-width="1.5" stroke-opacity="0.8" stroke-dasharray="${dash}" points="${run
            .map((s) => `${px(sx(s.generation))},${px(sy(s[key]!))}`)
            .join(" ")}"/>`,
      );
  return [...bands, ...line("mean", "6 3"), ...line("median", "2 3")];
}

function historyPanel(
  f: Frame,
  history: Fitness[],
  yLabel: string,
  maxima: Fitness[] | null = null,
  stats: Statistics[] | null = null,
): string[] {
  const points = [...history, ...(maxima ?? []), ...(stats ?? []).flatMap((s) => [s.best, s.mean, s.median, s.worst])].filter(finite);
  const runs = finiteRuns(history);
  const range = span(points);
  const lastX = Math.max(history.length - 1, 1);
  const sx = (x: number) => f.left + (x / lastX) * f.width;
  const sy = (y: number) => f.top + f.height - ((y - range[0]) / (range[1] - range[0])) * f.height;
  const xTicks = [...new Set([0, 0.25, 0.5, 0.75, 1].map((t) => Math.round(t * lastX)))].map((x) => ({ at: sx(x), label: String(x) }));
  const infinite = history.flatMap((y, x) => {
    if (y !== "inf" && y !== "-inf") return [];
    const edge = y === "inf" ? f.top : f.top + f.height;
    const tip = y === "inf" ? edge - 6 : edge + 6;
    const points = `${px(sx(x) - 4)},${px(edge)} ${px(sx(x) + 4)},${px(edge)} ${px(sx(x))},${px(tip)}`;
    return [`<polygon points="${points}" fill="#d62728"><title>${y === "inf" ? "+inf" : "-inf"}</title></polygon>`];
  });
  return [
    ...axes(f, sy, range, xTicks, "generation", yLabel),
    ...(stats?.length ? statisticsLayers(stats, sx, sy, COLOR) : []),
    ...(maxima ? seriesLines(finiteRuns(maxima), sx, sy, MAXIMA_COLOR, true) : []),
    ...seriesLines(runs, sx, sy, COLOR, false),
    ...infinite,
    ...(infinite.length
      ? [`<text x="${f.left + f.width}" y="${f.top + f.height + 32}" text-anchor="end" fill="#d62728">▲ +inf  ▼ −inf</text>`]
      : []),
  ];
}

/** The title of a history of several objectives: PyGAD's own, the best solution's values per generation. */
export const MULTI_HISTORY_TITLE = "Objective values of the best solution per generation (PyGAD's history)";
/** The same for an import (docs/api.md#imports-multi-objective), which has no population maxima. */
export const IMPORTED_HISTORY_TITLE = "Objective values of the best solution per generation (PyGAD's history, imported)";

/**
 * fitness.svg: the best fitness per generation (one objective), or one panel per objective (several; the
 * first MAX_PANELS of them) with the best solution's value per generation — PyGAD's history, a solid
 * line — and, when the result has them, the objective's maximum over the population (`maxima`, dashed).
 * With the result's population_history (`population`), each panel also has the population's band from
 * worst to best (filled) and its mean (dashed) and median (dotted), as the dashboard's chart draws them.
 * An import's title says its history is imported (`imported`).
 */
export function fitnessPlot(
  history: (Fitness | number[])[],
  numObjectives = 1,
  {
    imported = false,
    maxima = null,
    population = null,
  }: { imported?: boolean; maxima?: number[][] | null; population?: PopulationPoint[] | null } = {},
): string {
  const statistics = population?.length ? population : null;
  const statisticsLegend = (y: number, color: string) => [
    `<rect x="90" y="${y - 6}" width="30" height="10" fill="${color}" fill-opacity="0.15"/><text x="126" y="${y + 4}">population worst to best</text>`,
    `<line x1="290" x2="320" y1="${y}" y2="${y}" stroke="${color}" stroke-width="1.5" stroke-dasharray="6 3"/><text x="326" y="${y + 4}">mean</text>`,
    `<line x1="380" x2="410" y1="${y}" y2="${y}" stroke="${color}" stroke-width="1.5" stroke-dasharray="2 3"/><text x="416" y="${y + 4}">median</text>`,
  ];
  if (numObjectives <= 1) {
    const top = statistics ? 48 : 30;
    const f = { left: 80, top, width: WIDTH - 100, height: 280 };
    const stats = statistics ? statisticsOf(statistics, null) : null;
    return svg(top + 330, "Best fitness per generation", [
      ...(statistics ? statisticsLegend(36, COLOR) : []),
      ...historyPanel(f, history as Fitness[], "best fitness", null, stats),
    ]);
  }
  const shown = Math.min(numObjectives, MAX_PANELS);
  const panel = 170;
  const top = (maxima ? 48 : 30) + (statistics ? 18 : 0);
  const legend = maxima
    ? [
        `<line x1="90" x2="120" y1="36" y2="36" stroke="${COLOR}" stroke-width="2"/><text x="126" y="40">best solution (PyGAD's history)</text>`,
        `<line x1="340" x2="370" y1="36" y2="36" stroke="${MAXIMA_COLOR}" stroke-width="2" stroke-dasharray="6 4"/><text x="376" y="40">population maximum</text>`,
      ]
    : [];
  if (statistics) legend.push(...statisticsLegend(maxima ? 54 : 36, COLOR));
  const body = Array.from({ length: shown }, (_, i) =>
    historyPanel(
      { left: 80, top: top + i * panel, width: WIDTH - 100, height: panel - 60 },
      history.map((row) => (Array.isArray(row) ? (row[i] ?? null) : null)),
      `objective ${i}`,
      maxima ? maxima.map((row) => row[i] ?? null) : null,
      statistics ? statisticsOf(statistics, i) : null,
    ),
  ).flat();
  const which = numObjectives > shown ? ` (objectives 0–${shown - 1} of ${numObjectives})` : "";
  const title = `${imported ? IMPORTED_HISTORY_TITLE : MULTI_HISTORY_TITLE}${which}`;
  return svg(top + shown * panel, title, [...legend, ...body]);
}

/**
 * pareto_front.svg: the final Pareto front. Two objectives: a scatter plot of the solutions' values.
 * More: parallel coordinates, one vertical axis per objective scaled to the front's own range (its
 * least and greatest value written at the axis's ends), one line per solution.
 */
export function paretoPlot(objectives: number[][]): string {
  const count = objectives[0]?.length ?? 0;
  const title = `Pareto front: ${objectives.length} solution${objectives.length === 1 ? "" : "s"}, ${count} objectives (all maximised)`;
  const f = { left: 80, top: 40, width: WIDTH - 140, height: 270 };
  if (count === 2) {
    const xRange = span(objectives.map((o) => o[0]!));
    const yRange = span(objectives.map((o) => o[1]!));
    const sx = (x: number) => f.left + ((x - xRange[0]) / (xRange[1] - xRange[0])) * f.width;
    const sy = (y: number) => f.top + f.height - ((y - yRange[0]) / (yRange[1] - yRange[0])) * f.height;
    const xTicks = ticks(...xRange).map((x) => ({ at: sx(x), label: fmt(x) }));
    return svg(370, title, [
      ...axes(f, sy, yRange, xTicks, "objective 0", "objective 1"),
      ...objectives.map((o) => `<circle cx="${px(sx(o[0]!))}" cy="${px(sy(o[1]!))}" r="3" fill="${COLOR}" fill-opacity="0.8"/>`),
    ]);
  }
  const ranges = Array.from({ length: count }, (_, i) => span(objectives.map((o) => o[i]!)));
  const ax = (i: number) => f.left + (count > 1 ? (i / (count - 1)) * f.width : f.width / 2);
  const sy = (i: number, v: number) => f.top + f.height - ((v - ranges[i]![0]) / (ranges[i]![1] - ranges[i]![0])) * f.height;
  const opacity = Math.max(0.08, Math.min(0.8, 20 / Math.max(objectives.length, 1)));
  return svg(370, title, [
    ...objectives.map((o) => {
      const points = o.map((v, i) => `${px(ax(i))},${px(sy(i, v))}`).join(" ");
      return `<polyline fill="none" stroke="${COLOR}" stroke-opacity="${opacity.toFixed(2)}" points="${points}"/>`;
    }),
    ...ranges.flatMap(([lo, hi], i) => [
      `<line x1="${px(ax(i))}" x2="${px(ax(i))}" y1="${f.top}" y2="${f.top + f.height}" stroke="#333"/>`,
      `<text x="${px(ax(i))}" y="${f.top - 6}" text-anchor="middle">${fmt(hi)}</text>`,
      `<text x="${px(ax(i))}" y="${f.top + f.height + 16}" text-anchor="middle">${fmt(lo)}</text>`,
      `<text x="${px(ax(i))}" y="${f.top + f.height + 34}" text-anchor="middle">objective ${i}</text>`,
    ]),
  ]);
}
