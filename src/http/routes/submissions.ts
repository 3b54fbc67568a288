// /api/v1/submissions: list, create, get, delete, cancel, reexecute.

import { Hono } from "hono";
import { z } from "zod";
import { ADMISSION_ERRORS, CREATION_ERRORS } from "../../admission/admission";
import { DATA_FILES_ERRORS } from "../../domain/data-files";
import { cancelSubmission, deleteSubmission } from "../../domain/submissions";
import { ApiError, notFound } from "../../errors";
import { reexecuteSubmission, startSubmission } from "../../operations/runs";
import {
  createSubmissionSchema,
  creationBodySchema,
  MAX_CREATE_BYTES,
  quickBodySchemas,
  submissionsListQuery,
  submissionsPage,
} from "../../operations/submissions";
import { getDb } from "../../storage/db";
import { getSubmission, getSubmissionWithRun } from "../../storage/submissions";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { list, Submission, SubmissionAccepted, SubmissionListItem } from "../validation/responses";
import { reexecuteSchema } from "../validation/submission";
import { jsonBody, MAX_BODY_BYTES, optionalJsonBody, query } from "../validation/validate";
import { origin, submissionAccepted, submissionFull, submissionListItem } from "../views";
import { apiStarter } from "./starter";

export const submissionsRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({
      operationId: "listSubmissions",
      tag: "Submissions",
      summary: "List submissions",
      description: "Newest first unless `ordering` says otherwise; filters and ordering: docs/api.md#filters.",
      success: { 200: list(SubmissionListItem) },
    }),
    requireScope("submissions:read"),
    query(submissionsListQuery),
    async (c) => {
      const { rows, next, previous } = await submissionsPage(c.env, c.get("caller").accountId, c.req.valid("query"), c.req.url);
      return c.json({ results: rows.map(submissionListItem), next, previous });
    },
  )
  .post(
    "/",
    describe({
      operationId: "createSubmission",
      tag: "Submissions",
      summary: "Create a submission (a GA job)",
      description:
        "Answers 202 at once and queues the first run. A write: every gate applies (docs/api.md#gates). A code field may be given inline or as `<field>_id`, a code upload. `submission_type` names a quick type (its inputs in place of a fitness function: docs/api.md#quick-submission-types, `GET /api/v1/submission-types`); inputs the server generated are echoed under `generated`.",
      success: { 202: SubmissionAccepted },
      errors: [...CREATION_ERRORS, ...DATA_FILES_ERRORS],
    }),
    requireScope("submissions:write"),
    jsonBody(creationBodySchema, {
      documentAs: z.union([createSubmissionSchema, ...quickBodySchemas]),
      maxBytes: MAX_CREATE_BYTES,
      tooLarge: "A creation body's size is mostly initial_population (a start population): give a smaller one, or none.",
    }),
    idempotent,
    async (c) => {
      const body = c.req.valid("json");
      // Past 256 KiB only a start population may take a body (to 8 MiB); anything else keeps the usual limit.
      const size = Number(c.req.header("Content-Length") ?? new TextEncoder().encode(JSON.stringify(body)).byteLength);
      if (!body.initial_population && size > MAX_BODY_BYTES)
        throw new ApiError("payload_too_large", `The request body is larger than ${MAX_BODY_BYTES} bytes.`, {
          limit_bytes: MAX_BODY_BYTES,
        });
      const { id, createdAt, generated } = await startSubmission(c.env, apiStarter(c), body);
      return c.json(
        submissionAccepted(
          origin(c),
          { id, name: body.name, description: body.description, submissionType: body.quick?.type ?? "new", createdAt },
          c.get("requestId"),
          body.quick ? generated : undefined,
        ),
        202,
      );
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getSubmission",
      tag: "Submissions",
      summary: "Get a submission: its full row with the latest run's status, progress, error and logs",
      success: { 200: Submission },
      errors: ["not_found"],
    }),
    requireScope("submissions:read"),
    async (c) => {
      const row = await getSubmissionWithRun(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
      if (!row) throw notFound("submission");
      return c.json(submissionFull(origin(c), row.submission, row.run));
    },
  )
  .delete(
    "/:id",
    describe({
      operationId: "deleteSubmission",
      tag: "Submissions",
      summary: "Delete a submission (a live run is stopped and billed first; its results stay)",
      success: { 204: null },
      errors: ["not_found"],
    }),
    requireScope("submissions:write"),
    async (c) => {
      const submission = await getSubmission(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
      if (!submission) throw notFound("submission");
      await deleteSubmission(c.env, submission);
      return c.body(null, 204);
    },
  )
  .post(
    "/:id/cancel",
    describe({
      operationId: "cancelSubmission",
      tag: "Submissions",
      summary: "Cancel the live run of a submission",
      success: { 202: Submission },
      errors: ["not_found", "invalid_state"],
    }),
    requireScope("submissions:write"),
    async (c) => {
      const db = getDb(c.env.DB);
      const accountId = c.get("caller").accountId;
      const submission = await getSubmission(db, accountId, c.req.param("id"));
      if (!submission) throw notFound("submission");
      await cancelSubmission(c.env, submission);
      const row = await getSubmissionWithRun(db, accountId, submission.id);
      return c.json(submissionFull(origin(c), row!.submission, row!.run), 202);
    },
  )
  .post(
    "/:id/reexecute",
    describe({
      operationId: "reexecuteSubmission",
      tag: "Submissions",
      summary: "Run a submission again, with optional parameter overrides",
      success: { 202: SubmissionAccepted },
      errors: ["not_found", "invalid_state", "entry_symbol_required", "entry_symbol_not_found", ...DATA_FILES_ERRORS, ...ADMISSION_ERRORS],
    }),
    requireScope("submissions:write"),
    optionalJsonBody(reexecuteSchema),
    idempotent,
    async (c) => {
      const submission = await getSubmission(getDb(c.env.DB), c.get("caller").accountId, c.req.param("id"));
      if (!submission) throw notFound("submission");
      await reexecuteSubmission(c.env, apiStarter(c), submission, c.req.valid("json"));
      return c.json(submissionAccepted(origin(c), submission, c.get("requestId")), 202);
    },
  );
