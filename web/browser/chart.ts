// The fitness charts: uPlot (served from /assets, no CDN) over the JSON the page embeds. One uPlot per
// panel (one panel per objective of a multi-objective run). Hover shows each curve's value in the
// legend; drag across to zoom, double-click to zoom out. Live charts grow as the page's live panel feeds
// them new points.
import uPlot from "uplot";

export interface Series {
  label: string;
  points: [number, number | null][];
  /** Drawn dashed (a multi-objective result's population maxima, beside PyGAD's history). */
  dash?: boolean;
  /** A population statistic of the curve labelled `of` (its mean, median, or worst: the band's lower edge). */
  role?: "mean" | "median" | "worst";
  of?: string;
}

/**
 * How the y axis reads: as the values are, log (values ≤ 0 are not drawn), symlog (asinh: linear near 0,
 * logarithmic past ±1, any sign), or "distance to best": |best − value| on a log scale, best being the
 * largest value of the panel's best curves (the final best of a run that maximises), so late progress
 * near the optimum shows.
 */
export type ScaleMode = "linear" | "log" | "symlog" | "distance";
const MODES: [ScaleMode, string][] = [
  ["linear", "Linear"],
  ["log", "Log"],
  ["symlog", "Symlog"],
  ["distance", "Distance to best"],
];

export interface Panel {
  title: string;
  yLabel: string;
  series: Series[];
}

const COLORS = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f"];

/** uPlot's aligned data: one x array (every generation present in any curve) and one y array per curve. */
function aligned(series: Series[]): uPlot.AlignedData {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array(xs.length).fill(null);
    for (const [x, v] of s.points) y[index.get(x)!] = v;
    return y;
  });
  return [xs, ...ys] as uPlot.AlignedData;
}

export interface LiveChart {
  setPanels(panels: Panel[]): void;
}

/** The panel's y values as the mode draws them (the x values unchanged). */
function transformed(panel: Panel, mode: ScaleMode): Series[] {
  if (mode === "linear" || mode === "symlog") return panel.series;
  if (mode === "log") return panel.series.map((s) => ({ ...s, points: s.points.map(([x, v]) => [x, v !== null && v > 0 ? v : null]) }));
  const bests = panel.series.filter((s) => !s.role).flatMap((s) => s.points.map((p) => p[1]).filter((v): v is number => v !== null));
  const best = bests.length ? Math.max(...bests) : 0;
  return panel.series.map((s) => ({
    ...s,
    points: s.points.map(([x, v]) => {
      const d = v === null ? null : Math.abs(best - v);
      return [x, d !== null && d > 0 ? d : null];
    }),
  }));
}

const DISTR: Record<ScaleMode, uPlot.Scale.Distr> = { linear: 1, log: 3, symlog: 4, distance: 3 };

const HEIGHT = 280;
const SMALL_HEIGHT = 200;

/** The panels' shape: a chart is rebuilt when it changes (more curves, more objectives), else its data is set. */
const shapeOf = (panels: Panel[]) => panels.map((p) => `${p.title}:${p.series.length}`).join("|");

/** A colour with an alpha, for the band ("#2563eb" → "rgba(37,99,235,a)"). */
const alpha = (hex: string, a: number) =>
  `rgba(${Number.parseInt(hex.slice(1, 3), 16)},${Number.parseInt(hex.slice(3, 5), 16)},${Number.parseInt(hex.slice(5, 7), 16)},${a})`;

export function drawChart(el: HTMLElement, initial: Panel[]): LiveChart {
  let plots: uPlot[] = [];
  let shape = "";
  let mode: ScaleMode = "linear";
  let current = initial;
  const width = () => Math.max(280, el.clientWidth || 600);
  // The scale switch, before the chart (only when there is something to draw).
  const switcher = document.createElement("div");
  switcher.className = "chart-scale";
  switcher.setAttribute("role", "group");
  switcher.setAttribute("aria-label", "Y axis");
  for (const [value, text] of MODES) {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: text, className: "secondary small" });
    button.dataset.scale = value;
    button.setAttribute("aria-pressed", String(value === mode));
    button.addEventListener("click", () => {
      mode = value;
      el.dataset.scale = mode;
      for (const b of switcher.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.scale === mode));
      build(current);
    });
    switcher.append(button);
  }
  if (initial.some((p) => p.series.length)) el.before(switcher);
  el.dataset.scale = mode;
  const build = (panels: Panel[]) => {
    for (const plot of plots) plot.destroy();
    el.replaceChildren();
    current = panels;
    const height = panels.length > 1 ? SMALL_HEIGHT : HEIGHT;
    plots = panels.map((panel) => {
      const box = document.createElement("div");
      box.className = "chart-panel";
      if (panel.title) box.append(Object.assign(document.createElement("h3"), { className: "panel-title", textContent: panel.title }));
      el.append(box);
      // A statistic takes its curve's colour: mean dashed, median dotted, worst thin over a band.
      const colourOf = new Map<string, string>();
      let next = 0;
      for (const s of panel.series) if (!s.role) colourOf.set(s.label, COLORS[next++ % COLORS.length]!);
      const indexOf = new Map(panel.series.map((s, i) => [s.label, i + 1]));
      const bands: uPlot.Band[] = panel.series.flatMap((s, i) =>
        s.role === "worst" && s.of && indexOf.has(s.of)
          ? [{ series: [indexOf.get(s.of)!, i + 1] as [number, number], fill: alpha(colourOf.get(s.of) ?? COLORS[0]!, 0.12) }]
          : [],
      );
      const series = transformed(panel, mode);
      const yLabel = mode === "distance" ? `distance to best (${panel.yLabel})` : panel.yLabel;
      box.dataset.yLabel = yLabel; // the axis is drawn on the canvas: its name, for tests and tools
      return new uPlot(
        {
          width: width(),
          height,
          scales: { x: { time: false }, y: { distr: DISTR[mode], ...(mode === "symlog" && { asinh: 1 }) } },
          axes: [{ label: "generation" }, { label: yLabel, size: 70 }],
          cursor: { drag: { x: true, y: false } },
          bands,
          series: [
            { label: "generation" },
            ...series.map((s) => {
              const colour = (s.role ? colourOf.get(s.of ?? "") : colourOf.get(s.label)) ?? COLORS[0]!;
              return {
                label: s.label,
                stroke: s.role === "worst" ? alpha(colour, 0.45) : colour,
                width: s.role ? 1.25 : 2,
                ...(s.dash && { dash: [6, 4] }),
                ...(s.role === "mean" && { dash: [5, 3] }),
                ...(s.role === "median" && { dash: [1, 3] }),
                spanGaps: false,
                points: { show: !s.role && s.points.length < 40 },
              };
            }),
          ],
        },
        aligned(series),
        box,
      );
    });
    shape = shapeOf(panels);
  };
  build(initial);
  new ResizeObserver(() => {
    for (const plot of plots) plot.setSize({ width: width(), height: plot.height });
  }).observe(el);
  return {
    setPanels(next) {
      if (!switcher.isConnected && next.some((p) => p.series.length)) el.before(switcher);
      if (shapeOf(next) !== shape) build(next);
      else {
        current = next;
        next.forEach((panel, i) => {
          plots[i]!.setData(aligned(transformed(panel, mode)));
        });
      }
    },
  };
}
