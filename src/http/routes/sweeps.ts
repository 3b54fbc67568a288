// /api/v1/sweeps: list, create, get (with its statistics), cancel, delete (docs/api.md#sweeps).

import { Hono } from "hono";
import { CREATION_ERRORS } from "../../admission/admission";
import { cancelSweep, deleteSweep } from "../../domain/sweeps";
import { notFound } from "../../errors";
import {
  createSweepSchema,
  startSweep,
  sweepAccepted,
  sweepFull,
  sweepListItem,
  sweepsListQuery,
  sweepsPage,
} from "../../operations/sweeps";
import { getDb } from "../../storage/db";
import { getSweep, noChildren, sweepChildren } from "../../storage/sweeps";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { list, Sweep, SweepAccepted, SweepListItem } from "../validation/responses";
import { jsonBody, query } from "../validation/validate";
import { origin } from "../views";
import { apiStarter } from "./starter";

/** The account's sweep `id` with its children, or 404. */
async function ownSweep(env: AppEnv["Bindings"], accountId: string, id: string) {
  const db = getDb(env.DB);
  const row = await getSweep(db, accountId, id);
  if (!row) throw notFound("sweep");
  return row;
}

export const sweepsRoutes = new Hono<AppEnv>()
  .get(
    "/",
    describe({
      operationId: "listSweeps",
      tag: "Sweeps",
      summary: "List sweeps",
      description: "Newest first unless `ordering` says otherwise; `status` filters (comma-separated).",
      success: { 200: list(SweepListItem) },
    }),
    requireScope("submissions:read"),
    query(sweepsListQuery),
    async (c) => {
      const page = await sweepsPage(c.env, c.get("caller").accountId, c.req.valid("query"), c.req.url);
      return c.json({
        results: page.rows.map((row) => sweepListItem(row, page.counts.get(row.id) ?? noChildren())),
        next: page.next,
        previous: page.previous,
      });
    },
  )
  .post(
    "/",
    describe({
      operationId: "createSweep",
      tag: "Sweeps",
      summary: "Create a parameter sweep: one submission per combination × seed",
      description:
        "Answers 202 at once. The children wait for the account's concurrency slots on the server and are admitted as they free; the daily quota, parameter caps and credits are counted per child and a sweep past them is refused up front (docs/api.md#sweep-gates).",
      success: { 202: SweepAccepted },
      errors: [...CREATION_ERRORS],
    }),
    requireScope("submissions:write"),
    jsonBody(createSweepSchema),
    idempotent,
    async (c) => {
      const started = await startSweep(c.env, apiStarter(c), c.req.valid("json"));
      return c.json(sweepAccepted(origin(c), started, c.get("requestId")), 202);
    },
  )
  .get(
    "/:id",
    describe({
      operationId: "getSweep",
      tag: "Sweeps",
      summary: "Get a sweep: its status, its children by combination and the statistics of their final best fitness",
      success: { 200: Sweep },
      errors: ["not_found"],
    }),
    requireScope("submissions:read"),
    async (c) => {
      const row = await ownSweep(c.env, c.get("caller").accountId, c.req.param("id"));
      return c.json(sweepFull(origin(c), row, await sweepChildren(getDb(c.env.DB), row.id)));
    },
  )
  .delete(
    "/:id",
    describe({
      operationId: "deleteSweep",
      tag: "Sweeps",
      summary: "Delete a sweep and its children (live runs are stopped and billed first; waiting children never start; results stay)",
      success: { 204: null },
      errors: ["not_found"],
    }),
    requireScope("submissions:write"),
    async (c) => {
      await deleteSweep(c.env, await ownSweep(c.env, c.get("caller").accountId, c.req.param("id")));
      return c.body(null, 204);
    },
  )
  .post(
    "/:id/cancel",
    describe({
      operationId: "cancelSweep",
      tag: "Sweeps",
      summary: "Cancel a sweep: every live child is cancelled, waiting children never start",
      success: { 202: Sweep },
      errors: ["not_found", "invalid_state"],
    }),
    requireScope("submissions:write"),
    async (c) => {
      const accountId = c.get("caller").accountId;
      await cancelSweep(c.env, await ownSweep(c.env, accountId, c.req.param("id")));
      const row = await ownSweep(c.env, accountId, c.req.param("id"));
      return c.json(sweepFull(origin(c), row, await sweepChildren(getDb(c.env.DB), row.id)), 202);
    },
  );
