// The Pareto front of a multi-objective result. Two objectives: a scatter plot (uPlot, points only,
// sorted along objective 0) whose legend shows the hovered solution's two values. More: parallel
// coordinates in SVG, one vertical axis per objective scaled to the front's own range (better is up,
// every objective is maximised); hovering a line shows that solution's values (the page's table lists them
// all for keyboards and screen readers).
import uPlot from "uplot";

export interface Front {
  objectives: number[][];
  /** The objectives of the result's best solution (PyGAD's best_solution()), marked on the chart. */
  best: number[] | null;
}

/** A scale's range with 5 % of room on each side, so no point sits on the frame. */
const padded = (min: number | null, max: number | null): uPlot.Range.MinMax => {
  if (min === null || max === null) return [0, 1];
  const room = (max - min || Math.abs(max) || 1) * 0.05;
  return [min - room, max + room];
};
const same = (a: number[], b: number[] | null) => !!b && a.length === b.length && a.every((v, i) => v === b[i]);

const fmt = (n: number) =>
  Math.abs(n) !== 0 && (Math.abs(n) < 1e-4 || Math.abs(n) >= 1e9) ? n.toExponential(4) : String(Number(n.toPrecision(6)));

function scatter(el: HTMLElement, objectives: number[][], best: number[] | null) {
  const order = objectives.map((o, i) => ({ o, i })).sort((a, b) => a.o[0]! - b.o[0]! || a.o[1]! - b.o[1]!);
  const bestAt = order.findIndex((p) => same(p.o, best));
  const width = () => Math.max(280, el.clientWidth || 600);
  const plot = new uPlot(
    {
      width: width(),
      height: 320,
      scales: { x: { time: false, range: (_u, min, max) => padded(min, max) }, y: { range: (_u, min, max) => padded(min, max) } },
      axes: [{ label: "objective 0" }, { label: "objective 1", size: 70 }],
      cursor: { drag: { x: true, y: false } },
      series: [
        { label: "objective 0", value: (_u, v) => (v == null ? "--" : fmt(v)) },
        {
          label: "objective 1",
          stroke: "#2563eb",
          width: 1,
          paths: () => null,
          points: { show: true, size: 8, fill: "#2563eb" },
          value: (_u, v) => (v == null ? "--" : fmt(v)),
        },
        {
          label: "best solution",
          stroke: "#d97706",
          width: 2,
          paths: () => null,
          points: { show: true, size: 14, fill: "rgba(0,0,0,0)" },
          value: (_u, v) => (v == null ? "--" : fmt(v)),
        },
      ],
    },
    [order.map((p) => p.o[0]!), order.map((p) => p.o[1]!), order.map((p, i) => (i === bestAt ? p.o[1]! : null))],
    el,
  );
  new ResizeObserver(() => plot.setSize({ width: width(), height: 320 })).observe(el);
}

const SVG = "http://www.w3.org/2000/svg";
const svgEl = <K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>) => {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
};

function parallel(el: HTMLElement, objectives: number[][], best: number[] | null) {
  const count = objectives[0]?.length ?? 0;
  const ranges = Array.from({ length: count }, (_, i) => {
    const values = objectives.map((o) => o[i]!);
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
  });
  const W = 640;
  const H = 320;
  const pad = { left: 50, right: 50, top: 30, bottom: 50 };
  const ax = (i: number) => pad.left + (count > 1 ? (i / (count - 1)) * (W - pad.left - pad.right) : (W - pad.left - pad.right) / 2);
  const sy = (i: number, v: number) =>
    pad.top + (1 - (v - ranges[i]![0]!) / (ranges[i]![1]! - ranges[i]![0]!)) * (H - pad.top - pad.bottom);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, class: "parallel", "aria-hidden": "true" });
  const readout = document.createElement("p");
  readout.className = "front-readout";
  readout.setAttribute("aria-live", "polite");
  readout.textContent = "Hover a line for its solution's values.";
  const opacity = Math.max(0.15, Math.min(0.7, 25 / Math.max(objectives.length, 1)));
  const lines = objectives.map((o) =>
    svgEl("polyline", {
      points: o.map((v, i) => `${ax(i).toFixed(1)},${sy(i, v).toFixed(1)}`).join(" "),
      fill: "none",
      stroke: "#2563eb",
      "stroke-opacity": opacity,
      "stroke-width": 1.5,
      class: same(o, best) ? "front-line best" : "front-line",
    }),
  );
  svg.append(...lines);
  const bestLine = lines.find((line) => line.classList.contains("best"));
  if (bestLine) {
    svg.append(bestLine); // on top
    readout.textContent = "Hover a line for its solution's values; the orange one is the best solution.";
  }
  // Hovering picks the line nearest the pointer at its x (lines are thin): its y there, between two axes.
  const yAt = (o: number[], x: number) => {
    const step = count > 1 ? (W - pad.left - pad.right) / (count - 1) : 1;
    const k = Math.max(0, Math.min(count - 2, Math.floor((x - pad.left) / step)));
    if (count < 2) return sy(0, o[0]!);
    const t = Math.max(0, Math.min(1, (x - ax(k)) / step));
    return sy(k, o[k]!) * (1 - t) + sy(k + 1, o[k + 1]!) * t;
  };
  let shown = -1;
  svg.addEventListener("mousemove", (event) => {
    const ctm = svg.getScreenCTM();
    if (!ctm) return;
    const at = new DOMPoint(event.clientX, event.clientY).matrixTransform(ctm.inverse());
    let nearest = -1;
    let distance = 12; // viewBox units
    objectives.forEach((o, index) => {
      const d = Math.abs(yAt(o, at.x) - at.y);
      if (d < distance) [nearest, distance] = [index, d];
    });
    if (nearest < 0 || nearest === shown) return;
    shown = nearest;
    for (const other of svg.querySelectorAll(".front-line.hover")) other.classList.remove("hover");
    lines[nearest]!.classList.add("hover");
    svg.append(lines[nearest]!); // drawn on top
    readout.textContent = `Solution ${nearest}: ${objectives[nearest]!.map((v, i) => `objective ${i} = ${fmt(v)}`).join(", ")}`;
  });
  ranges.forEach(([lo, hi], i) => {
    svg.append(
      svgEl("line", { x1: ax(i), x2: ax(i), y1: pad.top, y2: H - pad.bottom, stroke: "#374151" }),
      Object.assign(svgEl("text", { x: ax(i), y: pad.top - 8, "text-anchor": "middle", class: "axis-end" }), { textContent: fmt(hi!) }),
      Object.assign(svgEl("text", { x: ax(i), y: H - pad.bottom + 16, "text-anchor": "middle", class: "axis-end" }), {
        textContent: fmt(lo!),
      }),
      Object.assign(svgEl("text", { x: ax(i), y: H - pad.bottom + 34, "text-anchor": "middle" }), { textContent: `objective ${i}` }),
    );
  });
  el.replaceChildren(svg, readout);
}

export function drawFront(el: HTMLElement, front: Front) {
  const count = front.objectives[0]?.length ?? 0;
  if (count === 2) scatter(el, front.objectives, front.best);
  else if (count > 2) parallel(el, front.objectives, front.best);
}
