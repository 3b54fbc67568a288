/** @jsxImportSource hono/jsx */
// Sweeps in the dashboard (docs/dashboard.md#sweeps): the list, the form (the new-submission form's fields
// as the base, a grid editor, seeds), a sweep's page with its statistics and its counts kept live, cancel
// and delete — through the same operations and gates as the API (a sweep of `web` source, paid as the
// person chooses). Its children are submissions: their pages are the submissions area's.
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { cancelSweep, deleteSweep } from "../../../domain/sweeps";
import { ApiError, notFound } from "../../../errors";
import { fieldErrors } from "../../../model/fields";
import { countChildren, createSweepSchema, startSweep, sweepFull, sweepsListQuery, sweepsPage } from "../../../operations/sweeps";
import { getDb } from "../../../storage/db";
import { getSweep, shownStatus, sweepChildren } from "../../../storage/sweeps";
import { requireScope } from "../../../surface/caller";
import { act, paymentOf, refusalText, webStarter } from "../../shared/actions";
import type { DashboardEnv } from "../../shared/context";
import { formOf } from "../../shared/form";
import { listQueryOf } from "../../shared/lists";
import { protectChange, requireSession } from "../../shared/session";
import { checkedFiles, offeredFiles, withFileErrors } from "../data-file-choice";
import { type FormValues, initialValues, refusalByField } from "../forms";
import { SweepDetailPage } from "./detail-page";
import { initialSweepValues, sweepFormErrors, sweepFormToBody } from "./forms";
import { SweepListPage } from "./list-page";
import { NewSweepPage } from "./new-page";

type Ctx = Context<DashboardEnv>;

async function list(c: Ctx) {
  const session = c.get("session")!;
  const { query, error, raw } = listQueryOf(c, sweepsListQuery);
  if (!query)
    return c.html(
      <SweepListPage session={session} rows={[]} counts={new Map()} raw={raw} error={error} next={null} previous={null} />,
      400,
    );
  const page = await sweepsPage(c.env, session.account.id, query, c.req.url);
  return c.html(
    <SweepListPage
      session={session}
      rows={page.rows}
      counts={page.counts}
      raw={raw}
      error={null}
      next={page.next}
      previous={page.previous}
    />,
  );
}

/** The form sent: the API's body and schema, then the sweep's creation; a refusal shows the form again. */
async function create(c: Ctx) {
  const session = c.get("session")!;
  const values: FormValues = await formOf(c);
  const files = await checkedFiles(c);
  values.data_files = files.length ? JSON.stringify(files) : "";
  const payment = paymentOf(values.payment);
  const again = async (errors: Record<string, string>, formError?: string, status: ContentfulStatusCode = 400) =>
    c.html(
      <NewSweepPage
        env={c.env}
        session={session}
        values={values}
        errors={withFileErrors(errors)}
        formError={formError}
        payment={payment}
        dataFiles={await offeredFiles(c)}
      />,
      status,
    );
  const { body, errors } = sweepFormToBody(values);
  if (files.length) (body.base as Record<string, unknown>).data_files = files;
  const parsed = createSweepSchema.safeParse(body);
  const all = { ...(parsed.success ? {} : sweepFormErrors(fieldErrors(parsed.error), values)), ...errors };
  if (Object.keys(all).length || !parsed.success) return again(all);
  try {
    const { row } = await startSweep(c.env, webStarter(c, payment), parsed.data);
    return c.redirect(`/sweeps/${row.id}`, 303);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const byField = refusalByField(err, (fields) => sweepFormErrors(fields, values));
    // A refusal of a field (an entry symbol) goes next to it; a gate's refusal (with its figures) above the form.
    return again(byField ?? {}, byField ? undefined : refusalText(err), err.status);
  }
}

/** The session's sweep `id`, or 404. */
async function ownSweep(c: Ctx, id: string) {
  const row = await getSweep(getDb(c.env.DB), c.get("session")!.account.id, id);
  if (!row) throw notFound("sweep");
  return row;
}

export const sweepRoutes = new Hono<DashboardEnv>()
  .use("/sweeps", requireSession)
  .use("/sweeps/*", requireSession)
  .get("/sweeps", requireScope("submissions:read"), list)
  .get("/sweeps/new", requireScope("submissions:write"), async (c) =>
    c.html(
      <NewSweepPage
        env={c.env}
        session={c.get("session")!}
        values={{ ...initialValues(), ...initialSweepValues() }}
        errors={{}}
        payment="plan"
        dataFiles={await offeredFiles(c)}
      />,
    ),
  )
  .post("/sweeps/new", requireScope("submissions:write"), protectChange, create)
  .get("/sweeps/:id", requireScope("submissions:read"), async (c) => {
    const row = await ownSweep(c, c.req.param("id"));
    const sweep = sweepFull(new URL(c.req.url).origin, row, await sweepChildren(getDb(c.env.DB), row.id));
    return c.html(<SweepDetailPage session={c.get("session")!} sweep={sweep} />);
  })
  // What the sweep's page polls while it runs: its status and its children's counts.
  .get("/sweeps/:id/live", requireScope("submissions:read"), async (c) => {
    const row = await ownSweep(c, c.req.param("id"));
    return c.json({ status: shownStatus(row), counts: countChildren(await sweepChildren(getDb(c.env.DB), row.id)) });
  })
  .post("/sweeps/:id/cancel", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/sweeps/${id}`, async () => {
      await cancelSweep(c.env, await ownSweep(c, id));
      return "The sweep was cancelled: its waiting children will not start.";
    });
  })
  .post("/sweeps/:id/delete", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/sweeps/${id}`, async () => {
      await deleteSweep(c.env, await ownSweep(c, id));
      return c.redirect("/sweeps", 303);
    });
  });
