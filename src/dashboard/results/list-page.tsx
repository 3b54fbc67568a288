/** @jsxImportSource hono/jsx */
// The results list (docs/dashboard.md#pages): the API's filters (submission, shared, fitness range,
// dates) and orderings, and cursor paging.

import type { Session } from "../../domain/sessions";
import type { RunKind } from "../../model/runs";
import { DEFAULT_ORDERING } from "../../operations/paging";
import { RESULT_ORDERINGS, type ResultRow } from "../../storage/results";
import { CompareBar, PickBox, RunName } from "../shared/compare";
import { FilterInput, FilterSelect, Layout, Pager, Time } from "../shared/layout";
import { bestFitnessText } from "../shared/result-parts";

function Filters(p: { raw: Record<string, string> }) {
  const f = p.raw;
  return (
    <form method="get" action="/results" class="filters" aria-label="Filter results">
      <FilterInput name="submission_id" label="Submission id" value={f.submission_id} />
      <FilterSelect
        name="is_shared"
        label="Shared"
        value={f.is_shared}
        options={[
          ["true", "shared"],
          ["false", "private"],
        ]}
        any
      />
      <FilterInput name="min_fitness" label="Fitness at least" value={f.min_fitness} decimal />
      <FilterInput name="max_fitness" label="Fitness at most" value={f.max_fitness} decimal />
      <FilterInput name="created_after" label="Created after" type="date" value={f.created_after} />
      <FilterInput name="created_before" label="Created before" type="date" value={f.created_before} />
      <FilterSelect name="ordering" label="Order" value={f.ordering ?? DEFAULT_ORDERING} options={Object.keys(RESULT_ORDERINGS)} />
      <button type="submit">Apply</button>
    </form>
  );
}

function ResultsTable(p: { rows: ResultRow[]; kinds: Map<string, RunKind> }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">
              <span class="visually-hidden">Compare</span>
            </th>
            <th scope="col">Run</th>
            <th scope="col">Name</th>
            <th scope="col">Best fitness</th>
            <th scope="col">Generations</th>
            <th scope="col">Shared</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {p.rows.map((r) => (
            <tr>
              <td class="pick-cell">
                <PickBox runId={r.runId} label={`run ${r.runId} (${r.name || "unnamed"})`} />
              </td>
              <td>
                <RunName kind={p.kinds.get(r.runId)} runId={r.runId} />
              </td>
              <td>
                <a href={`/results/${r.id}`}>{r.name || <span class="muted">(unnamed) {r.id}</span>}</a>
              </td>
              <td>{bestFitnessText(r)}</td>
              <td>{r.generationsCompleted}</td>
              <td>{r.isShared ? "yes" : "no"}</td>
              <td>
                <Time iso={r.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ListPage(p: {
  session: Session;
  rows: ResultRow[];
  kinds: Map<string, RunKind>;
  raw: Record<string, string>;
  error: string | null;
  next: string | null;
  previous: string | null;
}) {
  return (
    <Layout title="Results" session={p.session} section="results">
      <h1>Results</h1>
      <Filters raw={p.raw} />
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.rows.length === 0 ? (
        <p class="empty">No results{Object.keys(p.raw).length ? " match these filters" : " yet: a run that succeeds makes one"}.</p>
      ) : (
        <>
          <CompareBar />
          <ResultsTable rows={p.rows} kinds={p.kinds} />
        </>
      )}
      <Pager base="/results" next={p.next} previous={p.previous} />
    </Layout>
  );
}
