// /api/v1/submissions: list, create, get, delete, cancel, reexecute.
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../context";
import { notFound } from "../../errors";
import { cancelSubmission, deleteSubmission } from "../../domain/submissions";
import { getDb } from "../../storage/db";
import type { RunStatus } from "../../storage/schema";
import { getSubmission, getSubmissionWithRun, listSubmissions, SUBMISSION_ORDERINGS, type SubmissionOrdering } from "../../storage/submissions";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { isoDate, last, openCursor, paged, pageLinks, paging } from "../validation/list-query";
import { createSubmissionSchema, reexecuteSchema } from "../validation/submission";
import { apiStarter } from "./starter";
import { reexecuteSubmission, startSubmission } from "../operations/runs";
import { jsonBody, optionalJsonBody, query } from "../validation/validate";
import { origin, submissionFull, submissionListItem, submissionUrls } from "../views";

const STATUSES: RunStatus[] = ["queued", "running", "succeeded", "failed", "cancelled"];

export const submissionsListQuery = paged(
  z.strictObject({
  ...paging,
  status: last(
    z
      .string()
      .transform((csv) => csv.split(",").map((s) => s.trim()))
      .refine((list) => list.every((s) => (STATUSES as string[]).includes(s)), `must be a comma-separated list of: ${STATUSES.join(", ")}`)
      .transform((list) => list as RunStatus[]),
  ).optional(),
  source: last(z.enum(["api", "web"])).optional(),
  created_after: isoDate,
  created_before: isoDate,
  name_contains: last(z.string().max(100)).optional(),
  ordering: last(z.enum(Object.keys(SUBMISSION_ORDERINGS) as [SubmissionOrdering, ...SubmissionOrdering[]])).default("-created_at"),
  }),
);

export const submissionsRoutes = new Hono<AppEnv>()
  .get("/", requireScope("submissions:read"), query(submissionsListQuery), async (c) => {
    const q = c.req.valid("query");
    const page = await listSubmissions(
      getDb(c.env.DB),
      c.get("caller").accountId,
      { status: q.status, source: q.source, createdAfter: q.created_after, createdBefore: q.created_before, nameContains: q.name_contains },
      q.ordering,
      q.page_size,
      await openCursor(c.env, c.get("caller").accountId, q.cursor),
    );
    return c.json({
      results: page.rows.map(submissionListItem),
      ...(await pageLinks(c, page)),
    });
  })
  .post("/", requireScope("submissions:write"), jsonBody(createSubmissionSchema), idempotent, async (c) => {
    const { id } = await startSubmission(c.env, apiStarter(c), c.req.valid("json"));
    return c.json({ id, status: "queued", ...submissionUrls(origin(c), id) }, 202);
  })
  .get("/:id", requireScope("submissions:read"), async (c) => {
    const row = await getSubmissionWithRun(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!row) throw notFound("submission");
    return c.json(submissionFull(origin(c), row.submission, row.run));
  })
  .delete("/:id", requireScope("submissions:write"), async (c) => {
    const submission = await getSubmission(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!submission) throw notFound("submission");
    await deleteSubmission(c.env, submission);
    return c.body(null, 204);
  })
  .post("/:id/cancel", requireScope("submissions:write"), async (c) => {
    const db = getDb(c.env.DB);
    const accountId = c.get("caller").accountId;
    const submission = await getSubmission(db, accountId, c.req.param("id"));
    if (!submission) throw notFound("submission");
    await cancelSubmission(c.env, submission);
    const row = await getSubmissionWithRun(db, accountId, submission.id);
    return c.json(submissionFull(origin(c), row!.submission, row!.run), 202);
  })
  .post("/:id/reexecute", requireScope("submissions:write"), optionalJsonBody(reexecuteSchema), idempotent, async (c) => {
    const submission = await getSubmission(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
    if (!submission) throw notFound("submission");
    const { id } = await reexecuteSubmission(c.env, apiStarter(c), submission, c.req.valid("json"));
    return c.json({ id, status: "queued", ...submissionUrls(origin(c), id) }, 202);
  });
