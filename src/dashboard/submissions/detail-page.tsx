/** @jsxImportSource hono/jsx */
// A submission (docs/dashboard.md#pages): its status and actions, its live progress (and how far a failed
// run got) with its results' curves, the latest run's warnings, run again, its runs, its data files, its
// parameters and code, and the latest run's logs.
import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import { CODE_FIELDS, holdsCode } from "../../model/parameters";
import { isLive } from "../../model/runs";
import type { SubmissionDataFileRow } from "../../storage/data-files";
import type { ResultRow } from "../../storage/results";
import type { RunRow, SubmissionRow } from "../../storage/submissions";
import { type ChartData, historyChart } from "../shared/charts";
import { CompareBar, PickBox } from "../shared/compare";
import { ActionButton, Csrf, Facts, fmtBytes, fmtNumber, Layout, money, plain, Status, Time } from "../shared/layout";
import { Chart, Warnings, warningTotal } from "../shared/result-parts";
import { liveView, progressFitness } from "./live";
import { CodeBlock, PaymentChoice, progressText, runFitnessText } from "./parts";

/** A submission with its latest run, all its runs and its results. */
export interface Detail {
  s: SubmissionRow;
  run: RunRow;
  runs: RunRow[];
  results: ResultRow[];
  /** The data files its runs read (what each id named when the run was admitted). */
  files: SubmissionDataFileRow[];
}

function Header(p: { session: Session; s: SubmissionRow }) {
  const { s } = p;
  return (
    <>
      <div class="title-row">
        <h1>{s.name || <span class="muted">(unnamed)</span>}</h1>
        <span class={`status s-${s.status}`} data-live-badge>
          {s.status}
        </span>
      </div>
      <p class="muted">
        Submission <code>{s.id}</code> · source {s.source} · created <Time iso={s.createdAt} />
        {s.sweepId && (
          <>
            {" "}
            · a child of <a href={`/sweeps/${s.sweepId}`}>sweep {s.sweepId}</a>
          </>
        )}
        {s.description && <> · {s.description}</>}
        {s.submissionType !== "new" && (
          <>
            {" "}
            · quick type <code data-submission-type>{s.submissionType}</code> (its built-in fitness function, below, is not editable)
          </>
        )}
      </p>
      <div class="actions">
        {isLive(s.status) && (
          <ActionButton
            session={p.session}
            action={`/submissions/${s.id}/cancel`}
            label="Cancel run"
            confirm="Cancel the running run? Usage so far is charged."
          />
        )}
        <ActionButton
          session={p.session}
          action={`/submissions/${s.id}/delete`}
          label="Delete submission"
          danger
          confirm="Delete this submission and its runs? Its results stay."
        />
        <a class="button secondary" href={`/submissions/new?from=${s.id}`}>
          Copy to a new submission
        </a>
      </div>
    </>
  );
}

/** The progress line and bar, and a failed run's error with how far it got. */
function ProgressLine(p: { d: Detail }) {
  const { s, run, results } = p.d;
  const total = run.parameters.num_generations;
  const fitness = progressFitness(
    run,
    results.find((r) => r.runId === run.id),
  );
  const sofar = run.bestSolutionFitness === null ? "" : `, best fitness ${fmtNumber(run.bestSolutionFitness)} so far`;
  return (
    <>
      <p class="progress-line" aria-live="polite">
        <span data-field="status">{s.status}</span> · generation <span data-field="generations">{run.generationsCompleted ?? 0}</span> of{" "}
        <span data-field="total">{total ?? "?"}</span> · <span data-field="fitness-label">{fitness.label}</span>{" "}
        <span data-field="fitness">{fitness.text}</span>
      </p>
      <progress data-field="bar" max={total ?? 1} value={run.generationsCompleted ?? 0} aria-label="Generations done"></progress>
      {run.resumes?.length ? (
        <p class="resumes" data-field="resumes">
          Resumed {run.resumes.length} time{run.resumes.length === 1 ? "" : "s"} after a lost worker, from its last checkpoint (
          {run.resumes.map((at, i) => (
            <>
              {i ? ", " : ""}
              <Time iso={at} />
            </>
          ))}
          ); the result is the same as an uninterrupted run's.
        </p>
      ) : null}
      {run.errorCode && (
        <p class="flash error" role="alert">
          The run failed: {run.errorMessage} [{run.errorCode}]
          {run.generationsCompleted
            ? ` — after ${run.generationsCompleted} generation${run.generationsCompleted === 1 ? "" : "s"}${sofar}.`
            : ""}
        </p>
      )}
    </>
  );
}

const LIVE_CAPTION =
  "Best fitness per generation so far, or each objective's best in a panel of its own when the fitness returns several (grows while the run goes on)";

/**
 * The progress panel: while the run is live, its trail grows; a run that ended without a result
 * (failed, cancelled) shows how far it got; the submission's results are drawn together, continued runs
 * after their parent.
 */
function ProgressPanel(p: { d: Detail }) {
  const { s, run, runs, results } = p.d;
  const live = isLive(s.status);
  const lv = liveView(s, run);
  const trailShown = live || (!results.some((r) => r.runId === run.id) && lv.points > 0);
  const progressChart: ChartData = live ? { panels: lv.panels, live: `/submissions/${s.id}/live` } : { panels: lv.panels };
  const kindOf = (r: ResultRow) => runs.find((x) => x.id === r.runId)?.kind ?? "run";
  const resultsChart =
    !live && results.length ? historyChart(results, runs, (r) => `${r.name || "result"} · ${kindOf(r)} ${r.runId}`) : null;
  const curves = results.some((r) => r.numObjectives > 1) ? "The best value of each objective" : "Best fitness";
  const ended = `How far run ${run.id} got before it ${run.status === "cancelled" ? "was cancelled" : "failed"}: its progress reports`;
  return (
    <section
      aria-labelledby="progress-h"
      class="panel"
      data-live={live ? `/submissions/${s.id}/live` : undefined}
      data-live-chart="progress-chart"
    >
      <h2 id="progress-h">Progress</h2>
      <ProgressLine d={p.d} />
      {trailShown && <Chart id="progress-chart" data={progressChart} caption={live ? LIVE_CAPTION : ended} />}
      {resultsChart && (
        <Chart
          id="results-chart"
          data={resultsChart}
          caption={`${curves} per generation of this submission's results (continued runs follow their parent)`}
        />
      )}
    </section>
  );
}

function RunAgain(p: { env: Bindings; session: Session; s: SubmissionRow; run: RunRow }) {
  return (
    <section aria-labelledby="again-h" class="panel">
      <h2 id="again-h">Run again</h2>
      <form method="post" action={`/submissions/${p.s.id}/reexecute`} class="stack">
        <Csrf session={p.session} />
        <label for="re-gens">Generations (empty: as created)</label>
        <input id="re-gens" name="num_generations" inputmode="numeric" pattern="[0-9]+" />
        <PaymentChoice env={p.env} session={p.session} chosen={p.run.paidWithCredits ? "credits" : "plan"} />
        <button type="submit">Run again</button>
      </form>
    </section>
  );
}

function RunRowView(p: { r: RunRow; result: ResultRow | undefined }) {
  const { r, result } = p;
  const warnings = warningTotal(r.warnings ?? []);
  return (
    <tr>
      <td class="pick-cell">
        <PickBox runId={r.id} label={`run ${r.id}`} />
      </td>
      <td>
        <code class="run-id">{r.id}</code>
      </td>
      <td>{r.kind}</td>
      <td>
        <Status status={r.status} />
      </td>
      <td>{r.paidWithCredits ? "credits" : "plan"}</td>
      <td class="num" data-cell="generations">
        {progressText(r.generationsCompleted, r.parameters.num_generations)}
      </td>
      <td class="num" data-cell="fitness">
        {runFitnessText({ bestSolutionFitness: r.bestSolutionFitness, numObjectives: result?.numObjectives ?? null }, r.status)}
      </td>
      <td class="num">{warnings ? warnings.toLocaleString("en") : <span class="muted">none</span>}</td>
      <td>
        <Time iso={r.finishedAt} />
      </td>
      <td>{r.creditsChargedMicro === null ? "—" : money(r.creditsChargedMicro / 1_000_000)}</td>
      <td>{result ? <a href={`/results/${result.id}`}>result</a> : "—"}</td>
    </tr>
  );
}

function RunsTable(p: { runs: RunRow[]; results: ResultRow[] }) {
  const resultOf = new Map(p.results.map((r) => [r.runId, r]));
  // While a run is queued or running, the table refreshes itself (its generations and best fitness).
  const pending = p.runs.some((r) => isLive(r.status));
  return (
    <section aria-labelledby="runs-h">
      <h2 id="runs-h">Runs</h2>
      <CompareBar />
      <div class="table-wrap" id="runs-table" data-refresh data-pending={pending ? "true" : undefined}>
        <table>
          <thead>
            <tr>
              <th scope="col">
                <span class="visually-hidden">Compare</span>
              </th>
              <th scope="col">Run</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col">Paid</th>
              <th scope="col">Generations</th>
              <th scope="col">Best fitness</th>
              <th scope="col">Warnings</th>
              <th scope="col">Ended</th>
              <th scope="col">Credits</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {p.runs.map((r) => (
              <RunRowView r={r} result={resultOf.get(r.id)} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The data files its runs read at /data/<name>: kept for them even once their listing is deleted. */
function DataFiles(p: { files: SubmissionDataFileRow[] }) {
  if (!p.files.length) return null;
  return (
    <section aria-labelledby="files-h">
      <h2 id="files-h">Data files</h2>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">In the run</th>
              <th scope="col">Size</th>
              <th scope="col">Data file</th>
              <th scope="col">SHA-256</th>
            </tr>
          </thead>
          <tbody>
            {p.files.map((f) => (
              <tr>
                <td>
                  <code>/data/{f.name}</code>
                </td>
                <td>{fmtBytes(f.sizeBytes)}</td>
                <td>
                  <a href={`/data-files/${f.dataFileId}/content`}>{f.dataFileId}</a>
                </td>
                <td>
                  <code title={f.sha256}>{f.sha256.slice(0, 12)}…</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p class="hint">Reruns and continues read these files even after they are deleted from your data files.</p>
    </section>
  );
}

/** The parameters as facts, then each code field's source with its entry symbol. */
function Parameters(p: { s: SubmissionRow }) {
  const params = p.s.parameters;
  const code = CODE_FIELDS.flatMap((field) => {
    const source = params[field];
    return typeof source === "string" && holdsCode(params, field) ? [{ field, source }] : [];
  });
  const shown = new Set<string>(code.map((c) => c.field));
  const plainParams = Object.entries(params).filter(([k]) => !shown.has(k) && !k.endsWith("_entry"));
  return (
    <section aria-labelledby="params-h">
      <h2 id="params-h">Parameters</h2>
      <Facts items={plainParams.map(([k, v]) => [k, plain(v)])} />
      {code.map(({ field, source }) => (
        <>
          <h3>
            {field} <span class="muted">entry: {String(params[`${field}_entry`] ?? "")}</span>
          </h3>
          <CodeBlock code={source} label={`${field} source`} />
        </>
      ))}
    </section>
  );
}

export function DetailPage(p: { env: Bindings; session: Session; d: Detail }) {
  const { s, run } = p.d;
  const live = isLive(s.status);
  return (
    <Layout title={s.name || s.id} session={p.session} section="submissions" scripts={["editor"]}>
      <Header session={p.session} s={s} />
      <ProgressPanel d={p.d} />
      <Warnings warnings={live ? [] : (run.warnings ?? [])} heading="Warnings of the latest run" />
      {!live && <RunAgain env={p.env} session={p.session} s={s} run={run} />}
      <RunsTable runs={p.d.runs} results={p.d.results} />
      <DataFiles files={p.d.files} />
      <Parameters s={s} />
      {run.output && (
        <section aria-labelledby="logs-h">
          <h2 id="logs-h">Logs of the latest run</h2>
          <pre class="logs" tabindex={0}>
            {run.output}
          </pre>
        </section>
      )}
    </Layout>
  );
}
