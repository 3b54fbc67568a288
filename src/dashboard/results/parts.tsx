/** @jsxImportSource hono/jsx */
// Pieces a result's own page and its public page share: what they draw (the history chart with its
// infinite values marked, the Pareto front), the chart's caption, the front's section, the genes, and
// the parameters without code.
import type { ParetoHistory } from "../../domain/pareto";
import { IMPORTED_HISTORY_TITLE, MULTI_HISTORY_TITLE } from "../../domain/plots";
import { IMPORTED } from "../../domain/result-files";
import type { Bindings } from "../../env";
import { holdsCode } from "../../model/parameters";
import type { ResultFileRow, ResultRow } from "../../storage/results";
import { type ChartData, markInfinite } from "../shared/charts";
import { Facts, fmtNumber, plain } from "../shared/layout";
import { frontObjectives, type Infinities, infinitiesOf, paretoHistory } from "../shared/result-data";
import { FrontChart } from "../shared/result-parts";

/** What a result's page draws: its history chart (the continue chain on the owner's page), and its front. */
export interface Drawn {
  chart: ChartData;
  inf: Infinities | null;
  front: number[][] | null;
  /** Several objectives: the run's history of fronts (pareto_history.json), when it has one. */
  history: ParetoHistory | null;
}

/** The history chart of `chain` (ending at `r`) with r's infinite values marked, and r's Pareto front. */
export async function drawn(env: Bindings, r: ResultRow, files: ResultFileRow[], chart: ChartData): Promise<Drawn> {
  const several = r.numObjectives > 1;
  const [inf, front, history] = await Promise.all([
    infinitiesOf(env, r, files),
    several ? frontObjectives(env, files) : null,
    several ? paretoHistory(env, files) : null,
  ]);
  if (inf) markInfinite(chart, r.id, inf.history);
  return { chart, inf, front, history };
}

const SEVERAL = `${MULTI_HISTORY_TITLE}; dashed, each objective's maximum over the population (the values may come from different solutions)`;

export function historyCaption(r: ResultRow, chain: boolean): string {
  const curves = r.numObjectives <= 1 ? "Best fitness per generation" : r.stoppedReason === IMPORTED ? IMPORTED_HISTORY_TITLE : SEVERAL;
  return `${curves}${chain ? ", this result's continue chain on one axis" : ""}`;
}

/** The Pareto front of a result of several objectives (`base`: where its files are served). */
export function FrontSection(p: { id: string; r: ResultRow; drawn: Drawn; files: ResultFileRow[]; base: string }) {
  const { r } = p;
  if (r.numObjectives <= 1) return null;
  return (
    <section aria-labelledby="front-h">
      <h2 id="front-h">Pareto front</h2>
      <FrontChart
        id={p.id}
        size={r.paretoFrontSize}
        count={r.numObjectives}
        objectives={p.drawn.front}
        best={r.bestSolutionObjectives}
        history={p.drawn.history}
        svgUrl={p.files.some((f) => f.name === "pareto_front.svg") ? `${p.base}/${r.id}/files/pareto_front.svg` : null}
      />
    </section>
  );
}

export const Genes = (p: { genes: number[]; objectives: number }) => (
  <div class="table-wrap">
    <table class="compact genes">
      <caption>
        Best solution: {p.genes.length} genes
        {p.objectives > 1 && " (PyGAD's best_solution(): first of the NSGA-II sort, an extreme of the front)"}
      </caption>
      <thead>
        <tr>
          <th scope="col">Gene</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {p.genes.slice(0, 1000).map((v, i) => (
          <tr>
            <td>{i}</td>
            <td>{fmtNumber(v, 10)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/** A result's GA parameters as facts, without its code and entry symbols. */
export function ParameterFacts(p: { r: ResultRow }) {
  const params = Object.entries(p.r.parameters).filter(([k]) => !holdsCode(p.r.parameters, k) && !k.endsWith("_entry"));
  return <Facts items={params.map(([k, v]) => [k, plain(v)])} />;
}
