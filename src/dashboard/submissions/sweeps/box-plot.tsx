/** @jsxImportSource hono/jsx */
// A sweep's box plots (docs/dashboard.md#sweeps), drawn on the server as one SVG: a row per combination on
// one shared axis of final best fitness — the whiskers from min to max, the box from the first to the
// third quartile, the median as a bar, every value as a dot — the best combination in green and marked.
// No script: the numbers are in the statistics table next to it, which screen readers read instead.
import type { SweepView } from "../../../operations/sweeps";
import { fmtNumber } from "../../shared/layout";

const ROW = 34;
const LABEL = 270;
const PLOT = 520;
const PAD = 16;
const AXIS = 34;

/** About five round ticks over [lo, hi]. */
function ticks(lo: number, hi: number): number[] {
  if (lo === hi) return [lo];
  const raw = (hi - lo) / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Number(t.toPrecision(12)));
  return out;
}

const shorten = (text: string, max = 36) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export function BoxPlots(p: { sweep: SweepView; labels: string[] }) {
  const combos = p.sweep.combinations;
  const values = combos.flatMap((c) => c.runs.flatMap((r) => (r.best_solution_fitness === null ? [] : [r.best_solution_fitness])));
  if (!values.length) return <p class="muted">No child has succeeded yet: the box plots appear as results come in.</p>;
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (lo === hi) {
    lo -= Math.abs(lo) * 0.1 || 1;
    hi += Math.abs(hi) * 0.1 || 1;
  }
  const x = (v: number) => LABEL + PAD + ((v - lo) / (hi - lo)) * PLOT;
  const height = combos.length * ROW + AXIS + PAD;
  const width = LABEL + PLOT + PAD * 2;
  const best = p.sweep.best_combination;
  return (
    <svg
      class="box-plot"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-labelledby="box-title box-desc"
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id="box-title">Final best fitness per combination</title>
      <desc id="box-desc">
        One row per combination: whiskers from min to max, the box from the first to the third quartile, the median as a bar, each seed's
        value as a dot.{best !== null && ` The best combination, ${p.labels[best]}, is drawn in green.`} The table below gives the same
        numbers.
      </desc>
      {ticks(lo, hi).map((t) => (
        <>
          <line class="axis" x1={x(t)} x2={x(t)} y1={PAD / 2} y2={height - AXIS + 4} />
          <text x={x(t)} y={height - AXIS + 18} text-anchor="middle">
            {fmtNumber(t, 4)}
          </text>
        </>
      ))}
      <text x={LABEL + PAD + PLOT / 2} y={height - 4} text-anchor="middle">
        final best fitness (higher is better)
      </text>
      {combos.map((c, i) => {
        const y = PAD / 2 + i * ROW + ROW / 2;
        const s = c.statistics;
        const points = c.runs.flatMap((r) => (r.best_solution_fitness === null ? [] : [r.best_solution_fitness]));
        return (
          <g class={c.is_best ? "best" : undefined} data-combination={c.index}>
            <text x={LABEL} y={y + 4} text-anchor="end">
              {c.is_best ? "★ " : ""}
              {shorten(`${c.index}: ${p.labels[i]}`)}
            </text>
            {s.n === 0 || s.min === null || s.max === null || s.q1 === null || s.q3 === null || s.median === null ? (
              <text x={LABEL + PAD} y={y + 4} class="muted">
                no values yet
              </text>
            ) : (
              <>
                <line class="whisker" x1={x(s.min)} x2={x(s.max)} y1={y} y2={y} />
                <line class="whisker" x1={x(s.min)} x2={x(s.min)} y1={y - 6} y2={y + 6} />
                <line class="whisker" x1={x(s.max)} x2={x(s.max)} y1={y - 6} y2={y + 6} />
                <rect class="box" x={x(s.q1)} y={y - 10} width={Math.max(1, x(s.q3) - x(s.q1))} height={20} />
                <line class="median" x1={x(s.median)} x2={x(s.median)} y1={y - 10} y2={y + 10} />
                {points.map((v) => (
                  <circle class="point" cx={x(v)} cy={y} r={3} />
                ))}
              </>
            )}
          </g>
        );
      })}
    </svg>
  );
}
