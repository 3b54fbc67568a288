/** @jsxImportSource hono/jsx */
// The submissions list (docs/dashboard.md#pages): the API's filters and orderings, each row with its
// latest run's generations, best fitness and warnings, and cursor paging.

import type { Session } from "../../domain/sessions";
import { RUN_STATUSES, SUBMISSION_SOURCES } from "../../model/runs";
import { DEFAULT_ORDERING } from "../../operations/paging";
import { type RunSummary, SUBMISSION_ORDERINGS, type SubmissionRow } from "../../storage/submissions";
import { CompareBar, PickBox, RunName } from "../shared/compare";
import { FilterInput, FilterSelect, Layout, Pager, Status, Time } from "../shared/layout";
import { progressText, runFitnessText } from "./parts";

function Filters(p: { raw: Record<string, string> }) {
  const f = p.raw;
  return (
    <form method="get" action="/submissions" class="filters" aria-label="Filter submissions">
      <FilterInput name="name_contains" label="Name contains" value={f.name_contains} />
      <FilterSelect name="status" label="Status" value={f.status} options={RUN_STATUSES} any />
      <FilterSelect name="source" label="Source" value={f.source} options={SUBMISSION_SOURCES} any />
      <FilterInput name="created_after" label="Created after" type="date" value={f.created_after} />
      <FilterInput name="created_before" label="Created before" type="date" value={f.created_before} />
      <FilterSelect name="ordering" label="Order" value={f.ordering ?? DEFAULT_ORDERING} options={Object.keys(SUBMISSION_ORDERINGS)} />
      <button type="submit">Apply</button>
    </form>
  );
}

function SubmissionRowView(p: { s: SubmissionRow; run: RunSummary | undefined }) {
  const { s, run } = p;
  return (
    <tr>
      <td class="pick-cell">
        <PickBox runId={s.latestRunId} label={`the latest run of ${s.name || s.id}`} />
      </td>
      <td>
        <RunName kind={run?.kind} runId={s.latestRunId} />
      </td>
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
}

function SubmissionsTable(p: { rows: SubmissionRow[]; summaries: Map<string, RunSummary> }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">
              <span class="visually-hidden">Compare</span>
            </th>
            <th scope="col">Latest run</th>
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
          {p.rows.map((s) => (
            <SubmissionRowView s={s} run={p.summaries.get(s.latestRunId)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ListPage(p: {
  session: Session;
  rows: SubmissionRow[];
  summaries: Map<string, RunSummary>;
  raw: Record<string, string>;
  error: string | null;
  next: string | null;
  previous: string | null;
}) {
  return (
    <Layout title="Submissions" session={p.session} section="submissions">
      <div class="title-row">
        <h1>Submissions</h1>
        <a class="button" href="/submissions/new">
          New submission
        </a>
      </div>
      <Filters raw={p.raw} />
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.rows.length === 0 ? (
        <p class="empty">
          No submissions{Object.keys(p.raw).length ? " match these filters" : " yet"}. <a href="/submissions/new">Start one</a>.
        </p>
      ) : (
        <>
          <CompareBar />
          <SubmissionsTable rows={p.rows} summaries={p.summaries} />
        </>
      )}
      <Pager base="/submissions" next={p.next} previous={p.previous} />
    </Layout>
  );
}
