/** @jsxImportSource hono/jsx */
// Results in the dashboard (docs/dashboard.md#results): list and detail — best genes, fitness, the
// interactive chart with the continue chain overlaid, logs, files — rename, share, delete and continue;
// and the public read-only page of a shared result (no sign-in, no code, no ids of other data).
import { type Context, Hono } from "hono";
import { LOGS_FILE } from "../../domain/result-files";
import { notFound } from "../../errors";
import { nowIso } from "../../lib/ids";
import { downloadResultFile, removeResult, resultsListQuery, resultsPage } from "../../operations/results";
import { continueResult } from "../../operations/runs";
import { getDb } from "../../storage/db";
import { getResult, getResultFiles, getSharedResult, type ResultRow, resultsOfSubmission, updateResult } from "../../storage/results";
import { getSubmission, runKinds, runsOfSubmission } from "../../storage/submissions";
import { requireScope } from "../../surface/caller";
import { act, paymentOf, webStarter } from "../shared/actions";
import { chainOf, historyChart } from "../shared/charts";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { listQueryOf } from "../shared/lists";
import { protectChange, requireSession } from "../shared/session";
import { comparedChart, comparedIds, loadCompared, parameterRows } from "./compare";
import { ComparePage } from "./compare-page";
import { DetailPage } from "./detail-page";
import { continueOverrides, newName, sharedOf } from "./forms";
import { ListPage } from "./list-page";
import { drawn } from "./parts";
import { PUBLIC_FILES, SharedPage } from "./shared-page";

type Ctx = Context<DashboardEnv>;

async function ownResult(c: Ctx): Promise<ResultRow> {
  const r = await getResult(getDb(c.env.DB), c.get("session")!.account.id, c.req.param("id")!);
  if (!r) throw notFound("result");
  return r;
}

async function list(c: Ctx) {
  const session = c.get("session")!;
  const { query, error, raw } = listQueryOf(c, resultsListQuery);
  if (!query)
    return c.html(<ListPage session={session} rows={[]} kinds={new Map()} raw={raw} error={error} next={null} previous={null} />, 400);
  const page = await resultsPage(c.env, session.account.id, query, c.req.url);
  const kinds = await runKinds(
    getDb(c.env.DB),
    page.rows.map((r) => r.runId),
  );
  return c.html(
    <ListPage session={session} rows={page.rows} kinds={kinds} raw={raw} error={null} next={page.next} previous={page.previous} />,
  );
}

/** A result with its continue chain on one chart, its files, its logs and its public link. */
async function detail(c: Ctx) {
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
  // Curves are named by their run (docs/decisions.md#run-id).
  const kindOf = (x: ResultRow) => runs.find((run) => run.id === x.runId)?.kind ?? "run";
  const chart = historyChart(chain, runs, (x, i) =>
    x.id === r.id ? `this result (${x.runId})` : `continued from ${i + 1}: ${kindOf(x)} ${x.runId}`,
  );
  const logsFile = files.find((f) => f.name === LOGS_FILE);
  const logs = logsFile ? ((await (await c.env.FILES.get(logsFile.r2Key))?.text()) ?? null) : null;
  const url = `${new URL(c.req.url).origin}/shared/${r.id}`;
  return c.html(
    <DetailPage
      session={session}
      r={r}
      files={files}
      drawn={await drawn(c.env, r, files, chart)}
      logs={logs}
      submissionExists={!!submission}
      url={url}
      kind={runs.find((run) => run.id === r.runId)?.kind ?? null}
    />,
  );
}

/**
 * The comparison of the runs `?runs=` names (docs/dashboard.md#compare). The checkboxes of a list send
 * `runs` once per run: that is answered with the canonical address (`?runs=a,b`), the one to share.
 */
async function compare(c: Ctx) {
  const session = c.get("session")!;
  const values = c.req.queries("runs") ?? [];
  const { ids, canonical, error } = comparedIds(values);
  if (error) return c.html(<ComparePage session={session} runs={[]} chart={null} rows={[]} error={error} />, 400);
  if (!canonical) return c.redirect(ids.length ? `/compare?runs=${ids.join(",")}` : "/compare", 303);
  const runs = await loadCompared(c.env, session.account.id, ids);
  return c.html(<ComparePage session={session} runs={runs} chart={comparedChart(runs)} rows={parameterRows(runs)} error={null} />);
}

export const resultRoutes = new Hono<DashboardEnv>()
  .use("/compare", requireSession)
  .get("/compare", requireScope("submissions:read"), requireScope("results:read"), compare)
  .use("/results", requireSession)
  .use("/results/*", requireSession)
  .get("/results", requireScope("results:read"), list)
  .get("/results/:id", requireScope("results:read"), detail)
  .get("/results/:id/files/:name", requireScope("results:read"), async (c) => {
    const r = await ownResult(c);
    return downloadResultFile(c.env, r.id, c.req.param("name"), c.get("requestId"));
  })
  .post("/results/:id/rename", requireScope("results:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    const form = await formOf(c);
    return act(c, `/results/${r.id}`, async () => {
      await updateResult(getDb(c.env.DB), r.id, { name: newName(form) }, nowIso());
      return "Renamed.";
    });
  })
  .post("/results/:id/share", requireScope("results:write"), protectChange, async (c) => {
    const r = await ownResult(c);
    const shared = sharedOf(await formOf(c));
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
      const { id } = await continueResult(c.env, webStarter(c, paymentOf(form.payment)), r, continueOverrides(form));
      return c.redirect(`/submissions/${id}`, 303);
    });
  });

/** The public page of a shared result: no session needed, 404 once it is not shared. */
export const sharedRoutes = new Hono<DashboardEnv>()
  .get("/shared/:id", async (c) => {
    const db = getDb(c.env.DB);
    const r = await getSharedResult(db, c.req.param("id"));
    if (!r) throw notFound("shared result");
    const files = await getResultFiles(db, r.id);
    // Read from the result's own files (result.json included, for its infinite values), shown without code.
    const chart = historyChart([r], [], () => (r.numObjectives > 1 ? "this result" : "best fitness"));
    const shown = await drawn(c.env, r, files, chart);
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
