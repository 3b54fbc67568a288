/** @jsxImportSource hono/jsx */
// Submissions in the dashboard (docs/dashboard.md#submissions): the list with the API's filters,
// ordering and cursor paging; a submission with its parameters, code, live progress and runs; the
// new-submission form; cancel, delete and run again — through the same operations and gates as the API.
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Payment } from "../../admission/limits";
import { cancelSubmission, deleteSubmission } from "../../domain/submissions";
import { ApiError, notFound } from "../../errors";
import { fieldErrors } from "../../model/fields";
import { isQuickType, QUICK_TYPES, type QuickType } from "../../model/quick-types";
import { reexecuteSubmission, startSubmission } from "../../operations/runs";
import { createSubmissionSchema, creationBodySchema, submissionsListQuery, submissionsPage } from "../../operations/submissions";
import { submissionDataFilesOf } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import { resultsOfSubmission } from "../../storage/results";
import { getSubmission, getSubmissionWithRun, runSummaries, runsOfSubmission } from "../../storage/submissions";
import { requireScope } from "../../surface/caller";
import { act, paymentOf, refusalText, webStarter } from "../shared/actions";
import type { DashboardEnv } from "../shared/context";
import { formOf } from "../shared/form";
import { listQueryOf } from "../shared/lists";
import { protectChange, requireSession } from "../shared/session";
import { checkedFiles, offeredFiles, withFileErrors } from "./data-file-choice";
import { type Detail, DetailPage } from "./detail-page";
import { bodyToForm, type FormValues, formErrors, formToBody, initialValues, refusalByField, runAgainOverrides } from "./forms";
import { ListPage } from "./list-page";
import { liveView } from "./live";
import { NewSubmissionPage } from "./new-page";
import { QuickSubmissionPage, quickExampleValues, quickFormToBody } from "./quick-page";

type Ctx = Context<DashboardEnv>;

async function list(c: Ctx) {
  const session = c.get("session")!;
  const { query, error, raw } = listQueryOf(c, submissionsListQuery);
  if (!query)
    return c.html(<ListPage session={session} rows={[]} summaries={new Map()} raw={raw} error={error} next={null} previous={null} />, 400);
  const page = await submissionsPage(c.env, session.account.id, query, c.req.url);
  const summaries = await runSummaries(
    getDb(c.env.DB),
    page.rows.map((s) => s.latestRunId),
  );
  const byRun = new Map(summaries.map((r) => [r.runId, r]));
  return c.html(
    <ListPage session={session} rows={page.rows} summaries={byRun} raw={raw} error={null} next={page.next} previous={page.previous} />,
  );
}

/** The new-submission form: empty, or a copy of an earlier submission's parameters (`?from=`). */
async function newForm(c: Ctx) {
  const session = c.get("session")!;
  const from = c.req.query("from");
  let values = initialValues();
  if (from) {
    const copy = await getSubmission(getDb(c.env.DB), session.account.id, from);
    if (!copy) throw notFound("submission");
    values = bodyToForm(copy.parameters, { name: copy.name ? `${copy.name} (copy)` : "", description: copy.description });
  }
  const dataFiles = await offeredFiles(c);
  return c.html(<NewSubmissionPage env={c.env} session={session} values={values} errors={{}} payment="plan" dataFiles={dataFiles} />);
}

/** The form sent: the API's body and schema, then the create operation; a refusal shows the form again. */
async function create(c: Ctx) {
  const session = c.get("session")!;
  const values: FormValues = await formOf(c);
  const files = await checkedFiles(c);
  values.data_files = files.length ? JSON.stringify(files) : "";
  const payment = paymentOf(values.payment);
  const again = async (errors: Record<string, string>, formError?: string, status: ContentfulStatusCode = 400) =>
    c.html(
      <NewSubmissionPage
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
  const { body, errors } = formToBody(values);
  if (files.length) body.data_files = files;
  const parsed = createSubmissionSchema.safeParse(body);
  const schemaErrors = parsed.success ? {} : formErrors(fieldErrors(parsed.error));
  const all = { ...schemaErrors, ...errors };
  if (Object.keys(all).length || !parsed.success) return again(all);
  return startFromForm(c, payment, parsed.data, again);
}

/**
 * A form's checked body started as a submission (the create operation, every gate), then its page; a
 * refusal shows the form `again`: a field's (entry symbol, size) next to it, a gate's above the form.
 */
async function startFromForm(
  c: Ctx,
  payment: Payment,
  body: Parameters<typeof startSubmission>[2],
  again: (errors: Record<string, string>, formError: string | undefined, status: ContentfulStatusCode) => Response | Promise<Response>,
) {
  try {
    const { id } = await startSubmission(c.env, webStarter(c, payment), body);
    return c.redirect(`/submissions/${id}`, 303);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const fields = refusalByField(err);
    return again(fields ?? {}, fields ? undefined : refusalText(err), err.status);
  }
}

async function loadDetail(c: Ctx, id: string): Promise<Detail> {
  const db = getDb(c.env.DB);
  const accountId = c.get("session")!.account.id;
  const row = await getSubmissionWithRun(db, accountId, id);
  if (!row) throw notFound("submission");
  const [runs, results, files] = await Promise.all([
    runsOfSubmission(db, id),
    resultsOfSubmission(db, accountId, id),
    submissionDataFilesOf(db, id),
  ]);
  return { s: row.submission, run: row.run, runs, results, files };
}

/** The quick-type form (`?type=`, the first type by default), filled with the type's example inputs. */
async function quickForm(c: Ctx) {
  const asked = c.req.query("type");
  const type: QuickType = isQuickType(asked) ? asked : QUICK_TYPES[0];
  return c.html(
    <QuickSubmissionPage
      env={c.env}
      session={c.get("session")!}
      type={type}
      values={quickExampleValues(type)}
      errors={{}}
      payment="plan"
    />,
  );
}

/** A quick type's form sent: its body, the API's schema, then the create operation; a refusal shows the form again. */
async function createQuick(c: Ctx) {
  const session = c.get("session")!;
  const values = await formOf(c);
  const type: QuickType = isQuickType(values.type) ? values.type : QUICK_TYPES[0];
  const payment = paymentOf(values.payment);
  const again = (errors: Record<string, string>, formError?: string, status: ContentfulStatusCode = 400) =>
    c.html(
      <QuickSubmissionPage
        env={c.env}
        session={session}
        type={type}
        values={values}
        errors={errors}
        formError={formError}
        payment={payment}
      />,
      status,
    );
  const { body, errors } = quickFormToBody(type, values);
  if (Object.keys(errors).length) return again(errors);
  const parsed = await creationBodySchema.safeParseAsync(body);
  if (!parsed.success) {
    // Each error beside its field (its first segment: item_weights.1 → item_weights), the full path in the message.
    const byField: Record<string, string> = {};
    for (const { field, message } of fieldErrors(parsed.error)) {
      const [top, ...rest] = field.split(".");
      const key = top ?? field;
      byField[key] = [byField[key], rest.length ? `${rest.join(".")}: ${message}` : message].filter(Boolean).join("; ");
    }
    return again(byField);
  }
  return startFromForm(c, payment, parsed.data, again);
}

/** The session's submission `id`, or 404. */
async function ownSubmission(c: Ctx, id: string) {
  const s = await getSubmission(getDb(c.env.DB), c.get("session")!.account.id, id);
  if (!s) throw notFound("submission");
  return s;
}

export const submissionRoutes = new Hono<DashboardEnv>()
  .use("/submissions", requireSession)
  .use("/submissions/*", requireSession)
  .get("/submissions", requireScope("submissions:read"), list)
  .get("/submissions/new", requireScope("submissions:write"), newForm)
  .post("/submissions/new", requireScope("submissions:write"), protectChange, create)
  .get("/submissions/new/quick", requireScope("submissions:write"), quickForm)
  .post("/submissions/new/quick", requireScope("submissions:write"), protectChange, createQuick)
  .get("/submissions/:id", requireScope("submissions:read"), async (c) =>
    c.html(<DetailPage env={c.env} session={c.get("session")!} d={await loadDetail(c, c.req.param("id"))} />),
  )
  .get("/submissions/:id/live", requireScope("submissions:read"), async (c) => {
    const row = await getSubmissionWithRun(getDb(c.env.DB), c.get("session")!.account.id, c.req.param("id"));
    if (!row) throw notFound("submission");
    return c.json(liveView(row.submission, row.run));
  })
  .post("/submissions/:id/cancel", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/submissions/${id}`, async () => {
      await cancelSubmission(c.env, await ownSubmission(c, id));
      return "The run was cancelled.";
    });
  })
  .post("/submissions/:id/delete", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, `/submissions/${id}`, async () => {
      await deleteSubmission(c.env, await ownSubmission(c, id));
      return c.redirect("/submissions", 303);
    });
  })
  .post("/submissions/:id/reexecute", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    const form = await formOf(c);
    return act(c, `/submissions/${id}`, async () => {
      const s = await ownSubmission(c, id);
      await reexecuteSubmission(c.env, webStarter(c, paymentOf(form.payment)), s, runAgainOverrides(form));
      return "A new run is queued.";
    });
  });
