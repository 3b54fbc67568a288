/** @jsxImportSource hono/jsx */
// The sweeps list (docs/dashboard.md#sweeps): each sweep with its status and its children's counts,
// filtered by status, newest first, cursor paging.
import type { Session } from "../../../domain/sessions";
import { SWEEP_STATUSES } from "../../../model/sweeps";
import { DEFAULT_ORDERING } from "../../../operations/paging";
import type { ChildCounts, SweepRow } from "../../../storage/sweeps";
import { SWEEP_ORDERINGS, shownStatus } from "../../../storage/sweeps";
import { FilterSelect, Layout, Pager, Status, Time } from "../../shared/layout";

const ended = (c: ChildCounts) => c.succeeded + c.failed + c.cancelled;
const total = (c: ChildCounts) => ended(c) + c.queued + c.running;

function SweepsTable(p: { rows: SweepRow[]; counts: Map<string, ChildCounts> }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Children ended</th>
            <th scope="col">Running</th>
            <th scope="col">Waiting for a slot</th>
            <th scope="col">Failed</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {p.rows.map((s) => {
            const c = p.counts.get(s.id)!;
            return (
              <tr>
                <td>
                  <a href={`/sweeps/${s.id}`}>{s.name || <span class="muted">(unnamed) {s.id}</span>}</a>
                </td>
                <td>
                  <Status status={shownStatus(s)} />
                </td>
                <td class="num">
                  {ended(c)} of {total(c)}
                </td>
                <td class="num">{c.running}</td>
                <td class="num">{c.waiting}</td>
                <td class="num">{c.failed}</td>
                <td>
                  <Time iso={s.createdAt} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function SweepListPage(p: {
  session: Session;
  rows: SweepRow[];
  counts: Map<string, ChildCounts>;
  raw: Record<string, string>;
  error: string | null;
  next: string | null;
  previous: string | null;
}) {
  return (
    <Layout title="Sweeps" session={p.session} section="sweeps">
      <div class="title-row">
        <h1>Sweeps</h1>
        <a class="button" href="/sweeps/new">
          New sweep
        </a>
      </div>
      <form method="get" action="/sweeps" class="filters" aria-label="Filter sweeps">
        <FilterSelect name="status" label="Status" value={p.raw.status} options={SWEEP_STATUSES} any />
        <FilterSelect
          name="ordering"
          label="Order"
          value={p.raw.ordering ?? DEFAULT_ORDERING}
          options={Object.keys(SWEEP_ORDERINGS).map((o): [string, string] => [o, o === "created_at" ? "oldest first" : "newest first"])}
        />
        <button type="submit">Apply</button>
      </form>
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.rows.length === 0 ? (
        <p class="empty">
          No sweeps{Object.keys(p.raw).length ? " match these filters" : " yet"}. <a href="/sweeps/new">Start one</a>: one job over a grid
          of parameter values, several seeds each, with statistics that say which combination is best.
        </p>
      ) : (
        <SweepsTable rows={p.rows} counts={p.counts} />
      )}
      <Pager base="/sweeps" next={p.next} previous={p.previous} />
    </Layout>
  );
}
