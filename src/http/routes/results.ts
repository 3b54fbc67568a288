// /api/v1/results: list, get, patch, delete, files, continue.

import { Hono } from "hono";
import { ADMISSION_ERRORS } from "../../admission/admission";
import { DATA_FILES_ERRORS } from "../../domain/data-files";
import { notFound } from "../../errors";
import { nowIso } from "../../lib/ids";
import { downloadResultFile, removeResult, resultPatchBody, resultsListQuery, resultsPage } from "../../operations/results";
import { continueResult } from "../../operations/runs";
import { getDb } from "../../storage/db";
import { getResult, getResultFiles, updateResult } from "../../storage/results";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { list, Result, ResultListItem, SubmissionAccepted } from "../validation/responses";
import { continueSchema } from "../validation/submission";
import { jsonBody, optionalJsonBody, query } from "../validation/validate";
import { origin, resultFull, resultListItem, submissionAccepted } from "../views";
import { apiStarter } from "./starter";

export const resultsRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({
      operationId: "listResults",
      tag: "Results",
      summary: "List results",
      description: "Filters and ordering: docs/api.md#filters.",
      success: { 200: list(ResultListItem) },
    }),
    requireScope("results:read"),
    query(resultsListQuery),
    async (c) => {
      const { rows, next, previous } = await resultsPage(c.env, c.get("caller").accountId, c.req.valid("query"), c.req.url);
      return c.json({ results: rows.map(resultListItem), next, previous });
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getResult",
      tag: "Results",
      summary: "Get a result: best solution, fitness history, parameters and file links",
      success: { 200: Result },
      errors: ["not_found"],
    }),
    requireScope("results:read"),
    async (c) => {
      const db = getDb(c.env.DB);
      const result = await getResult(db, c.get("caller").accountId, c.req.param("id"));
      if (!result) throw notFound("result");
      return c.json(resultFull(origin(c), result, await getResultFiles(db, result.id)));
    },
  )
  .patch(
    "/:id",
    describe({
      operationId: "updateResult",
      tag: "Results",
      summary: "Rename a result or change its shared flag",
      success: { 200: Result },
      errors: ["not_found"],
    }),
    requireScope("results:write"),
    jsonBody(resultPatchBody),
    async (c) => {
      const db = getDb(c.env.DB);
      const accountId = c.get("caller").accountId;
      const result = await getResult(db, accountId, c.req.param("id"));
      if (!result) throw notFound("result");
      const body = c.req.valid("json");
      await updateResult(db, result.id, { name: body.name, isShared: body.is_shared }, nowIso());
      const updated = (await getResult(db, accountId, result.id))!;
      return c.json(resultFull(origin(c), updated, await getResultFiles(db, result.id)));
    },
  )
  .delete(
    "/:id",
    describe({
      operationId: "deleteResult",
      tag: "Results",
      summary: "Delete a result and its files (the submission is untouched)",
      success: { 204: null },
      errors: ["not_found"],
    }),
    requireScope("results:write"),
    async (c) => {
      const db = getDb(c.env.DB);
      const result = await getResult(db, c.get("caller").accountId, c.req.param("id"));
      if (!result) throw notFound("result");
      await removeResult(c.env, result.id);
      return c.body(null, 204);
    },
  )
  .get(
    "/:id/files/:name",
    describe({
      operationId: "getResultFile",
      tag: "Results",
      summary: "Download a result file",
      description:
        "`result.json`, `fitness_history.csv`, `best_solution.csv`, `fitness.svg`, `population.json` (when stored) and `logs.txt` (when the run printed anything): the names a result's `files` lists.",
      success: {
        200: { raw: ["application/json", "text/csv", "image/svg+xml", "text/plain"], description: "The file, streamed as an attachment" },
      },
      errors: ["not_found"],
    }),
    requireScope("results:read"),
    async (c) => {
      const db = getDb(c.env.DB);
      const result = await getResult(db, c.get("caller").accountId, c.req.param("id"));
      if (!result) throw notFound("result");
      return downloadResultFile(c.env, result.id, c.req.param("name"), c.get("requestId"));
    },
  )
  .post(
    "/:id/continue",
    describe({
      operationId: "continueResult",
      tag: "Results",
      summary: "Continue a result: a new run of its submission from its final population",
      success: { 202: SubmissionAccepted },
      errors: ["not_found", "invalid_state", "entry_symbol_required", "entry_symbol_not_found", ...DATA_FILES_ERRORS, ...ADMISSION_ERRORS],
    }),
    requireScope("submissions:write"),
    optionalJsonBody(continueSchema),
    idempotent,
    async (c) => {
      const db = getDb(c.env.DB);
      const accountId = c.get("caller").accountId;
      const result = await getResult(db, accountId, c.req.param("id"));
      if (!result) throw notFound("result");
      const { submission } = await continueResult(c.env, apiStarter(c), result, c.req.valid("json"));
      return c.json(submissionAccepted(origin(c), submission, c.get("requestId")), 202);
    },
  );
