/** @jsxImportSource hono/jsx */
// A sweep (docs/dashboard.md#sweeps): its status and its children's counts (kept up to date while it
// runs), why children wait, cancel and delete; the box plots of the final best fitness per combination,
// the best highlighted; the statistics with each comparison against the best in plain words; links into
// the comparison of its runs; every child by combination (runs named by their id, to tick and compare);
// the parameters every child shares.
import type { Session } from "../../../domain/sessions";
import { CODE_FIELDS } from "../../../model/parameters";
import { combinationText, type SweepView } from "../../../operations/sweeps";
import { CompareBar, compareHref, MAX_COMPARED, PickBox } from "../../shared/compare";
import { ActionButton, Facts, fmtNumber, Layout, money, plain, Status, Time } from "../../shared/layout";
import { BoxPlots } from "./box-plot";

const COUNTS: [keyof SweepView["counts"], string][] = [
  ["waiting", "waiting for a slot"],
  ["queued", "queued"],
  ["running", "running"],
  ["succeeded", "succeeded"],
  ["failed", "failed"],
  ["cancelled", "cancelled"],
];

/** The counts of the children, each in an element the page's script updates while the sweep runs. */
function Counts(p: { sweep: SweepView }) {
  return (
    <ul class="counts" aria-label="Children by status" aria-live="polite">
      {COUNTS.map(([key, label]) => (
        <li>
          <strong data-count={key}>{p.sweep.counts[key]}</strong> {label}
        </li>
      ))}
      <li>
        of <strong>{p.sweep.children}</strong> children
      </li>
    </ul>
  );
}

function Header(p: { session: Session; sweep: SweepView; labels: string[] }) {
  const { sweep } = p;
  // The children in their order (seed 0 of every combination, then seed 1, …): the first ones cover the grid.
  const allRuns = Array.from({ length: sweep.seeds }, (_, j) => sweep.combinations.flatMap((c) => (c.runs[j] ? [c.runs[j]] : []))).flat();
  return (
    <>
      <div class="title-row">
        <h1>{sweep.name || <span class="muted">(unnamed sweep)</span>}</h1>
        <span class={`status s-${sweep.status}`} data-sweep-status>
          {sweep.status}
        </span>
      </div>
      <p class="muted">
        Sweep <code>{sweep.id}</code> · {sweep.combinations.length} combinations × {sweep.seeds} seeds · source {sweep.source} · paid{" "}
        {sweep.payment === "credits" ? "with credits" : "on the plan"} · created <Time iso={sweep.created_at} />
        {sweep.ended_at && (
          <>
            {" "}
            · ended <Time iso={sweep.ended_at} />
          </>
        )}
        {sweep.description && <> · {sweep.description}</>}
      </p>
      <Counts sweep={sweep} />
      {sweep.waiting_on && sweep.counts.waiting > 0 && (
        <p class="flash notice" role="status">
          Children wait: {sweep.waiting_on.message}
        </p>
      )}
      <div class="actions">
        <a class="button secondary" href={compareHref(allRuns.map((r) => r.run_id))} id="compare-sweep">
          Compare its runs{allRuns.length > MAX_COMPARED ? ` (the first ${MAX_COMPARED})` : ""}
        </a>
        {sweep.status === "running" && (
          <ActionButton
            session={p.session}
            action={`/sweeps/${sweep.id}/cancel`}
            label="Cancel sweep"
            confirm="Cancel every child of this sweep? Waiting children never start; running ones are stopped and charged what they used."
          />
        )}
        <ActionButton
          session={p.session}
          action={`/sweeps/${sweep.id}/delete`}
          label="Delete sweep"
          danger
          confirm="Delete this sweep and all its children? Their results stay."
        />
      </div>
    </>
  );
}

const figure = (v: number | null) => (v === null ? "—" : fmtNumber(v));

/** Every combination's statistics and its test against the best, in a table (what the box plots draw). */
function StatisticsTable(p: { sweep: SweepView; labels: string[] }) {
  return (
    <div class="table-wrap">
      <table class="compact stats-table">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Combination</th>
            <th scope="col">n</th>
            <th scope="col">Median</th>
            <th scope="col">Quartiles</th>
            <th scope="col">Min – max</th>
            <th scope="col">Mean time</th>
            <th scope="col">Mean credits</th>
            <th scope="col">U</th>
            <th scope="col">p-value</th>
            <th scope="col">Against the best</th>
            <th scope="col">Runs</th>
          </tr>
        </thead>
        <tbody>
          {p.sweep.combinations.map((c, i) => {
            const s = c.statistics;
            return (
              <tr class={c.is_best ? "best-row" : undefined} data-combination={c.index}>
                <td>{c.index}</td>
                <th scope="row">{p.labels[i]}</th>
                <td class="num">{s.n}</td>
                <td class="num">{figure(s.median)}</td>
                <td class="num">{s.q1 === null ? "—" : `${figure(s.q1)} – ${figure(s.q3)}`}</td>
                <td class="num">{s.min === null ? "—" : `${figure(s.min)} – ${figure(s.max)}`}</td>
                <td class="num">{s.mean_execution_duration_ms === null ? "—" : `${(s.mean_execution_duration_ms / 1000).toFixed(1)} s`}</td>
                <td class="num">{s.mean_credits_charged === null ? "—" : money(s.mean_credits_charged)}</td>
                <td class="num">{c.comparison ? fmtNumber(c.comparison.u) : "—"}</td>
                <td class="num">{c.comparison ? fmtNumber(c.comparison.p_value, 3) : "—"}</td>
                <td>
                  {c.is_best
                    ? "the best (highest median)"
                    : c.comparison
                      ? `${c.comparison.verdict} (${c.comparison.method === "exact" ? "exact test" : "normal approximation"})`
                      : "no values yet"}
                </td>
                <td>
                  <a href={compareHref(c.runs.map((r) => r.run_id))}>compare</a>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Every child, by combination: its run (to tick and compare), seed, status and final best fitness. */
function ChildrenTable(p: { sweep: SweepView; labels: string[] }) {
  return (
    <section aria-labelledby="children-h">
      <h2 id="children-h">Children</h2>
      <CompareBar />
      <div class="table-wrap">
        <table class="compact">
          <thead>
            <tr>
              <th scope="col">
                <span class="visually-hidden">Compare</span>
              </th>
              <th scope="col">Combination</th>
              <th scope="col">Run</th>
              <th scope="col">Seed</th>
              <th scope="col">Status</th>
              <th scope="col">Generations</th>
              <th scope="col">Final best fitness</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {p.sweep.combinations.flatMap((c, i) =>
              c.runs.map((r) => (
                <tr>
                  <td class="pick-cell">
                    <PickBox runId={r.run_id} label={`run ${r.run_id}`} />
                  </td>
                  <td>
                    {c.index}: {p.labels[i]}
                  </td>
                  <td>
                    <a href={`/submissions/${r.submission_id}`}>
                      <code class="run-id">{r.run_id}</code>
                    </a>
                  </td>
                  <td class="num">{r.random_seed ?? "—"}</td>
                  <td>
                    <Status status={r.waiting ? "queued" : r.status} />
                    {r.waiting && <span class="muted"> (waiting for a slot)</span>}
                  </td>
                  <td class="num">{r.generations_completed ?? "—"}</td>
                  <td class="num">{r.result_id ? <a href={`/results/${r.result_id}`}>{figure(r.best_solution_fitness)}</a> : "—"}</td>
                  <td class="num">{r.credits_charged === null ? "—" : money(r.credits_charged)}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The parameters every child shares (code fields by name and size). */
function BaseParameters(p: { sweep: SweepView }) {
  const items = Object.entries(p.sweep.base)
    .filter(([k]) => !k.endsWith("_entry"))
    .map(([k, v]): [string, string] =>
      (CODE_FIELDS as readonly string[]).includes(k) && typeof v === "string"
        ? [k, `${v.split("\n").length} lines of Python (entry ${String(p.sweep.base[`${k}_entry`] ?? "")})`]
        : [k, plain(v)],
    );
  return (
    <section aria-labelledby="base-h">
      <h2 id="base-h">What every child shares</h2>
      <Facts items={[...items, ["seeds", `${p.sweep.seeds} per combination, from ${p.sweep.seed_base}`]]} />
    </section>
  );
}

export function SweepDetailPage(p: { session: Session; sweep: SweepView }) {
  const { sweep } = p;
  const labels = sweep.combinations.map((c) => combinationText(c.parameters));
  const best = sweep.best_combination;
  return (
    <Layout title={sweep.name || sweep.id} session={p.session} section="sweeps">
      <div data-sweep-live={sweep.status === "running" ? `/sweeps/${sweep.id}/live` : undefined}>
        <Header session={p.session} sweep={sweep} labels={labels} />
      </div>
      <section aria-labelledby="stats-h">
        <h2 id="stats-h">Final best fitness by combination</h2>
        <p>
          {best === null
            ? "No combination has a result yet."
            : `The best combination is ${best}: ${labels[best]} (highest median over its seeds).`}{" "}
          Each other combination is compared with it by a two-sided Mann–Whitney U test: a p-value under 0.05 means a real difference at 5
          %; above, the seeds cannot tell them apart.
          {sweep.status === "running" && " The figures grow as children end: reload to see them."}
        </p>
        <BoxPlots sweep={sweep} labels={labels} />
        <StatisticsTable sweep={sweep} labels={labels} />
        <p class="muted">
          Total charged: {money(sweep.credits_charged)} credits. Figures count the children that succeeded with one finite best fitness; the
          mean time and credits count those that ran.
        </p>
      </section>
      <ChildrenTable sweep={sweep} labels={labels} />
      <BaseParameters sweep={sweep} />
    </Layout>
  );
}
