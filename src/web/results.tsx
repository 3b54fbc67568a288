/** @jsxImportSource hono/jsx */
// Results in the dashboard (docs/dashboard.md#results): list and detail — best genes, fitness, the
// interactive chart with the continue chain overlaid, logs, files — rename, share, delete and continue;
// and the public read-only page of a shared result (no sign-in, no code, no ids of other data).

import { type Context, Hono } from "hono";
import { IMPORTED_HISTORY_TITLE } from "../domain/plots";
import { IMPORTED, LOGS_FILE } from "../domain/result-files";
import type { Session } from "../domain/sessions";
import type { Bindings } from "../env";
import { ApiError, notFound } from "../errors";
import { nowIso } from "../lib/ids";
import { fieldErrors } from "../model/fields";
import { CODE_FIELDS } from "../model/parameters";
import { downloadResultFile, removeResult, resultPatchBody, resultsListQuery, resultsPage } from "../operations/results";
import { continueResult } from "../operations/runs";
import { getDb } from "../storage/db";
import {
  getResult,
  getResultFiles,
  getSharedResult,
  RESULT_ORDERINGS,
  type ResultFileRow,
  type ResultRow,
  resultsOfSubmission,
  updateResult,
} from "../storage/results";
import { getSubmission, runsOfSubmission } from "../storage/submissions";
import { requireScope } from "../surface/caller";
import { act, formOf, paymentOf, webStarter } from "./actions";
import { type ChartData, chainOf, historyChart, markInfinite } from "./charts";
import type { WebEnv } from "./context";
import { ActionButton, Csrf, Facts, FilterInput, FilterSelect, fmtNumber, Layout, Pager, plain, Time } from "./layout";
import { listQueryOf } from "./lists";
import { frontObjectives, type Infinities, infinitiesOf } from "./result-data";
import { bestFitnessText, Chart, ConstraintNotice, FrontChart, resultFacts, Warnings } from "./result-parts";
import { protectChange, requireSession } from "./session";

/**
 * Files a shared result's public page offers: the curves, the genes and the Pareto front, never code
 * (result.json holds the parameters) nor the run's output (logs.txt).
 */
const PUBLIC_FILES = [
  "fitness_history.csv",
  "best_solution.csv",
  "fitness.svg",
  "pareto_front.json",
  "pareto_front.csv",
  "pareto_front.svg",
];

function ListPage(p: {
  session: Session;
  rows: ResultRow[];
  raw: Record<string, string>;
  error: string | null;
  next: string | null;
  previous: string | null;
}) {
  const f = p.raw;
  return (
    <Layout title="Results" session={p.session} section="results">
      <h1>Results</h1>
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
        <FilterSelect name="ordering" label="Order" value={f.ordering ?? "-created_at"} options={Object.keys(RESULT_ORDERINGS)} />
        <button type="submit">Apply</button>
      </form>
      {p.error && (
        <p class="flash error" role="alert">
          {p.error}
        </p>
      )}
      {p.rows.length === 0 ? (
        <p class="empty">No results{Object.keys(f).length ? " match these filters" : " yet: a run that succeeds makes one"}.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
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
      )}
      <Pager base="/results" next={p.next} previous={p.previous} />
    </Layout>
  );
}

const Genes = (p: { genes: number[]; objectives: number }) => (
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

/** What a result's page draws: its history chart (the continue chain on the owner's page), and its front. */
interface Drawn {
  chart: ChartData;
  inf: Infinities | null;
  front: number[][] | null;
}

/** The history chart of `chain` (ending at `r`) with r's infinite values marked, and r's Pareto front. */
async function drawn(env: Bindings, r: ResultRow, files: ResultFileRow[], chart: ChartData): Promise<Drawn> {
  const [inf, front] = await Promise.all([infinitiesOf(env, r, files), r.numObjectives > 1 ? frontObjectives(env, files) : null]);
  if (inf) markInfinite(chart, r.id, inf.history);
  return { chart, inf, front };
}

const historyCaption = (r: ResultRow, chain: boolean) =>
  `${r.numObjectives <= 1 ? "Best fitness per generation" : r.stoppedReason === IMPORTED ? IMPORTED_HISTORY_TITLE : "The best value of each objective per generation (over the population; the values may come from different solutions)"}${chain ? ", this result's continue chain on one axis" : ""}`;

function DetailPage(p: {
  env: Bindings;
  session: Session;
  r: ResultRow;
  files: ResultFileRow[];
  drawn: Drawn;
  logs: string | null;
  submissionExists: boolean;
  url: string;
}) {
  const { r } = p;
  const params = Object.entries(r.parameters).filter(([k]) => !CODE_FIELDS.includes(k as never) && !k.endsWith("_entry"));
  const canContinue = p.submissionExists && p.files.some((f) => f.name === "population.json");
  return (
    <Layout title={r.name || r.id} session={p.session} section="results" scripts={["editor"]}>
      <div class="title-row">
        <h1>{r.name || <span class="muted">(unnamed)</span>}</h1>
        {r.isShared && <span class="status s-shared">shared</span>}
      </div>
      <p class="muted">
        Result <code>{r.id}</code> of <a href={`/submissions/${r.submissionId}`}>submission {r.submissionId}</a>
        {!p.submissionExists && " (deleted)"}
      </p>
      <Facts items={resultFacts(r, p.drawn.inf, { warnings: true })} />
      <ConstraintNotice violations={r.constraintViolations} />
      {r.numObjectives > 1 && (
        <section aria-labelledby="front-h">
          <h2 id="front-h">Pareto front</h2>
          <FrontChart
            id="front-chart"
            size={r.paretoFrontSize}
            count={r.numObjectives}
            objectives={p.drawn.front}
            best={r.bestSolutionObjectives}
            svgUrl={p.files.some((f) => f.name === "pareto_front.svg") ? `/results/${r.id}/files/pareto_front.svg` : null}
          />
        </section>
      )}
      <Chart id="result-chart" data={p.drawn.chart} caption={historyCaption(r, p.drawn.chart.panels[0]!.series.length > 1)} />
      <Warnings warnings={r.warnings} />
      <div class="cols">
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
        <section aria-labelledby="continue-h" class="panel">
          <h2 id="continue-h">Continue</h2>
          {canContinue ? (
            <form method="post" action={`/results/${r.id}/continue`} class="stack">
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
      </div>
      <section aria-labelledby="files-h">
        <h2 id="files-h">Files</h2>
        <ul class="files">
          {p.files.map((f) => (
            <li>
              <a href={`/results/${r.id}/files/${encodeURIComponent(f.name)}`} download>
                {f.name}
              </a>{" "}
              <span class="muted">
                {f.contentType}, {f.sizeBytes.toLocaleString("en")} bytes
              </span>
            </li>
          ))}
        </ul>
      </section>
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
        <Facts items={params.map(([k, v]) => [k, plain(v)])} />
      </section>
    </Layout>
  );
}

function SharedPage(p: { r: ResultRow; drawn: Drawn; files: ResultFileRow[] }) {
  const { r } = p;
  const params = Object.entries(r.parameters).filter(([k]) => !CODE_FIELDS.includes(k as never) && !k.endsWith("_entry"));
  return (
    <Layout title={r.name || "Shared result"} session={null}>
      <p class="muted">A result shared from Allele (read-only).</p>
      <h1>{r.name || "Shared result"}</h1>
      <Facts items={resultFacts(r, p.drawn.inf, { warnings: false })} />
      <ConstraintNotice violations={r.constraintViolations} />
      {r.warnings.length > 0 && (
        <p class="muted">The run gave Python warnings; their texts are not shared (they can quote the owner's code).</p>
      )}
      {r.numObjectives > 1 && (
        <section aria-labelledby="front-h">
          <h2 id="front-h">Pareto front</h2>
          <FrontChart
            id="shared-front"
            size={r.paretoFrontSize}
            count={r.numObjectives}
            objectives={p.drawn.front}
            best={r.bestSolutionObjectives}
            svgUrl={p.files.some((f) => f.name === "pareto_front.svg") ? `/shared/${r.id}/files/pareto_front.svg` : null}
          />
        </section>
      )}
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
        <Facts items={params.map(([k, v]) => [k, plain(v)])} />
        <p class="muted">The code of this run is not shared.</p>
      </section>
    </Layout>
  );
}

async function ownResult(c: Context<WebEnv>): Promise<ResultRow> {
  const r = await getResult(getDb(c.env.DB), c.get("session")!.account.id, c.req.param("id")!);
  if (!r) throw notFound("result");
  return r;
}

export const resultRoutes = new Hono<WebEnv>()
  .use("/results", requireSession)
  .use("/results/*", requireSession)
  .get("/results", requireScope("results:read"), async (c) => {
    const session = c.get("session")!;
    const { query, error, raw } = listQueryOf(c, resultsListQuery);
    if (!query) return c.html(<ListPage session={session} rows={[]} raw={raw} error={error} next={null} previous={null} />, 400);
    const page = await resultsPage(c.env, session.account.id, query, c.req.url);
    return c.html(<ListPage session={session} rows={page.rows} raw={raw} error={null} next={page.next} previous={page.previous} />);
  })
  .get("/results/:id", requireScope("results:read"), async (c) => {
    const session = c.get("session")!;
    const db = getDb(c.env.DB);
    const r = await ownResult(c);
    const [files, submission, runs, siblings] = await Promise.all([
      getResultFiles(db, r.id),
      getSubmission(db, session.account.id, r.submissionId),
      runsOfSubmission(db, r.submissionId),
      resultsOfSubmission(db, session.account.id, r.submissionId),
    ]);
    const chain = chainOf(r, siblings, runs);
    const chart = historyChart(chain, runs, (x, i) => (x.id === r.id ? `this result (${x.id})` : `continued from ${i + 1}: ${x.id}`));
    const logsFile = files.find((f) => f.name === LOGS_FILE);
    const logs = logsFile ? ((await (await c.env.FILES.get(logsFile.r2Key))?.text()) ?? null) : null;
    const url = `${new URL(c.req.url).origin}/shared/${r.id}`;
    return c.html(
      <DetailPage
        env={c.env}
        session={session}
        r={r}
        files={files}
        drawn={await drawn(c.env, r, files, chart)}
        logs={logs}
        submissionExists={!!submission}
        url={url}
      />,
    );
  })
  .get("/results/:id/files/:name", requireScope("results:read"), async (c) => {
    const r = await ownResult(c);
    return downloadResultFile(c.env, r.id, c.req.param("name"), c.get("requestId"));
  })
  .post("/results/:id/rename", requireScope("results:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    const form = await formOf(c);
    return act(c, `/results/${r.id}`, async () => {
      const parsed = resultPatchBody.safeParse({ name: form.name ?? "" });
      if (!parsed.success) {
        const [e] = fieldErrors(parsed.error);
        throw new ApiError("validation_failed", `${e!.field}: ${e!.message}`, { fields: [e] });
      }
      await updateResult(getDb(c.env.DB), r.id, { name: parsed.data.name }, nowIso());
      return "Renamed.";
    });
  })
  .post("/results/:id/share", requireScope("results:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    const shared = (await formOf(c)).is_shared === "true";
    return act(c, `/results/${r.id}`, async () => {
      await updateResult(getDb(c.env.DB), r.id, { isShared: shared }, nowIso());
      return shared ? "Shared: the public page is live." : "No longer shared: the public page is gone.";
    });
  })
  .post("/results/:id/delete", requireScope("results:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    await removeResult(c.env, r.id);
    return act(c, "/results", async () => "The result was deleted.");
  })
  .post("/results/:id/continue", requireScope("submissions:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    const form = await formOf(c);
    return act(c, `/results/${r.id}`, async () => {
      const n = Number(form.num_generations);
      if (!Number.isInteger(n))
        throw new ApiError("validation_failed", "num_generations: must be a whole number", {
          fields: [{ field: "num_generations", message: "must be a whole number" }],
        });
      const { id } = await continueResult(c.env, webStarter(c, paymentOf(form.payment)), r, { num_generations: n });
      return c.redirect(`/submissions/${id}`, 303);
    });
  });

/** The public page of a shared result: no session needed, 404 once it is not shared. */
export const sharedRoutes = new Hono<WebEnv>()
  .get("/shared/:id", async (c) => {
    const db = getDb(c.env.DB);
    const r = await getSharedResult(db, c.req.param("id"));
    if (!r) throw notFound("shared result");
    const files = await getResultFiles(db, r.id);
    // Read from the result's own files (result.json included, for its infinite values), shown without code.
    const shown = await drawn(
      c.env,
      r,
      files,
      historyChart([r], [], () => (r.numObjectives > 1 ? "this result" : "best fitness")),
    );
    c.header("X-Robots-Tag", "noindex");
    return c.html(<SharedPage r={r} files={files.filter((f) => PUBLIC_FILES.includes(f.name))} drawn={shown} />);
  })
  .get("/shared/:id/files/:name", async (c) => {
    const db = getDb(c.env.DB);
    const r = await getSharedResult(db, c.req.param("id"));
    const name = c.req.param("name");
    if (!r || !PUBLIC_FILES.includes(name)) throw notFound("file");
    return downloadResultFile(c.env, r.id, name, c.get("requestId"));
  });
