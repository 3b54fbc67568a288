// What both adapters (the API and the dashboard) do with results: the list with its filters, ordering
// and paging, the changes a person may make (a name, the shared flag), a file as a download, and a
// result deleted with its files (docs/api.md#submissions-runs-results).
import { z } from "zod";
import type { Bindings } from "../env";
import { notFound } from "../errors";
import { text } from "../model/fields";
import { getDb } from "../storage/db";
import { deleteResult, getResultFile, listResults, RESULT_ORDERINGS, type ResultOrdering, type ResultRow } from "../storage/results";
import { bool, DEFAULT_ORDERING, finiteNumber, isoDate, type LinkedPage, last, linked, openCursor, paged, paging } from "./paging";

/** The results list's query (docs/api.md#filters). */
export const resultsListQuery = paged(
  z.strictObject({
    ...paging,
    submission_id: last(z.string().min(1).max(64)).optional(),
    is_shared: bool,
    min_fitness: finiteNumber,
    max_fitness: finiteNumber,
    created_after: isoDate,
    created_before: isoDate,
    ordering: last(z.enum(Object.keys(RESULT_ORDERINGS) as [ResultOrdering, ...ResultOrdering[]])).default(DEFAULT_ORDERING),
  }),
);

export const resultPatchBody = z
  .strictObject({ name: text(200).optional(), is_shared: z.boolean().optional() })
  .refine((b) => b.name !== undefined || b.is_shared !== undefined, { message: "send name and/or is_shared" });
export type ResultsListQuery = z.output<typeof resultsListQuery>;

/** A page of the account's results as `q` asks, with its links (the list at `url`). */
export async function resultsPage(env: Bindings, accountId: string, q: ResultsListQuery, url: string): Promise<LinkedPage<ResultRow>> {
  const filters = {
    submissionId: q.submission_id,
    isShared: q.is_shared,
    minFitness: q.min_fitness,
    maxFitness: q.max_fitness,
    createdAfter: q.created_after,
    createdBefore: q.created_before,
  };
  const cursor = await openCursor(env, accountId, q.cursor);
  return linked(env, accountId, url, await listResults(getDb(env.DB), accountId, filters, q.ordering, q.page_size, cursor));
}

/** A result file as a download (docs/api.md#result-files); 404 when the result has no such file (or its object is gone). */
export async function downloadResultFile(env: Bindings, resultId: string, name: string, requestId: string): Promise<Response> {
  const file = await getResultFile(getDb(env.DB), resultId, name);
  const object = file ? await env.FILES.get(file.r2Key) : null;
  if (!file || !object) throw notFound("file");
  return new Response(object.body, {
    headers: {
      "Content-Type": file.contentType,
      "Content-Length": String(object.size),
      "Content-Disposition": `attachment; filename="${file.name}"`,
      ETag: object.httpEtag,
      "X-Content-Type-Options": "nosniff",
      "X-Request-Id": requestId,
    },
  });
}

/** Deletes a result, its file rows and its files (the submission is untouched). */
export async function removeResult(env: Bindings, resultId: string): Promise<void> {
  const keys = await deleteResult(getDb(env.DB), resultId);
  if (keys.length) await env.FILES.delete(keys);
}
