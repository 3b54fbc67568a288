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
}

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

const HEIGHT = 280;
const SMALL_HEIGHT = 200;

/** The panels' shape: a chart is rebuilt when it changes (more curves, more objectives), else its data is set. */
const shapeOf = (panels: Panel[]) => panels.map((p) => `${p.title}:${p.series.length}`).join("|");

export function drawChart(el: HTMLElement, initial: Panel[]): LiveChart {
  let plots: uPlot[] = [];
  let shape = "";
  const width = () => Math.max(280, el.clientWidth || 600);
  const build = (panels: Panel[]) => {
    for (const plot of plots) plot.destroy();
    el.replaceChildren();
    const height = panels.length > 1 ? SMALL_HEIGHT : HEIGHT;
    plots = panels.map((panel) => {
      const box = document.createElement("div");
      box.className = "chart-panel";
      if (panel.title) box.append(Object.assign(document.createElement("h3"), { className: "panel-title", textContent: panel.title }));
      el.append(box);
      return new uPlot(
        {
          width: width(),
          height,
          scales: { x: { time: false } },
          axes: [{ label: "generation" }, { label: panel.yLabel, size: 70 }],
          cursor: { drag: { x: true, y: false } },
          series: [
            { label: "generation" },
            ...panel.series.map((s, i) => ({
              label: s.label,
              stroke: COLORS[i % COLORS.length],
              width: 2,
              ...(s.dash && { dash: [6, 4] }),
              spanGaps: false,
              points: { show: s.points.length < 40 },
            })),
          ],
        },
        aligned(panel.series),
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
      if (shapeOf(next) !== shape) build(next);
      else
        next.forEach((panel, i) => {
          plots[i]!.setData(aligned(panel.series));
        });
    },
  };
}
