// The downloadable files of a result (docs/api.md#submissions-runs-results), built from the worker's completion report.

export interface GaResult {
  best_solution: number[];
  best_solution_fitness: number | null;
  best_solution_generation: number | null;
  best_solutions_fitness: (number | null)[];
  generations_completed: number;
  /** Inline only for small runs and tests; normally uploaded apart (see stagedPopulationKey). */
  population?: number[][] | null;
  stopped_reason: string;
}

export interface ResultFile {
  name: string;
  contentType: string;
  body: string;
}

export const POPULATION_FILE = "population.json";

export const r2Key = (resultId: string, name: string) => `results/${resultId}/${name}`;

/** Where a run's final population is streamed by the GA worker (PUT …/population) before it completes. */
export const stagedPopulationKey = (runId: string) => `runs/${runId}/${POPULATION_FILE}`;

const csvNumber = (v: number | null) => (v === null ? "" : String(v));

export const LOGS_FILE = "logs.txt";

/**
 * The files built from the report; population.json only when the report carried it inline, logs.txt
 * when the run printed anything (its own stdout and stderr, as the GA worker kept them: ≤ 64 KiB).
 */
export function buildResultFiles(summary: Record<string, unknown>, result: GaResult, output: string | null = null): ResultFile[] {
  const history = ["generation,best_fitness", ...result.best_solutions_fitness.map((f, i) => `${i},${csvNumber(f)}`)].join("\n");
  const best = ["gene,value", ...result.best_solution.map((v, i) => `${i},${v}`)].join("\n");
  const files = [
    { name: "result.json", contentType: "application/json", body: JSON.stringify(summary, null, 2) },
    { name: "fitness_history.csv", contentType: "text/csv", body: `${history}\n` },
    { name: "best_solution.csv", contentType: "text/csv", body: `${best}\n` },
    { name: "fitness.svg", contentType: "image/svg+xml", body: fitnessPlot(result.best_solutions_fitness) },
  ];
  if (result.population) files.push({ name: POPULATION_FILE, contentType: "application/json", body: JSON.stringify(result.population) });
  if (output) files.push({ name: LOGS_FILE, contentType: "text/plain; charset=utf-8", body: output });
  return files;
}

const fmt = (v: number) => (Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(3) : String(+v.toFixed(4)));
const escapeXml = (s: string) => s.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** A line plot of the best fitness per generation, with labelled axes. */
export function fitnessPlot(history: (number | null)[]): string {
  const width = 640;
  const height = 360;
  const m = { left: 80, right: 20, top: 30, bottom: 50 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const points = history.map((y, x) => ({ x, y })).filter((p): p is { x: number; y: number } => p.y !== null && Number.isFinite(p.y));
  const ys = points.map((p) => p.y);
  let lo = ys.length ? Math.min(...ys) : 0;
  let hi = ys.length ? Math.max(...ys) : 1;
  if (lo === hi) {
    lo -= 1;
    hi += 1;
  }
  const lastX = Math.max(history.length - 1, 1);
  const sx = (x: number) => m.left + (x / lastX) * plotW;
  const sy = (y: number) => m.top + plotH - ((y - lo) / (hi - lo)) * plotH;
  const line = points.map((p) => `${sx(p.x).toFixed(2)},${sy(p.y).toFixed(2)}`).join(" ");
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((t) => lo + t * (hi - lo));
  const xTicks = [...new Set([0, 0.25, 0.5, 0.75, 1].map((t) => Math.round(t * lastX)))];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml("Best fitness per generation")}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14">Best fitness per generation</text>`,
    ...yTicks.map(
      (y) =>
        `<line x1="${m.left}" x2="${m.left + plotW}" y1="${sy(y).toFixed(2)}" y2="${sy(y).toFixed(2)}" stroke="#e5e5e5"/>` +
        `<text x="${m.left - 6}" y="${(sy(y) + 4).toFixed(2)}" text-anchor="end">${fmt(y)}</text>`,
    ),
    ...xTicks.map((x) => `<text x="${sx(x).toFixed(2)}" y="${m.top + plotH + 18}" text-anchor="middle">${x}</text>`),
    `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" stroke="#333"/>`,
    `<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`,
    `<text x="${m.left + plotW / 2}" y="${height - 10}" text-anchor="middle">generation</text>`,
    `<text x="16" y="${m.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${m.top + plotH / 2})">best fitness</text>`,
    points.length > 1
      ? `<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line}"/>`
      : points.map((p) => `<circle cx="${sx(p.x).toFixed(2)}" cy="${sy(p.y).toFixed(2)}" r="3" fill="#1f77b4"/>`).join(""),
    `</svg>`,
  ];
  return `${parts.join("\n")}\n`;
}
