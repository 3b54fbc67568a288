/** @jsxImportSource hono/jsx */
// The public page of a shared result (docs/dashboard.md#public-page): read-only, no sign-in, no code, no
// ids of other data; its warnings counted but not quoted.
import type { ResultFileRow, ResultRow } from "../../storage/results";
import { Facts, Layout } from "../shared/layout";
import { Chart, ConstraintNotice, resultFacts } from "../shared/result-parts";
import { type Drawn, FrontSection, Genes, historyCaption, ParameterFacts } from "./parts";

/**
 * Files a shared result's public page offers: the curves, the genes and the Pareto front, never code
 * (result.json holds the parameters) nor the run's output (logs.txt).
 */
export const PUBLIC_FILES = [
  "fitness_history.csv",
  "best_solution.csv",
  "fitness.svg",
  "pareto_front.json",
  "pareto_front.csv",
  "pareto_front.svg",
];

export function SharedPage(p: { r: ResultRow; drawn: Drawn; files: ResultFileRow[] }) {
  const { r } = p;
  return (
    <Layout title={r.name || "Shared result"} session={null}>
      <p class="muted">A result shared from Allele (read-only).</p>
      <h1>{r.name || "Shared result"}</h1>
      <Facts items={resultFacts(r, p.drawn.inf, { warnings: false, front: p.drawn.front, history: p.drawn.history })} />
      <ConstraintNotice violations={r.constraintViolations} />
      {r.warnings.length > 0 && (
        <p class="muted">The run gave Python warnings; their texts are not shared (they can quote the owner's code).</p>
      )}
      <FrontSection id="shared-front" r={r} drawn={p.drawn} files={p.files} base="/shared" />
      <Chart id="shared-chart" data={p.drawn.chart} caption={historyCaption(r, false)} />
      <Genes genes={r.bestSolution} objectives={r.numObjectives} />
      <section aria-labelledby="files-h">
        <h2 id="files-h">Files</h2>
        <ul class="files">
          {p.files.map((f) => (
            <li>
              <a href={`/shared/${r.id}/files/${f.name}`} download>
                {f.name}
              </a>
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="params-h">
        <h2 id="params-h">GA parameters</h2>
        <ParameterFacts r={r} />
        <p class="muted">The code of this run is not shared.</p>
      </section>
    </Layout>
  );
}
