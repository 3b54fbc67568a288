// The Pareto front of a multi-objective result. Two objectives: a scatter plot (uPlot, points only,
// sorted along objective 0) whose legend shows the hovered solution's two values; with the run's history
// of fronts, a generation slider picks the population drawn with it (its front in colour, the rest grey). More: parallel
// coordinates in SVG, one vertical axis per objective scaled to the front's own range (better is up,
// every objective is maximised); hovering a line shows that solution's values (the page's table lists them
// all for keyboards and screen readers).
import uPlot from "uplot";

/** One snapshot of the run's history of fronts (pareto_history.json; null where a value was not finite). */
export interface Snapshot {
  generation: number;
  population_size: number;
  front: (number | null)[][];
  dominated: (number | null)[][];
}

export interface Front {
  objectives: number[][];
  /** The objectives of the result's best solution (PyGAD's best_solution()), marked on the chart. */
  best: number[] | null;
  /** Two objectives: the population's fronts over the run, and the id of the slider that picks one. */
  history?: Snapshot[];
  slider?: string;
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

const finite = (v: (number | null)[]): v is [number, number] => Number.isFinite(v[0]) && Number.isFinite(v[1]);

/**
 * Two objectives with the run's history: the population at the slider's snapshot (its front in blue, the
 * rest in grey) over the final front (ringed in red throughout) and the best solution (an orange ring).
 * The chart element says what it shows (data-generation, data-front-points, data-dominated-points).
 */
function historyScatter(el: HTMLElement, front: Front, history: Snapshot[], slider: HTMLInputElement) {
  const box = slider.closest<HTMLElement>(".front-slider");
  const readout = box?.querySelector("output") ?? null;
  const dot = (label: string, colour: string, size: number, fill: string) => ({
    label,
    stroke: colour,
    width: 1.5,
    paths: () => null,
    points: { show: true, size, fill },
    value: (_u: uPlot, v: number | null) => (v == null ? "--" : fmt(v)),
  });
  const data = (at: number): uPlot.AlignedData => {
    const snapshot = history[at]!;
    const points: { x: number; y: number; series: number }[] = [];
    for (const o of front.objectives) points.push({ x: o[0]!, y: o[1]!, series: 1 });
    for (const o of snapshot.dominated.filter(finite)) points.push({ x: o[0], y: o[1], series: 2 });
    for (const o of snapshot.front.filter(finite)) points.push({ x: o[0], y: o[1], series: 3 });
    if (front.best) points.push({ x: front.best[0]!, y: front.best[1]!, series: 4 });
    points.sort((a, b) => a.x - b.x || a.series - b.series);
    const column = (series: number) => points.map((p) => (p.series === series ? p.y : null));
    return [points.map((p) => p.x), column(1), column(2), column(3), column(4)];
  };
  const width = () => Math.max(280, el.clientWidth || 600);
  const plot = new uPlot(
    {
      width: width(),
      height: 320,
      scales: { x: { time: false, range: (_u, min, max) => padded(min, max) }, y: { range: (_u, min, max) => padded(min, max) } },
      axes: [{ label: "objective 0" }, { label: "objective 1", size: 70 }],
      // Each series' legend shows its point nearest the cursor (the others' gaps are skipped).
      cursor: { drag: { x: true, y: false }, hover: { skip: [null, undefined] } },
      series: [
        { label: "objective 0", value: (_u, v) => (v == null ? "--" : fmt(v)) },
        dot("final front", "#dc2626", 12, "rgba(0,0,0,0)"),
        dot("dominated at this generation", "#9ca3af", 6, "#9ca3af"),
        dot("front at this generation", "#2563eb", 8, "#2563eb"),
        dot("best solution", "#d97706", 16, "rgba(0,0,0,0)"),
      ],
    },
    data(history.length - 1),
    el,
  );
  const show = () => {
    const at = Math.max(0, Math.min(history.length - 1, Number(slider.value) || 0));
    const snapshot = history[at]!;
    const drawn = data(at);
    plot.setData(drawn);
    const front = snapshot.front.filter(finite).length;
    const dominated = snapshot.dominated.filter(finite).length;
    const shown = snapshot.front.length + snapshot.dominated.length;
    const text =
      `generation ${snapshot.generation}: ${front} on its front, ${dominated} dominated` +
      (shown < snapshot.population_size ? ` (a sample of ${shown} of ${snapshot.population_size})` : "");
    el.dataset.generation = String(snapshot.generation);
    el.dataset.frontPoints = String(front);
    el.dataset.dominatedPoints = String(dominated);
    slider.setAttribute("aria-valuetext", `generation ${snapshot.generation}`);
    if (readout) readout.textContent = text;
  };
  slider.addEventListener("input", show);
  if (box) box.hidden = false;
  show();
  new ResizeObserver(() => plot.setSize({ width: width(), height: 320 })).observe(el);
}

const SVG = "http://www.w3.org/2000/svg";
const svgEl = <K extends keyof SVGElementTagNameMap>(name: K, attrs: Record<string, string | number>) => {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
};

/**
 * Parallel coordinates of the final front; with a snapshot of the run's history (`population`), that
 * generation's population under it: its front's lines in blue, the dominated ones in grey, the axes
 * spanning both (the final front's lines then red, the best solution's orange).
 */
function parallel(el: HTMLElement, objectives: number[][], best: number[] | null, population: Snapshot | null = null) {
  const count = objectives[0]?.length ?? 0;
  const full = (o: (number | null)[]): o is number[] => o.length === count && o.every((v) => Number.isFinite(v));
  const popFront = population ? population.front.filter(full) : [];
  const popRest = population ? population.dominated.filter(full) : [];
  const ranges = Array.from({ length: count }, (_, i) => {
    const values = [...objectives, ...popFront, ...popRest].map((o) => o[i]!);
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
  const under = (rows: number[][], kind: string, colour: string) =>
    rows.map((o) =>
      svgEl("polyline", {
        points: o.map((v, i) => `${ax(i).toFixed(1)},${sy(i, v).toFixed(1)}`).join(" "),
        fill: "none",
        stroke: colour,
        "stroke-opacity": Math.max(0.15, Math.min(0.6, 20 / Math.max(rows.length, 1))),
        "stroke-width": 1,
        class: `population-line ${kind}`,
      }),
    );
  svg.append(...under(popRest, "dominated", "#9ca3af"), ...under(popFront, "front", "#2563eb"));
  const opacity = Math.max(0.15, Math.min(0.7, 25 / Math.max(objectives.length, 1)));
  const lines = objectives.map((o) =>
    svgEl("polyline", {
      points: o.map((v, i) => `${ax(i).toFixed(1)},${sy(i, v).toFixed(1)}`).join(" "),
      fill: "none",
      stroke: population ? "#dc2626" : "#2563eb",
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

/** The slider's snapshot drawn by `draw`, its readout and the chart's data attributes kept in step. */
function followSlider(el: HTMLElement, history: Snapshot[], slider: HTMLInputElement, draw: (snapshot: Snapshot) => void) {
  const box = slider.closest<HTMLElement>(".front-slider");
  const readout = box?.querySelector("output") ?? null;
  const show = () => {
    const snapshot = history[Math.max(0, Math.min(history.length - 1, Number(slider.value) || 0))]!;
    draw(snapshot);
    const drawn = (rows: (number | null)[][]) => rows.filter((o) => o.every((v) => Number.isFinite(v))).length;
    const front = drawn(snapshot.front);
    const dominated = drawn(snapshot.dominated);
    const shown = snapshot.front.length + snapshot.dominated.length;
    el.dataset.generation = String(snapshot.generation);
    el.dataset.frontPoints = String(front);
    el.dataset.dominatedPoints = String(dominated);
    slider.setAttribute("aria-valuetext", `generation ${snapshot.generation}`);
    if (readout)
      readout.textContent =
        `generation ${snapshot.generation}: ${front} on its front, ${dominated} dominated` +
        (shown < snapshot.population_size ? ` (a sample of ${shown} of ${snapshot.population_size})` : "");
  };
  slider.addEventListener("input", show);
  if (box) box.hidden = false;
  show();
}

export function drawFront(el: HTMLElement, front: Front) {
  const count = front.objectives[0]?.length ?? 0;
  const slider = front.slider ? document.getElementById(front.slider) : null;
  const history = front.history?.length && slider instanceof HTMLInputElement ? front.history : null;
  if (count === 2 && history) historyScatter(el, front, history, slider as HTMLInputElement);
  else if (count === 2) scatter(el, front.objectives, front.best);
  else if (count > 2 && history)
    followSlider(el, history, slider as HTMLInputElement, (snapshot) => parallel(el, front.objectives, front.best, snapshot));
  else if (count > 2) parallel(el, front.objectives, front.best);
}
