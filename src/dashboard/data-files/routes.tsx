/** @jsxImportSource hono/jsx */
// Data files in the dashboard (docs/dashboard.md#data-files): the list, an upload, a download, a delete —
// the API's operations under the same scopes. The upload is read as it streams (never whole in memory),
// so its CSRF token is checked from the form's first field, or from `X-CSRF-Token` when the page's script
// sends the file (the new-submission form's "Upload and attach"; it asks for JSON back).
import { type Context, Hono } from "hono";
import { dataFileLimits } from "../../admission/limits";
import { deleteDataFile, recordUpload } from "../../domain/data-files";
import { ApiError, errorBody, notFound, translate } from "../../errors";
import { dataFilesListQuery, dataFilesPage, downloadDataFile, receiveDataFile } from "../../operations/data-files";
import { dataStorageUsed, getDataFile } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import { requireScope } from "../../surface/caller";
import { act, refusalText } from "../shared/actions";
import type { DashboardEnv } from "../shared/context";
import { listQueryOf } from "../shared/lists";
import { checkChange, flash, protectChange, requireSession } from "../shared/session";
import { DataFilesPage } from "./page";

type Ctx = Context<DashboardEnv>;

/** Where an upload sent from a page goes back to: a path of this site only. */
const backOf = (c: Ctx) => {
  const back = c.req.query("back") ?? "";
  return /^\/[A-Za-z0-9/_-]*$/.test(back) && !back.startsWith("//") ? back : "/data-files";
};

async function ownFile(c: Ctx, id: string) {
  const row = await getDataFile(getDb(c.env.DB), c.get("session")!.account.id, id);
  if (!row) throw notFound("data file");
  return row;
}

/**
 * A body that is no readable upload at all — not multipart, or malformed — rather than a file refused:
 * the error page's 4xx, as any form that cannot be read (shared/form.ts), not a message on the page.
 */
const unreadable = (err: ApiError) =>
  err.code === "unsupported_media_type" ||
  (Array.isArray(err.details.fields) && err.details.fields.some((f) => (f as { field?: unknown } | null)?.field === "body"));

/** An upload: the file streamed to storage once the CSRF token is checked; JSON for the script, else a redirect with a message. */
async function upload(c: Ctx) {
  const account = c.get("session")!.account;
  const json = (c.req.header("Accept") ?? "").includes("application/json");
  const header = c.req.header("X-CSRF-Token");
  let checked = false; // a refusal before the token was checked is the error page's, as protectChange's
  const check = async (token: string) => {
    await checkChange(c, token);
    checked = true;
  };
  try {
    if (header !== undefined) await check(header);
    const staged = await receiveDataFile(c.env, account, c.req.raw, {
      fields: ["_csrf"],
      beforeFile: async (fields) => {
        if (header === undefined) await check(fields.get("_csrf") ?? "");
      },
    });
    const row = await recordUpload(c.env, account, staged);
    if (json) return c.json({ id: row.id, name: row.name, size_bytes: row.sizeBytes, content_type: row.contentType }, 201);
    flash(c, "notice", `Uploaded ${row.name}.`);
  } catch (err) {
    const refusal = translate(err as Error);
    if (json) return c.json(errorBody(refusal, c.get("requestId") ?? ""), refusal.status);
    if (!checked || !(err instanceof ApiError) || err.status >= 500 || unreadable(err)) throw err;
    flash(c, "error", refusalText(err));
  }
  return c.redirect(backOf(c), 303);
}

export const dataFileRoutes = new Hono<DashboardEnv>()
  .use("/data-files", requireSession)
  .use("/data-files/*", requireSession)
  .get("/data-files", requireScope("submissions:read"), async (c) => {
    const session = c.get("session")!;
    const { query } = listQueryOf(c, dataFilesListQuery);
    const page = query ? await dataFilesPage(c.env, session.account.id, query, c.req.url) : { rows: [], next: null, previous: null };
    const limits = dataFileLimits(session.account.plan, session.account.overrides);
    return c.html(
      <DataFilesPage
        session={session}
        rows={page.rows}
        next={page.next}
        previous={page.previous}
        limits={{
          maxBytes: limits.max_data_file_bytes,
          perSubmission: limits.max_data_files_per_submission,
          storage: limits.data_storage_bytes,
        }}
        used={await dataStorageUsed(getDb(c.env.DB), session.account.id)}
      />,
      query ? 200 : 400,
    );
  })
  .post("/data-files", requireScope("submissions:write"), upload)
  .get("/data-files/:id/content", requireScope("submissions:read"), async (c) =>
    downloadDataFile(c.env, await ownFile(c, c.req.param("id")), c.get("requestId") ?? ""),
  )
  .post("/data-files/:id/delete", requireScope("submissions:write"), protectChange, async (c) => {
    const id = c.req.param("id");
    return act(c, "/data-files", async () => {
      const row = await ownFile(c, id);
      if (!(await deleteDataFile(c.env, row))) throw notFound("data file");
      return `Deleted ${row.name}; submissions that use it still read it.`;
    });
  });
