/** @jsxImportSource hono/jsx */
// Submissions in the dashboard (docs/dashboard.md#submissions): the list with the API's filters,
// ordering and cursor paging; a submission with its parameters, code, live progress and runs; the
// new-submission form; cancel, delete and run again — through the same operations and gates as the API.

import { Hono } from "hono";
import type { Child } from "hono/jsx";
import { limitsFor } from "../admission/admission";
import type { Payment } from "../admission/limits";
import type { Session } from "../domain/sessions";
import { cancelSubmission, deleteSubmission } from "../domain/submissions";
import type { Bindings } from "../env";
import { ApiError, notFound } from "../errors";
import { fieldErrors } from "../model/fields";
import { CODE_FIELDS } from "../model/parameters";
import { isLive, RUN_STATUSES, SUBMISSION_SOURCES, type TrailPoint } from "../model/runs";
import { reexecuteSubmission, startSubmission } from "../operations/runs";
import { createSubmissionSchema, submissionsListQuery, submissionsPage } from "../operations/submissions";
import { getDb } from "../storage/db";
import { type ResultRow, resultsOfSubmission } from "../storage/results";
import {
  getSubmission,
  getSubmissionWithRun,
  type RunRow,
  type RunSummary,
  runSummaries,
  runsOfSubmission,
  SUBMISSION_ORDERINGS,
  type SubmissionRow,
} from "../storage/submissions";
import { requireScope } from "../surface/caller";
import { act, formOf, paymentOf, refusalText, webStarter } from "./actions";
import { type ChartData, historyChart, trailChart } from "./charts";
import type { WebEnv } from "./context";
import { ActionButton, Csrf, Facts, FilterInput, FilterSelect, fmtNumber, Layout, money, Pager, plain, Status, Time } from "./layout";
import { listQueryOf } from "./lists";
import { bestFitnessText, Chart, Warnings, warningTotal } from "./result-parts";
import { protectChange, requireSession } from "./session";
import { bodyToForm, FORM_FIELDS, type FormField, type FormValues, formErrors, formToBody, GROUPS, initialValues } from "./submission-form";

/** Code shown read-only, highlighted by the client's editor bundle. */
export const CodeBlock = (p: { code: string; label: string }) => (
  // biome-ignore lint/a11y/useAriaPropsSupportedByRole: screen readers announce the label of a code block, which has no role of its own
  <pre class="code" data-highlight="python" aria-label={p.label}>
    <code>{p.code}</code>
  </pre>
);

const workers = (n: number) => `${n} parallel fitness ${n === 1 ? "worker" : "workers"}`;

function PaymentChoice(p: { env: Bindings; session: Session; chosen: Payment; name?: string }) {
  const plan = limitsFor(p.env, p.session.account, "plan");
  const credits = limitsFor(p.env, p.session.account, "credits");
  const name = p.name ?? "payment";
  return (
    <fieldset class="payment">
      <legend>How this run is paid</legend>
      <label class="check">
        <input type="radio" name={name} value="plan" checked={p.chosen === "plan"} /> On my {p.session.account.plan} plan — no credits; the
        plan's limits ({plan.max_num_generations} generations, {plan.max_num_genes} genes, {workers(plan.max_parallel_workers)},{" "}
        {Math.round(plan.run_time_seconds / 60)} min)
      </label>
      <label class="check">
        <input type="radio" name={name} value="credits" checked={p.chosen === "credits"} /> With credits — charged for CPU and memory;
        Premium limits ({credits.max_num_generations} generations, {credits.max_num_genes} genes, {workers(credits.max_parallel_workers)},{" "}
        {Math.round(credits.run_time_seconds / 60)} min), counted as an in-flight API run
      </label>
    </fieldset>
  );
}

function Field(p: { f: FormField; values: FormValues; errors: Record<string, string> }) {
  const { f, values, errors } = p;
  const id = `f-${f.name}`;
  const error = errors[f.name];
  const described = [f.hint || f.default ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  const hint = (f.hint || f.default) && (
    <p class="hint" id={`${id}-hint`}>
      {f.hint}
      {f.default && <span class="default"> Default: {f.default}.</span>}
    </p>
  );
  const errorText = error && (
    <p class="field-error" id={`${id}-error`}>
      {error}
    </p>
  );
  const common = { id, name: f.name, "aria-describedby": described, "aria-invalid": error ? "true" : undefined };
  if (f.kind === "code") {
    const entry = `${f.name}_entry`;
    const entryError = errors[entry];
    return (
      <div class={`field code-field${error || entryError ? " invalid" : ""}`}>
        <label for={id}>
          {f.label}
          {f.required && <span class="req"> (required)</span>}
        </label>
        {hint}
        <textarea
          {...common}
          class="code-input"
          data-editor="python"
          data-entry={`f-${entry}`}
          rows={f.required ? 10 : 4}
          spellcheck={false}
        >
          {values[f.name] ?? ""}
        </textarea>
        {errorText}
        <label for={`f-${entry}`} class="entry-label">
          Entry symbol
        </label>
        <input
          id={`f-${entry}`}
          name={entry}
          value={values[entry] ?? ""}
          class="entry"
          list={`f-${entry}-names`}
          autocomplete="off"
          spellcheck={false}
          aria-describedby={`f-${entry}-hint${entryError ? ` f-${entry}-error` : ""}`}
          aria-invalid={entryError ? "true" : undefined}
        />
        <datalist id={`f-${entry}-names`}></datalist>
        <p class="hint" id={`f-${entry}-hint`}>
          The top-level name to call{f.name === "gene_constraint" ? " (a list)" : ""}; suggested from the code as you type.
        </p>
        {entryError && (
          <p class="field-error" id={`f-${entry}-error`}>
            {entryError}
          </p>
        )}
      </div>
    );
  }
  let control: Child;
  if (f.kind === "select" || f.kind === "bool") {
    const options =
      f.kind === "bool"
        ? [
            ["true", "yes"],
            ["false", "no"],
          ]
        : (f.options ?? []);
    control = (
      <select {...common}>
        <option value="">{f.default ? `default (${f.default})` : "—"}</option>
        {options.map(([value, label]) => (
          <option value={value} selected={values[f.name] === value}>
            {label}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === "textarea") {
    control = (
      <textarea {...common} rows={2}>
        {values[f.name] ?? ""}
      </textarea>
    );
  } else {
    const numeric = f.kind === "int" || f.kind === "number";
    control = (
      <>
        <input
          {...common}
          value={values[f.name] ?? ""}
          type="text"
          inputmode={f.kind === "int" ? "numeric" : f.kind === "number" ? "decimal" : undefined}
          pattern={f.kind === "int" ? "-?[0-9]+" : numeric ? "[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?" : undefined}
          required={f.required}
          placeholder={f.default}
          list={f.suggestions ? `${id}-suggestions` : undefined}
          autocomplete={f.suggestions ? "off" : undefined}
          spellcheck={f.kind === "text" ? undefined : false}
        />
        {f.suggestions && (
          <datalist id={`${id}-suggestions`}>
            {f.suggestions.map((v) => (
              <option value={v}></option>
            ))}
          </datalist>
        )}
      </>
    );
  }
  return (
    <div class={`field${error ? " invalid" : ""}`}>
      <label for={id}>
        {f.label}
        {f.required && <span class="req"> (required)</span>}
      </label>
      {control}
      {hint}
      {errorText}
    </div>
  );
}

function NewSubmissionPage(p: {
  env: Bindings;
  session: Session;
  values: FormValues;
  errors: Record<string, string>;
  formError?: string;
  payment: Payment;
}) {
  const count = Object.keys(p.errors).length;
  return (
    <Layout title="New submission" session={p.session} section="new" scripts={["editor"]}>
      <h1>New submission</h1>
      {(p.formError || count > 0) && (
        <div class="flash error" role="alert" id="form-errors">
          {p.formError && <p>{p.formError}</p>}
          {count > 0 && (
            <p>
              {count === 1 ? "One field needs" : `${count} fields need`} attention:{" "}
              {Object.keys(p.errors).map((name, i) => (
                <>
                  {i > 0 && ", "}
                  <a href={`#f-${name}`}>{name}</a>
                </>
              ))}
              .
            </p>
          )}
        </div>
      )}
      <form method="post" action="/submissions/new" class="submission-form" novalidate>
        <Csrf session={p.session} />
        {GROUPS.map(([group, title]) => {
          const fields = FORM_FIELDS.filter((f) => f.group === group);
          if (!fields.length) return null;
          const open =
            group === "basic" || fields.some((f) => p.errors[f.name] || p.errors[`${f.name}_entry`] || (p.values[f.name] ?? "") !== "");
          return (
            <details class="group" open={open}>
              <summary>
                <h2>{title}</h2>
              </summary>
              <div class={group === "callbacks" ? "fields one" : "fields"}>
                {fields.map((f) => (
                  <Field f={f} values={p.values} errors={p.errors} />
                ))}
              </div>
            </details>
          );
        })}
        <PaymentChoice env={p.env} session={p.session} chosen={p.payment} />
        <p class="hint">Runs started here fire no webhook events (only API submissions do).</p>
        <button type="submit">Submit</button>
      </form>
    </Layout>
  );
}

/** Generations done, "of" the run's total when known. */
const progressText = (done: number | null, total: number | null) =>
  done === null ? "—" : total === null ? String(done) : `${done} of ${total}`;

/** A run's best fitness as a list shows it: its result's (several objectives, infinite), else the run's progress. */
function runFitnessText(run: Pick<RunSummary, "bestSolutionFitness" | "numObjectives">, status: string): string {
  if (run.numObjectives !== null)
    return bestFitnessText({ bestSolutionFitness: run.bestSolutionFitness, numObjectives: run.numObjectives });
  return run.bestSolutionFitness === null
    ? "—"
    : `${fmtNumber(run.bestSolutionFitness)}${status === "failed" || status === "cancelled" ? " (so far)" : ""}`;
}

function ListPage(p: {
  session: Session;
  rows: SubmissionRow[];
  summaries: Map<string, RunSummary>;
  raw: Record<string, string>;
  error: string | null;
  next: string | null;
  previous: string | null;
}) {
  const f = p.raw;
  return (
    <Layout title="Submissions" session={p.session} section="submissions">
      <div class="title-row">
        <h1>Submissions</h1>
        <a class="button" href="/submissions/new">
          New submission
        </a>
      </div>
      <form method="get" action="/submissions" class="filters" aria-label="Filter submissions">
        <FilterInput name="name_contains" label="Name contains" value={f.name_contains} />
        <FilterSelect name="status" label="Status" value={f.status} options={RUN_STATUSES} any />
        <FilterSelect name="source" label="Source" value={f.source} options={SUBMISSION_SOURCES} any />
        <FilterInput name="created_after" label="Created after" type="date" value={f.created_after} />
        <FilterInput name="created_before" label="Created before" type="date" value={f.created_before} />
        <FilterSelect name="ordering" label="Order" value={f.ordering ?? "-created_at"} options={Object.keys(SUBMISSION_ORDERINGS)} />
        <button type="submit">Apply</button>
      </form>
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.rows.length === 0 ? (
        <p class="empty">
          No submissions{Object.keys(f).length ? " match these filters" : " yet"}. <a href="/submissions/new">Start one</a>.
        </p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Generations</th>
                <th scope="col">Best fitness</th>
                <th scope="col">Warnings</th>
                <th scope="col">Source</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {p.rows.map((s) => {
                const run = p.summaries.get(s.latestRunId);
                return (
                  <tr>
                    <td>
                      <a href={`/submissions/${s.id}`}>{s.name || <span class="muted">(unnamed) {s.id}</span>}</a>
                    </td>
                    <td>
                      <Status status={s.status} />
                    </td>
                    <td class="num">{run ? progressText(run.generationsCompleted, run.numGenerations) : "—"}</td>
                    <td class="num">{run ? runFitnessText(run, s.status) : "—"}</td>
                    <td class="num">
                      {run?.warnings ? (
                        <a href={`/submissions/${s.id}#warnings`} class="warn-count">
                          {run.warnings.toLocaleString("en")}
                        </a>
                      ) : (
                        <span class="muted">none</span>
                      )}
                    </td>
                    <td>{s.source}</td>
                    <td>
                      <Time iso={s.createdAt} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager base="/submissions" next={p.next} previous={p.previous} />
    </Layout>
  );
}

/** The run's best value of each objective at its latest progress report (several objectives), else null. */
const bestObjectives = (run: RunRow) => run.progressTrail?.at(-1)?.[2] ?? null;

/**
 * What the detail page's live panel polls every second: the latest run's progress and its trail as the
 * chart draws it (`points`: how many points the trail has, which tells the page whether to redraw).
 */
function liveView(s: SubmissionRow, run: RunRow) {
  const trail: TrailPoint[] = run.progressTrail ?? [];
  const live = isLive(s.status);
  return {
    status: s.status,
    run_id: run.id,
    run_kind: run.kind,
    generations_completed: run.generationsCompleted,
    num_generations: (run.parameters as { num_generations?: number }).num_generations ?? null,
    best_solution_fitness: run.bestSolutionFitness,
    best_objectives: bestObjectives(run),
    points: trail.length,
    panels: trailChart(trail, live ? `run ${run.id} (live)` : `run ${run.id}`),
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    error: run.errorCode ? { code: run.errorCode, message: run.errorMessage ?? "" } : null,
  };
}

/** The best fitness the progress line shows: the result's when there is one, else the run's progress. */
function progressFitness(run: RunRow, result: ResultRow | undefined): { label: string; text: string } {
  if (result)
    return result.numObjectives > 1
      ? { label: "best objectives", text: (result.bestSolutionObjectives ?? []).map((v) => fmtNumber(v)).join(", ") }
      : { label: "best fitness", text: bestFitnessText(result) };
  const objectives = bestObjectives(run);
  if (objectives) return { label: "best objectives", text: objectives.map((v) => fmtNumber(v)).join(", ") };
  return { label: "best fitness", text: fmtNumber(run.bestSolutionFitness) };
}

interface Detail {
  s: SubmissionRow;
  run: RunRow;
  runs: RunRow[];
  results: ResultRow[];
}

function DetailPage(p: { env: Bindings; session: Session; d: Detail }) {
  const { s, run, runs, results } = p.d;
  const live = isLive(s.status);
  const params = s.parameters;
  const code = CODE_FIELDS.filter((f) => typeof params[f] === "string");
  const plainParams = Object.entries(params).filter(([k]) => !code.includes(k as never) && !k.endsWith("_entry"));
  const lv = liveView(s, run);
  const resultOf = new Map(results.map((r) => [r.runId, r]));
  const latestResult = resultOf.get(run.id);
  const fitness = progressFitness(run, latestResult);
  // While the run is live, its trail grows; a run that ended without a result (failed, cancelled) shows
  // how far it got; the submission's results are drawn together, continued runs after their parent.
  const trailShown = live || (!latestResult && lv.points > 0);
  const progressChart: ChartData = live ? { panels: lv.panels, live: `/submissions/${s.id}/live` } : { panels: lv.panels };
  const resultsChart =
    !live && results.length
      ? historyChart(results, runs, (r) => `${r.name || "result"} · ${runs.find((x) => x.id === r.runId)?.kind ?? "run"} ${r.id}`)
      : null;
  const several = results.some((r) => r.numObjectives > 1);
  return (
    <Layout title={s.name || s.id} session={p.session} section="submissions" scripts={["editor"]}>
      <div class="title-row">
        <h1>{s.name || <span class="muted">(unnamed)</span>}</h1>
        <span class={`status s-${s.status}`} data-live-badge>
          {s.status}
        </span>
      </div>
      <p class="muted">
        Submission <code>{s.id}</code> · source {s.source} · created <Time iso={s.createdAt} />
        {s.description && <> · {s.description}</>}
      </p>
      <div class="actions">
        {live && (
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
      <section
        aria-labelledby="progress-h"
        class="panel"
        data-live={live ? `/submissions/${s.id}/live` : undefined}
        data-live-chart="progress-chart"
      >
        <h2 id="progress-h">Progress</h2>
        <p class="progress-line" aria-live="polite">
          <span data-field="status">{s.status}</span> · generation <span data-field="generations">{run.generationsCompleted ?? 0}</span> of{" "}
          <span data-field="total">{lv.num_generations ?? "?"}</span> · <span data-field="fitness-label">{fitness.label}</span>{" "}
          <span data-field="fitness">{fitness.text}</span>
        </p>
        <progress
          data-field="bar"
          max={lv.num_generations ?? 1}
          value={run.generationsCompleted ?? 0}
          aria-label="Generations done"
        ></progress>
        {run.errorCode && (
          <p class="flash error" role="alert">
            The run failed: {run.errorMessage} [{run.errorCode}]
            {run.generationsCompleted
              ? ` — after ${run.generationsCompleted} generation${run.generationsCompleted === 1 ? "" : "s"}${run.bestSolutionFitness === null ? "" : `, best fitness ${fmtNumber(run.bestSolutionFitness)} so far`}.`
              : ""}
          </p>
        )}
        {trailShown && (
          <Chart
            id="progress-chart"
            data={progressChart}
            caption={
              live
                ? "Best fitness per generation so far, or each objective's best in a panel of its own when the fitness returns several (grows while the run goes on)"
                : `How far run ${run.id} got before it ${run.status === "cancelled" ? "was cancelled" : "failed"}: its progress reports`
            }
          />
        )}
        {resultsChart && (
          <Chart
            id="results-chart"
            data={resultsChart}
            caption={`${several ? "The best value of each objective" : "Best fitness"} per generation of this submission's results (continued runs follow their parent)`}
          />
        )}
      </section>
      <Warnings warnings={live ? [] : (run.warnings ?? [])} heading="Warnings of the latest run" />
      {!live && (
        <section aria-labelledby="again-h" class="panel">
          <h2 id="again-h">Run again</h2>
          <form method="post" action={`/submissions/${s.id}/reexecute`} class="stack">
            <Csrf session={p.session} />
            <label for="re-gens">Generations (empty: as created)</label>
            <input id="re-gens" name="num_generations" inputmode="numeric" pattern="[0-9]+" />
            <PaymentChoice env={p.env} session={p.session} chosen={run.paidWithCredits ? "credits" : "plan"} />
            <button type="submit">Run again</button>
          </form>
        </section>
      )}
      <section aria-labelledby="runs-h">
        <h2 id="runs-h">Runs</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
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
              {runs.map((r) => {
                const result = resultOf.get(r.id);
                const warnings = warningTotal(r.warnings ?? []);
                return (
                  <tr>
                    <td>
                      <code>{r.id}</code>
                    </td>
                    <td>{r.kind}</td>
                    <td>
                      <Status status={r.status} />
                    </td>
                    <td>{r.paidWithCredits ? "credits" : "plan"}</td>
                    <td class="num">
                      {progressText(r.generationsCompleted, (r.parameters as { num_generations?: number }).num_generations ?? null)}
                    </td>
                    <td class="num">
                      {runFitnessText(
                        { bestSolutionFitness: r.bestSolutionFitness, numObjectives: result?.numObjectives ?? null },
                        r.status,
                      )}
                    </td>
                    <td class="num">{warnings ? warnings.toLocaleString("en") : <span class="muted">none</span>}</td>
                    <td>
                      <Time iso={r.finishedAt} />
                    </td>
                    <td>{r.creditsChargedMicro === null ? "—" : money(r.creditsChargedMicro / 1_000_000)}</td>
                    <td>{result ? <a href={`/results/${result.id}`}>result</a> : "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="params-h">
        <h2 id="params-h">Parameters</h2>
        <Facts items={plainParams.map(([k, v]) => [k, plain(v)])} />
        {code.map((f) => (
          <>
            <h3>
              {f} <span class="muted">entry: {String(params[`${f}_entry`] ?? "")}</span>
            </h3>
            <CodeBlock code={params[f] as string} label={`${f} source`} />
          </>
        ))}
      </section>
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

async function loadDetail(env: Bindings, accountId: string, id: string): Promise<Detail> {
  const db = getDb(env.DB);
  const row = await getSubmissionWithRun(db, accountId, id);
  if (!row) throw notFound("submission");
  const [runs, results] = await Promise.all([runsOfSubmission(db, id), resultsOfSubmission(db, accountId, id)]);
  return { s: row.submission, run: row.run, runs, results };
}

function fieldErrorsOf(err: ApiError): Record<string, string> | null {
  const d = err.details as { fields?: { field: string; message: string }[]; field?: string };
  if (d.fields?.length) return formErrors(d.fields);
  if (d.field) return { [d.field]: err.message };
  return null;
}

export const submissionRoutes = new Hono<WebEnv>()
  .use("/submissions", requireSession)
  .use("/submissions/*", requireSession)
  .get("/submissions", requireScope("submissions:read"), async (c) => {
    const session = c.get("session")!;
    const { query, error, raw } = listQueryOf(c, submissionsListQuery);
    if (!query)
      return c.html(
        <ListPage session={session} rows={[]} summaries={new Map()} raw={raw} error={error} next={null} previous={null} />,
        400,
      );
    const page = await submissionsPage(c.env, session.account.id, query, c.req.url);
    const summaries = await runSummaries(
      getDb(c.env.DB),
      page.rows.map((s) => s.latestRunId),
    );
    return c.html(
      <ListPage
        session={session}
        rows={page.rows}
        summaries={new Map(summaries.map((r) => [r.runId, r]))}
        raw={raw}
        error={null}
        next={page.next}
        previous={page.previous}
      />,
    );
  })
  .get("/submissions/new", requireScope("submissions:write"), async (c) => {
    const session = c.get("session")!;
    const from = c.req.query("from");
    let values = initialValues();
    if (from) {
      const copy = await getSubmission(getDb(c.env.DB), session.account.id, from);
      if (!copy) throw notFound("submission");
      values = bodyToForm(copy.parameters, { name: copy.name ? `${copy.name} (copy)` : "", description: copy.description });
    }
    return c.html(<NewSubmissionPage env={c.env} session={session} values={values} errors={{}} payment="plan" />);
  })
  .post("/submissions/new", requireScope("submissions:write"), protectChange, async (c) => {
    const session = c.get("session")!;
    const values = await formOf(c);
    const payment = paymentOf(values.payment);
    const again = (errors: Record<string, string>, formError?: string, status: 400 | 403 | 402 | 409 | 413 | 422 | 429 = 400) =>
      c.html(
        <NewSubmissionPage env={c.env} session={session} values={values} errors={errors} formError={formError} payment={payment} />,
        status,
      );
    const { body, errors } = formToBody(values);
    const parsed = createSubmissionSchema.safeParse(body);
    const schemaErrors = parsed.success ? {} : formErrors(fieldErrors(parsed.error));
    const all = { ...schemaErrors, ...errors };
    if (Object.keys(all).length || !parsed.success) return again(all);
    try {
      const { id } = await startSubmission(c.env, webStarter(c, payment), parsed.data);
      return c.redirect(`/submissions/${id}`, 303);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const fields = fieldErrorsOf(err);
      // A refusal of a field (entry symbol, size) goes next to it; a gate's refusal above the form.
      return again(fields ?? {}, fields ? undefined : refusalText(err), err.status as 400);
    }
  })
  .get("/submissions/:id", requireScope("submissions:read"), async (c) => {
    const session = c.get("session")!;
    return c.html(<DetailPage env={c.env} session={session} d={await loadDetail(c.env, session.account.id, c.req.param("id"))} />);
  })
  .get("/submissions/:id/live", requireScope("submissions:read"), async (c) => {
    const row = await getSubmissionWithRun(getDb(c.env.DB), c.get("session")!.account.id, c.req.param("id"));
    if (!row) throw notFound("submission");
    return c.json(liveView(row.submission, row.run));
  })
  .post("/submissions/:id/cancel", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/submissions/${id}`, async () => {
      const s = await getSubmission(getDb(c.env.DB), c.get("session")!.account.id, id);
      if (!s) throw notFound("submission");
      await cancelSubmission(c.env, s);
      return "The run was cancelled.";
    });
  })
  .post("/submissions/:id/delete", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/submissions/${id}`, async () => {
      const s = await getSubmission(getDb(c.env.DB), c.get("session")!.account.id, id);
      if (!s) throw notFound("submission");
      await deleteSubmission(c.env, s);
      return c.redirect("/submissions", 303);
    });
  })
  .post("/submissions/:id/reexecute", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    const form = await formOf(c);
    return act(c, `/submissions/${id}`, async () => {
      const s = await getSubmission(getDb(c.env.DB), c.get("session")!.account.id, id);
      if (!s) throw notFound("submission");
      const overrides: Record<string, unknown> = {};
      if (form.num_generations?.trim()) {
        const n = Number(form.num_generations);
        if (!Number.isInteger(n))
          throw new ApiError("validation_failed", "num_generations: must be a whole number", {
            fields: [{ field: "num_generations", message: "must be a whole number" }],
          });
        overrides.num_generations = n;
      }
      await reexecuteSubmission(c.env, webStarter(c, paymentOf(form.payment)), s, overrides);
      return "A new run is queued.";
    });
  });
