/** @jsxImportSource hono/jsx */
// Pieces the result, shared-result and submission pages share (docs/dashboard.md#results): the history
// chart, the Pareto front chart, warnings with their counts, the constraint-violation notice, the engine
// path in words, and a best fitness shown as what it is (a number, infinite, or several objectives).
import type { Child } from "hono/jsx";
import { frontLastChanged, frontSummary, type ParetoHistory } from "../../domain/pareto";
import type { ConstraintViolation, RunWarning } from "../../model/runs";
import type { ResultRow } from "../../storage/results";
import { type ChartData, scriptJson } from "./charts";
import { fmtNumber, Time } from "./layout";
import type { Infinities } from "./result-data";

/** The history chart's element and its data (drawn by the client script; a table below says the same for screen readers). */
export function Chart(p: { id: string; data: ChartData; caption: string }) {
  const several = p.data.panels.length > 1;
  const rows = p.data.panels.flatMap((panel) =>
    panel.series.flatMap((s) =>
      s.points.map(([g, v]) => ({ panel: panel.title, label: s.label, g, v: v === null ? (s.special?.[g] ?? "—") : fmtNumber(v) })),
    ),
  );
  return (
    <figure class="chart-box">
      <div class="chart" data-chart={p.id} role="img" aria-label={p.caption}></div>
      <script type="application/json" id={p.id} dangerouslySetInnerHTML={{ __html: scriptJson(p.data) }}></script>
      <figcaption>
        {p.caption}
        {(p.data.notes ?? []).map((note) => (
          <span class="note"> {note}</span>
        ))}
      </figcaption>
      {rows.length > 0 && (
        <details>
          <summary>The values as a table</summary>
          <table class="compact">
            <thead>
              <tr>
                {several && <th scope="col">Objective</th>}
                <th scope="col">Curve</th>
                <th scope="col">Generation</th>
                <th scope="col">{several ? "Best value" : "Best fitness"}</th>
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, 2000).map((row) => (
                <tr>
                  {several && <td>{row.panel}</td>}
                  <td>{row.label}</td>
                  <td>{row.g}</td>
                  <td>{row.v}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length > 2000 && (
            <p class="muted">The first 2,000 of {rows.length.toLocaleString("en")} values; fitness_history.csv holds them all.</p>
          )}
        </details>
      )}
    </figure>
  );
}

/** Axes the interactive parallel-coordinates chart draws; past it the result's own pareto_front.svg is shown. */
const MAX_FRONT_AXES = 12;
const FRONT_ROWS = 500;

/**
 * The final Pareto front: two objectives a scatter plot with hover values, more a parallel-coordinates
 * chart; the same values as a table. Without readable objectives (its file missing, or too many
 * objectives to draw) the result's own pareto_front.svg, when there is one.
 */
export function FrontChart(p: {
  id: string;
  size: number | null;
  count: number;
  objectives: number[][] | null;
  best: number[] | null;
  svgUrl: string | null;
  /** The run's history of fronts (pareto_history.json): a generation slider over the scatter or parallel coordinates (≤ 6 objectives). */
  history?: ParetoHistory | null;
}) {
  const interactive = p.objectives !== null && p.objectives.length > 0 && p.count <= MAX_FRONT_AXES;
  // The history holds the first 6 objectives: a front of up to 6 has a slider (scatter or parallel coordinates).
  const snapshots = interactive && p.history?.objectives_shown === p.count ? p.history.snapshots : [];
  const last = snapshots.at(-1);
  const sliderId = `${p.id}-generation`;
  const solutions = `${p.size ?? "?"} solution${p.size === 1 ? "" : "s"}`;
  const caption = `The final Pareto front: ${solutions} no other solution of the last population beats on every objective (all ${p.count} maximised).`;
  return (
    <figure class="chart-box front-box">
      {interactive ? (
        <>
          <div class="front-chart" data-front={p.id} role="img" aria-label={caption}></div>
          <script
            type="application/json"
            id={p.id}
            dangerouslySetInnerHTML={{
              __html: scriptJson({ objectives: p.objectives, best: p.best, ...(last ? { history: snapshots, slider: sliderId } : {}) }),
            }}
          ></script>
          {last && (
            // Shown by the client script, which draws the population at the chosen snapshot (docs/dashboard.md#results).
            <div class="front-slider" hidden>
              <label for={sliderId}>Generation</label>
              <input
                type="range"
                id={sliderId}
                min={0}
                max={snapshots.length - 1}
                step={1}
                value={snapshots.length - 1}
                aria-valuetext={`generation ${last.generation}`}
                aria-describedby={`${sliderId}-readout`}
              />
              <output id={`${sliderId}-readout`} for={sliderId} aria-live="polite">
                generation {last.generation}
              </output>
            </div>
          )}
        </>
      ) : p.svgUrl ? (
        <img src={p.svgUrl} alt={caption} class="front-svg" width={640} height={370} />
      ) : (
        <p class="muted">The front's file is missing (its upload failed), so it cannot be drawn.</p>
      )}
      <figcaption>
        {caption}{" "}
        {interactive &&
          (p.count === 2
            ? last
              ? `Move the slider through the ${snapshots.length} recorded generations: that generation's population, its front in blue and the rest in grey; the final front stays ringed in red throughout. Hover a point for its values (the orange ring is the best solution); drag across to zoom, double-click to zoom out.`
              : "Hover a point for its values (the ringed one is the best solution); drag across to zoom, double-click to zoom out."
            : last
              ? `Each line is a solution, each axis an objective (higher is better). Move the slider through the ${snapshots.length} recorded generations: that generation's population, its front in blue and the rest in grey, under the final front in red; hover a line of the final front for its values.`
              : "Each line is a solution, each axis an objective scaled to the front's range (higher is better); hover a line for its values.")}
      </figcaption>
      {p.objectives && p.objectives.length > 0 && (
        <details>
          <summary>The front as a table</summary>
          <div class="table-wrap">
            <table class="compact">
              <thead>
                <tr>
                  <th scope="col">Solution</th>
                  {p.objectives[0]!.map((_, i) => (
                    <th scope="col">objective {i}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {p.objectives.slice(0, FRONT_ROWS).map((o, index) => (
                  <tr>
                    <td>{index}</td>
                    {o.map((v) => (
                      <td>{fmtNumber(v, 10)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {p.objectives.length > FRONT_ROWS && (
            <p class="muted">The first {FRONT_ROWS} solutions; pareto_front.csv holds them all, with their genes.</p>
          )}
        </details>
      )}
    </figure>
  );
}

/** How many warnings a run raised in all (each entry counts its repeats). */
export const warningTotal = (warnings: RunWarning[]) => warnings.reduce((n, w) => n + w.count, 0);

/** A run's Python warnings, deduplicated with counts (docs/api.md#warnings). */
export function Warnings(p: { warnings: RunWarning[]; heading?: string }) {
  if (!p.warnings.length) return null;
  const total = warningTotal(p.warnings);
  return (
    <section aria-labelledby="warnings-h" class="panel warnings" id="warnings">
      <h2 id="warnings-h">
        {p.heading ?? "Warnings"}{" "}
        <span class="count">
          {p.warnings.length === 1 || p.warnings.length === total
            ? total.toLocaleString("en")
            : `${p.warnings.length} different, ${total.toLocaleString("en")} in all`}
        </span>
      </h2>
      <p class="hint">PyGAD's and the code's Python warnings; texts that differ only in numbers count as one, the first of them shown.</p>
      <div class="table-wrap">
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">Warning</th>
              <th scope="col" class="num">
                Times
              </th>
            </tr>
          </thead>
          <tbody>
            {p.warnings.map((w) => (
              <tr>
                <td class="warning-text">{w.message}</td>
                <td class="num">{w.count.toLocaleString("en")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Said when the best solution breaks a gene_constraint the user gave (PyGAD only warns and keeps the gene). */
export function ConstraintNotice(p: { violations: ConstraintViolation[] | null }) {
  if (!p.violations?.length) return null;
  const shown = p.violations.slice(0, 20);
  return (
    <div class="flash warn" role="note" id="constraint-violations">
      <p>
        <strong>The best solution violates its gene_constraint</strong> at{" "}
        {p.violations.length === 1 ? "gene" : `${p.violations.length} genes`}{" "}
        {shown.map((v, i) => (
          <>
            {i > 0 && ", "}
            {v.gene} (value {v.value === null ? "not a number" : fmtNumber(v.value, 10)})
          </>
        ))}
        {p.violations.length > shown.length && ", …"}. PyGAD found no allowed value there and kept the gene as it was.
      </p>
    </div>
  );
}

const STEP_NAMES = ["selection", "crossover", "mutation"];
const FALLBACK: Record<string, string> = { pygad: "stock PyGAD", mixed: "partly stock PyGAD" };

/**
 * The engine path in words (docs/engine.md): which steps ran accelerated and which fell back to stock
 * PyGAD; the exact mode (several objectives) gives stock PyGAD's results, its steps named as well.
 */
function engineText(engine: string | null): string {
  if (engine === null) return "not recorded (a result made before the engine was kept)";
  if (engine === "pygad") return "stock PyGAD";
  if (engine === "pygad:multi-objective") return "stock PyGAD (multi-objective)";
  const mode = engine.startsWith("accelerated:") ? "accelerated" : engine.startsWith("exact:") ? "exact" : null;
  if (!mode) return engine;
  const steps = engine.slice(mode.length + 1).split("+");
  const intro = mode === "exact" ? "exact (stock PyGAD's results, multi-objective)" : "accelerated";
  return `${intro} — ${steps
    .map((step, i) => {
      const [name, fallback] = step.split("=");
      return `${STEP_NAMES[i] ?? "step"} ${name}${fallback ? ` (${FALLBACK[fallback] ?? fallback})` : ""}`;
    })
    .join(", ")}`;
}

/** The engine path in words, then as the API names it (breakable after each step). */
const Engine = (p: { engine: string | null }) => (
  <>
    {engineText(p.engine)}
    {p.engine && (
      <>
        {" "}
        <code class="small engine">
          {p.engine.split("+").map((step, i) => (
            <>
              {i > 0 && (
                <>
                  +<wbr />
                </>
              )}
              {step}
            </>
          ))}
        </code>
      </>
    )}
  </>
);

/**
 * A result's best fitness as a person reads it: the number; "+∞" / "−∞" where it was infinite (or
 * "infinite" when the sign cannot be told without result.json); "N objectives" for a multi-objective one.
 */
export function bestFitnessText(r: Pick<ResultRow, "bestSolutionFitness" | "numObjectives">, inf?: Infinities | null): string {
  if (r.numObjectives > 1) return `${r.numObjectives} objectives`;
  if (r.bestSolutionFitness !== null) return fmtNumber(r.bestSolutionFitness);
  return inf?.best ?? "infinite";
}

/** The summary facts of a result (its page and its public page). */
/**
 * A front's facts in place of "found in generation" (which says little for a front): each objective's
 * spread over the front and, for two objectives, the hypervolume against the reference point
 * (frontSummary; docs/dashboard.md#results).
 */
function frontFacts(front: number[][] | null | undefined, history: ParetoHistory | null | undefined): [string, Child][] {
  const summary = front ? frontSummary(front) : null;
  const changed = history ? frontLastChanged(history) : null;
  const changedFacts: [string, Child][] = changed === null ? [] : [["Front last changed", frontChangedText(history!, changed)]];
  if (!summary) return changedFacts;
  return [
    ...changedFacts,
    ["Front spread", summary.spread.map((v, k) => `objective ${k}: ${fmtNumber(v)}`).join("; ")],
    ...(summary.hypervolume === null
      ? []
      : ([
          ["Hypervolume", `${fmtNumber(summary.hypervolume)} (reference point ${summary.reference.map((v) => fmtNumber(v)).join(", ")})`],
        ] as [string, Child][])),
  ];
}

/**
 * "in generation G", and at the history's resolution when its snapshots are spread: the front changed
 * after the snapshot before G's and by G (docs/dashboard.md#results).
 */
function frontChangedText(history: ParetoHistory, generation: number): string {
  const at = history.snapshots.findIndex((s) => s.generation === generation);
  const before = at > 0 ? history.snapshots[at - 1]!.generation : null;
  return before === null || before === generation - 1
    ? `in generation ${generation}`
    : `in generation ${generation} (between generations ${before + 1} and ${generation}: the history holds ${history.snapshots.length} snapshots)`;
}

export function resultFacts(
  r: ResultRow,
  inf: Infinities | null,
  extra: { warnings: boolean; front?: number[][] | null; history?: ParetoHistory | null },
): [string, Child][] {
  const objectives: [string, Child][] =
    r.numObjectives > 1
      ? [
          ["Objectives", `${r.numObjectives}, all maximised`],
          ["Best solution's objectives", r.bestSolutionObjectives ? r.bestSolutionObjectives.map((v) => fmtNumber(v, 10)).join(", ") : "—"],
          ["Pareto front", r.paretoFrontSize === null ? "—" : `${r.paretoFrontSize} solution${r.paretoFrontSize === 1 ? "" : "s"}`],
        ]
      : [["Best fitness", r.bestSolutionFitness === null ? bestFitnessText(r, inf) : fmtNumber(r.bestSolutionFitness, 10)]];
  const total = warningTotal(r.warnings);
  return [
    ...objectives,
    ...(r.numObjectives > 1
      ? frontFacts(extra.front, extra.history)
      : ([["Found in generation", r.bestSolutionGeneration === null ? "—" : String(r.bestSolutionGeneration)]] as [string, Child][])),
    ["Generations completed", String(r.generationsCompleted)],
    ["Stopped because", r.stoppedReason],
    ["Engine", <Engine engine={r.engine} />],
    ...(r.constraintViolations === null
      ? []
      : ([
          [
            "Gene constraints",
            r.constraintViolations.length
              ? `violated at ${r.constraintViolations.length} gene${r.constraintViolations.length === 1 ? "" : "s"}`
              : "all satisfied",
          ],
        ] as [string, Child][])),
    ...(r.resumes?.length
      ? ([
          [
            "Resumed",
            // docs/api.md#durable-runs: the run lost its worker and went on from its last checkpoint.
            `${r.resumes.length} time${r.resumes.length === 1 ? "" : "s"} from a checkpoint after a lost worker (same result as uninterrupted)`,
          ],
        ] as [string, Child][])
      : []),
    ["Warnings", total === 0 ? "none" : extra.warnings ? <a href="#warnings">{total.toLocaleString("en")}</a> : total.toLocaleString("en")],
    ["Created", <Time iso={r.createdAt} />],
  ];
}
