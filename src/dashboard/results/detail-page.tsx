/** @jsxImportSource hono/jsx */
// A result (docs/dashboard.md#results): its facts, front and curves (its continue chain on one axis),
// its warnings; rename, share, delete and continue; its files, genes, logs and parameters.
import type { Session } from "../../domain/sessions";
import type { RunKind } from "../../model/runs";
import type { ResultFileRow, ResultRow } from "../../storage/results";
import type { RunRow } from "../../storage/submissions";
import { compareHref } from "../shared/compare";
import { ActionButton, Csrf, Facts, Layout, money } from "../shared/layout";
import { Chart, ConstraintNotice, resultFacts, Warnings } from "../shared/result-parts";
import { Interpretation } from "./interpretation";
import { type Drawn, FrontSection, Genes, historyCaption, ParameterFacts } from "./parts";

/** Rename, share (with the public link to copy) or stop sharing, and delete. */
function ManagePanel(p: { session: Session; r: ResultRow; url: string }) {
  const { r } = p;
  return (
    <section aria-labelledby="manage-h" class="panel">
      <h2 id="manage-h">Manage</h2>
      <form method="post" action={`/results/${r.id}/rename`} class="stack">
        <Csrf session={p.session} />
        <label for="rename">Name</label>
        <div class="row">
          <input id="rename" name="name" value={r.name} maxlength={200} />
          <button type="submit">Rename</button>
        </div>
      </form>
      <div class="stack">
        {r.isShared ? (
          <>
            <p>
              Anyone with this link can see the result (no code, no other data):{" "}
              <a href={p.url} id="public-link">
                {p.url}
              </a>{" "}
              <button type="button" class="copy secondary" data-copy={p.url}>
                Copy link
              </button>
            </p>
            <ActionButton session={p.session} action={`/results/${r.id}/share`} label="Stop sharing" fields={{ is_shared: "false" }} />
          </>
        ) : (
          <ActionButton session={p.session} action={`/results/${r.id}/share`} label="Share publicly" fields={{ is_shared: "true" }} />
        )}
        <ActionButton
          session={p.session}
          action={`/results/${r.id}/delete`}
          label="Delete result"
          danger
          confirm="Delete this result and its files?"
        />
      </div>
    </section>
  );
}

/** Continue from the result's final population, when it has one and its submission still exists. */
function ContinuePanel(p: { session: Session; r: ResultRow; files: ResultFileRow[]; submissionExists: boolean }) {
  const canContinue = p.submissionExists && p.files.some((f) => f.name === "population.json");
  return (
    <section aria-labelledby="continue-h" class="panel">
      <h2 id="continue-h">Continue</h2>
      {canContinue ? (
        <form method="post" action={`/results/${p.r.id}/continue`} class="stack">
          <Csrf session={p.session} />
          <label for="cont-gens">More generations</label>
          <input id="cont-gens" name="num_generations" inputmode="numeric" pattern="[0-9]+" value="50" required />
          <fieldset class="payment">
            <legend>How this run is paid</legend>
            <label class="check">
              <input type="radio" name="payment" value="plan" checked /> On my plan
            </label>
            <label class="check">
              <input type="radio" name="payment" value="credits" /> With credits
            </label>
          </fieldset>
          <button type="submit">Continue from this population</button>
        </form>
      ) : (
        <p class="muted">
          {p.submissionExists
            ? "This result has no stored population to continue from."
            : "Its submission was deleted, so it cannot be continued."}
        </p>
      )}
    </section>
  );
}

function Files(p: { r: ResultRow; files: ResultFileRow[] }) {
  return (
    <section aria-labelledby="files-h">
      <h2 id="files-h">Files</h2>
      <ul class="files">
        {p.files.map((f) => (
          <li>
            <a href={`/results/${p.r.id}/files/${encodeURIComponent(f.name)}`} download>
              {f.name}
            </a>{" "}
            <span class="muted">
              {f.contentType}, {f.sizeBytes.toLocaleString("en")} bytes
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A duration in words a person reads at a glance: "850 ms", "12.3 s", "4 min 05 s". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** What the run cost, first on the page: runtime, CPU, peak memory and credits (docs/dashboard.md#results). */
function KeyNumbers(p: { run: RunRow }) {
  const { run } = p;
  const items: [string, string][] = [
    ["Runtime", run.executionDurationMs === null ? "—" : durationText(run.executionDurationMs)],
    ["CPU", run.cpuSecondsUsed === null ? "—" : `${run.cpuSecondsUsed.toFixed(2)} s`],
    ["Peak memory", run.peakMemoryMb === null ? "—" : `${run.peakMemoryMb} MB`],
    ["Credits", run.paidWithCredits ? money((run.creditsChargedMicro ?? 0) / 1_000_000) : "none (plan)"],
  ];
  return (
    <dl class="key-numbers" aria-label="Run cost">
      {items.map(([label, value]) => (
        <div>
          <dt>{label}</dt>
          <dd data-key={label.toLowerCase().replace(" ", "-")}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function DetailPage(p: {
  session: Session;
  r: ResultRow;
  files: ResultFileRow[];
  drawn: Drawn;
  logs: string | null;
  submissionExists: boolean;
  url: string;
  /** Its run's kind, while the run exists. */
  kind: RunKind | null;
  /** Its run, while it exists: the key numbers (runtime, CPU, peak memory, credits). */
  run: RunRow | null;
}) {
  const { r } = p;
  const chainShown = p.drawn.chart.panels[0]!.series.filter((s) => !s.role).length > 1;
  return (
    <Layout title={r.name || r.id} session={p.session} section="results" scripts={["editor"]}>
      <div class="title-row">
        <h1>{r.name || <span class="muted">(unnamed)</span>}</h1>
        {r.isShared && <span class="status s-shared">shared</span>}
      </div>
      <p class="muted">
        Result of run <code class="run-id">{r.runId}</code>
        {p.kind && <> ({p.kind})</>} of <a href={`/submissions/${r.submissionId}`}>submission {r.submissionId}</a>
        {!p.submissionExists && " (deleted)"} · <a href={compareHref([r.runId])}>compare with other runs</a>
      </p>
      {p.run && p.run.kind !== "import" && <KeyNumbers run={p.run} />}
      <Interpretation r={r} />
      {/* The key numbers and the chart come first (on a phone's first screen too); the facts after. */}
      {r.numObjectives <= 1 && <Chart id="result-chart" data={p.drawn.chart} caption={historyCaption(r, chainShown)} />}
      <Facts items={resultFacts(r, p.drawn.inf, { warnings: true, front: p.drawn.front, history: p.drawn.history })} />
      <ConstraintNotice violations={r.constraintViolations} />
      <FrontSection id="front-chart" r={r} drawn={p.drawn} files={p.files} base="/results" />
      {r.numObjectives > 1 && <Chart id="result-chart" data={p.drawn.chart} caption={historyCaption(r, chainShown)} />}
      <Warnings warnings={r.warnings} />
      <div class="cols">
        <ManagePanel session={p.session} r={r} url={p.url} />
        <ContinuePanel session={p.session} r={r} files={p.files} submissionExists={p.submissionExists} />
      </div>
      <Files r={r} files={p.files} />
      <Genes genes={r.bestSolution} objectives={r.numObjectives} />
      {p.logs !== null && (
        <section aria-labelledby="logs-h">
          <h2 id="logs-h">Run logs</h2>
          <pre class="logs" tabindex={0}>
            {p.logs}
          </pre>
        </section>
      )}
      <section aria-labelledby="params-h">
        <h2 id="params-h">Parameters of this run</h2>
        <ParameterFacts r={r} />
      </section>
    </Layout>
  );
}
