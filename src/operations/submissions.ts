// What a submission is made of and how its list is read, for both adapters (the API and the dashboard):
// the create operation's input (the body of POST /submissions, the dashboard's form turned into that
// body), what it refuses, and the submissions list with its filters, ordering and paging.
import { z } from "zod";
import type { Bindings } from "../env";
import { ApiError, validationError } from "../errors";
import { text } from "../model/fields";
import { withCrossFieldRules } from "../model/parameter-rules";
import { CODE_FIELDS, type CodeField, code, type GaParameters, gaShape } from "../model/parameters";
import { isRunStatus, RUN_STATUSES, type RunStatus, SUBMISSION_SOURCES } from "../model/runs";
import { populationProblems } from "../model/start-population";
import { getDb } from "../storage/db";
import { listSubmissions, SUBMISSION_ORDERINGS, type SubmissionOrdering, type SubmissionRow } from "../storage/submissions";
import { DEFAULT_ORDERING, isoDate, type LinkedPage, last, linked, openCursor, paged, paging } from "./paging";

/** The largest creation body: a start population (`initial_population`) rides inside it, as in an import. */
export const MAX_CREATE_BYTES = 8 * 1024 * 1024;

/** A start population as PyGAD takes it: rows of numbers, one row per solution (docs/api.md#creation-parameters). */
const initialPopulation = z.array(z.array(z.number()).min(1).max(1_000_000)).min(1).max(5000).meta({
  description:
    "the start population, one row of num_genes numbers per solution (sol_per_pop rows), in place of the one PyGAD draws; each run of the submission but a continue starts from it",
});

/**
 * PyGAD's `logger` takes a logging.Logger, which JSON cannot carry; a run's log is its captured output
 * (docs/decisions.md#logger): refused with a message saying so.
 */
export const refusedLogger = z
  .unknown()
  .optional()
  .refine((value) => value === undefined, {
    message:
      "is not taken: a run's log is its captured output — PyGAD's messages, print() and ga.logger in your code all go to the run's logs (the submission's logs, the result's logs.txt)",
  })
  .meta({ description: "not taken (a run's log is its captured output): 400 naming it" });
const uploadId = z.string().min(1).max(64).optional();
const uploadIds = Object.fromEntries(CODE_FIELDS.map((field) => [`${field}_id`, uploadId])) as {
  [F in CodeField as `${F}_id`]: typeof uploadId;
};

/** The fields of POST /submissions, each with its own schema (the rules between them: below). */
export const createSubmissionShape = {
  name: text(200).default(""),
  description: text(2000).default(""),
  // What the Vilvik SDK sends (docs/clients.md): checked by refuseUnsupported, after validation.
  submission_type: z.string().max(100).optional(),
  webhook_url: z.unknown().optional(),
  notification_email: z.unknown().optional(),
  // A code upload in place of a code field (docs/api.md#code-uploads), resolved before the checks.
  ...uploadIds,
  ...gaShape,
  fitness_func: code.optional(), // or fitness_func_id: one of them is required (below)
  initial_population: initialPopulation.optional(),
  logger: refusedLogger,
};

/** The body of POST /submissions. */
export const createSubmissionSchema = withCrossFieldRules(z.strictObject(createSubmissionShape))
  .superRefine(
    (body, ctx) => {
      const given: unknown = body;
      if (!given || typeof given !== "object" || Array.isArray(given)) return; // the body itself is the error
      if (
        !("fitness_func" in given && given.fitness_func !== undefined) &&
        !("fitness_func_id" in given && given.fitness_func_id !== undefined)
      ) {
        ctx.addIssue({ code: "custom", path: ["fitness_func"], message: "is required (or fitness_func_id, a code upload)" });
      }
    },
    { when: () => true }, // reported with every other failing field, not only once the rest is valid
  )
  .superRefine((body, ctx) => {
    if (!body.initial_population) return;
    for (const message of populationProblems(body.initial_population, body))
      ctx.addIssue({ code: "custom", path: ["initial_population"], message });
  });
export type CreateBody = z.output<typeof createSubmissionSchema>;

/**
 * A creation body's GA parameters and its start population: the body without the submission's own
 * fields (name, description, what the Vilvik SDK sends, the refused logger). Its code uploads must be
 * resolved (resolveCodeUploads) first: the schema asks for fitness_func or its upload.
 */
export function creationParameters(body: CreateBody): { parameters: GaParameters; initialPopulation: CreateBody["initial_population"] } {
  const {
    name: _name,
    description: _description,
    submission_type: _type,
    webhook_url: _hook,
    notification_email: _mail,
    logger: _logger,
    initial_population: initialPopulation,
    fitness_func,
    ...rest
  } = body;
  if (fitness_func === undefined)
    throw validationError([{ field: "fitness_func", message: "is required (or fitness_func_id, a code upload)" }]);
  return { parameters: { ...rest, fitness_func }, initialPopulation };
}

/** The submission types Allele runs (the Vilvik interface also names quick types it does not have). */
export const SUBMISSION_TYPES = ["new"] as const;

/**
 * 422 for what the body names but Allele does not do: another submission type, or a per-submission
 * webhook URL or notification e-mail (the Vilvik SDK forwards them when its caller sets them).
 */
export function refuseUnsupported(body: { submission_type?: string; webhook_url?: unknown; notification_email?: unknown }): void {
  if (body.submission_type !== undefined && !(SUBMISSION_TYPES as readonly string[]).includes(body.submission_type)) {
    throw new ApiError(
      "unsupported_submission_type",
      `submission_type "${body.submission_type}" is not supported; the supported value is: ${SUBMISSION_TYPES.join(", ")}.`,
      {
        field: "submission_type",
        supported: [...SUBMISSION_TYPES],
      },
    );
  }
  const unsupported = (["webhook_url", "notification_email"] as const).filter((f) => body[f] !== undefined);
  if (unsupported.length) {
    const verb = unsupported.length > 1 ? "are" : "is";
    throw new ApiError(
      "unsupported_field",
      `${unsupported.join(" and ")} ${verb} not supported per submission; register account webhooks at /api/v1/webhooks instead.`,
      {
        fields: unsupported,
      },
    );
  }
}

export const submissionsListQuery = paged(
  z.strictObject({
    ...paging,
    status: last(
      z
        .string()
        .transform((csv) => csv.split(",").map((s) => s.trim()))
        .refine((list): list is RunStatus[] => list.every(isRunStatus), `must be a comma-separated list of: ${RUN_STATUSES.join(", ")}`),
    ).optional(),
    source: last(z.enum(SUBMISSION_SOURCES)).optional(),
    created_after: isoDate,
    created_before: isoDate,
    name_contains: last(z.string().max(100)).optional(),
    ordering: last(z.enum(Object.keys(SUBMISSION_ORDERINGS) as [SubmissionOrdering, ...SubmissionOrdering[]])).default(DEFAULT_ORDERING),
  }),
);
export type SubmissionsListQuery = z.output<typeof submissionsListQuery>;

/** A page of the account's submissions as `q` asks, with its links (the list at `url`). */
export async function submissionsPage(
  env: Bindings,
  accountId: string,
  q: SubmissionsListQuery,
  url: string,
): Promise<LinkedPage<SubmissionRow>> {
  const filters = {
    status: q.status,
    source: q.source,
    createdAfter: q.created_after,
    createdBefore: q.created_before,
    nameContains: q.name_contains,
  };
  const cursor = await openCursor(env, accountId, q.cursor);
  return linked(env, accountId, url, await listSubmissions(getDb(env.DB), accountId, filters, q.ordering, q.page_size, cursor));
}
