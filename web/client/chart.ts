// The fitness charts: uPlot (served from /assets, no CDN) over the JSON the page embeds. Hover shows each
// curve's value in the legend; drag across to zoom, double-click to zoom out. Live charts grow as the
// page's live panel feeds them new points.
import uPlot from "uplot";

export interface Series {
  label: string;
  points: [number, number | null][];
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
  setSeries(series: Series[]): void;
}

export function drawChart(el: HTMLElement, series: Series[]): LiveChart {
  let current = series;
  const width = () => Math.max(280, el.clientWidth || 600);
  const make = () =>
    new uPlot(
      {
        width: width(),
        height: 280,
        scales: { x: { time: false } },
        axes: [{ label: "generation" }, { label: "best fitness", size: 70 }],
        cursor: { drag: { x: true, y: false } },
        series: [{ label: "generation" }, ...current.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true, points: { show: s.points.length < 40 } }))],
      },
      aligned(current),
      el,
    );
  let plot = make();
  new ResizeObserver(() => plot.setSize({ width: width(), height: 280 })).observe(el);
  return {
    setSeries(next) {
      if (next.length !== current.length) {
        current = next;
        plot.destroy();
        plot = make();
      } else {
        current = next;
        plot.setData(aligned(next));
      }
    },
  };
}
