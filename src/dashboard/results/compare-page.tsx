/** @jsxImportSource hono/jsx */
// The comparison of runs (docs/dashboard.md#compare): their curves on one chart (one panel per objective),
// the runs with their kind, id, status and best fitness, and the table of the parameters that differ
// (those they share folded away). The URL names the runs (`/compare?runs=<id>,<id>`), so it can be shared
// with anyone signed in to the same account; the table needs no script, the chart is uPlot's.
import type { Session } from "../../domain/sessions";
import type { ChartData } from "../shared/charts";
import { compareHref, MAX_COMPARED, RunName } from "../shared/compare";
import { Layout, Status } from "../shared/layout";
import { bestFitnessText, Chart } from "../shared/result-parts";
import type { ComparedRun, ParameterRow } from "./compare";

function RunsTable(p: { runs: ComparedRun[] }) {
  const ids = p.runs.map((r) => r.runId);
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Submission</th>
            <th scope="col">Status</th>
            <th scope="col">Generations</th>
            <th scope="col">Best fitness</th>
            <th scope="col">Result</th>
            <th scope="col">
              <span class="visually-hidden">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {p.runs.map((r) => (
            <tr>
              <td>
                <RunName kind={r.kind} runId={r.runId} />
              </td>
              <td>
                <a href={`/submissions/${r.submissionId}`}>{r.name || <span class="muted">(unnamed)</span>}</a>
              </td>
              <td>
                <Status status={r.status} />
              </td>
              <td class="num">{r.generationsCompleted ?? "—"}</td>
              <td class="num">
                {r.result
                  ? bestFitnessText(r.result)
                  : r.bestSolutionFitness === null
                    ? "—"
                    : `${bestFitnessText({ bestSolutionFitness: r.bestSolutionFitness, numObjectives: 1 })} (so far)`}
              </td>
              <td>{r.result ? <a href={`/results/${r.result.id}`}>result</a> : "—"}</td>
              <td>
                {p.runs.length > 1 && (
                  <a href={compareHref(ids.filter((id) => id !== r.runId))} aria-label={`Remove run ${r.runId} from the comparison`}>
                    remove
                  </a>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ParameterTable(p: { runs: ComparedRun[]; rows: ParameterRow[] }) {
  const differ = p.rows.filter((r) => !r.same);
  const shared = p.rows.filter((r) => r.same);
  const head = (
    <thead>
      <tr>
        <th scope="col">Parameter</th>
        {p.runs.map((r) => (
          <th scope="col">
            <code class="run-id">{r.runId}</code>
          </th>
        ))}
      </tr>
    </thead>
  );
  const body = (rows: ParameterRow[]) => (
    <tbody>
      {rows.map((row) => (
        <tr>
          <th scope="row">{row.name}</th>
          {row.values.map((v) => (
            <td>{v}</td>
          ))}
        </tr>
      ))}
    </tbody>
  );
  return (
    <section aria-labelledby="params-h">
      <h2 id="params-h">Parameters that differ</h2>
      {p.runs.length < 2 ? (
        <p class="muted">Pick two runs or more to see what differs.</p>
      ) : differ.length ? (
        <div class="table-wrap">
          <table class="compact params-differ">
            {head}
            {body(differ)}
          </table>
        </div>
      ) : (
        <p>These runs have the same parameters.</p>
      )}
      {shared.length > 0 && (
        <details class="params-shared">
          <summary>The {shared.length} parameters they share</summary>
          <div class="table-wrap">
            <table class="compact">
              {head}
              {body(shared)}
            </table>
          </div>
        </details>
      )}
    </section>
  );
}

/** Adds a run by its id to the comparison (a GET form: works without scripts). */
function AddRun(p: { ids: string[] }) {
  if (p.ids.length >= MAX_COMPARED) return null;
  return (
    <form method="get" action="/compare" class="row add-run">
      {p.ids.length > 0 && <input type="hidden" name="runs" value={p.ids.join(",")} />}
      <label for="add-run">Add a run by its id</label>
      <input id="add-run" name="runs" maxlength={64} autocomplete="off" spellcheck={false} />
      <button type="submit" class="secondary">
        Add
      </button>
    </form>
  );
}

export function ComparePage(p: {
  session: Session;
  runs: ComparedRun[];
  chart: ChartData | null;
  rows: ParameterRow[];
  error: string | null;
}) {
  const ids = p.runs.map((r) => r.runId);
  return (
    <Layout title="Compare runs" session={p.session} section="compare">
      <h1>Compare runs</h1>
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.runs.length === 0 && !p.error && (
        <p class="empty">
          Tick runs in the <a href="/submissions">submissions</a> list, a submission's runs, the <a href="/results">results</a> list or a{" "}
          <a href="/sweeps">sweep</a>, then press “Compare selected runs” — up to {MAX_COMPARED} from any submissions. The page's address
          names the runs, so it can be shared.
        </p>
      )}
      {p.runs.length > 0 && (
        <>
          {p.chart && (
            <Chart
              id="compare-chart"
              data={p.chart}
              caption={`Best fitness per generation of ${p.runs.length} run${p.runs.length === 1 ? "" : "s"}, each from generation 0 (several objectives: a panel per objective)`}
            />
          )}
          <section aria-labelledby="runs-h">
            <h2 id="runs-h">Runs</h2>
            <RunsTable runs={p.runs} />
          </section>
          <ParameterTable runs={p.runs} rows={p.rows} />
        </>
      )}
      <AddRun ids={ids} />
    </Layout>
  );
}
