// What a submission is made of and how its list is read, for both adapters (the API and the dashboard):
// the create operation's input (the body of POST /submissions, the dashboard's form turned into that
// body), what it refuses, and the submissions list with its filters, ordering and paging.
import { z } from "zod";
import type { Bindings } from "../env";
import { ApiError, validationError } from "../errors";
import { text } from "../model/fields";
import { withCrossFieldRules } from "../model/parameter-rules";
import { CODE_FIELDS, type CodeField, code, type GaParameters, gaShape } from "../model/parameters";
import {
  buildQuick,
  isQuickType,
  QUICK_FIXED_FIELDS,
  QUICK_TYPES,
  type QuickType,
  quickInputNames,
  quickInputs,
  quickTypeListing,
  randomSource,
} from "../model/quick-types";
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
    quick: _quick,
    ...rest
  } = body as CreationBody;
  if (fitness_func === undefined)
    throw validationError([{ field: "fitness_func", message: "is required (or fitness_func_id, a code upload)" }]);
  return { parameters: { ...rest, fitness_func }, initialPopulation };
}

/** The submission types Allele runs: `new` (a job of your own code) and the quick types (docs/api.md#quick-submission-types). */
export const SUBMISSION_TYPES = ["new", ...QUICK_TYPES] as const;

/** A quick body's fields beside its type's inputs: the submission's own, and the GA parameters the type does not set. */
const quickCommonShape = (() => {
  const { fitness_func: _f, fitness_func_entry: _e, num_genes: _n, gene_space: _s, gene_type: _t, data_files: _d, ...ga } = gaShape;
  const optional = Object.fromEntries(
    Object.entries(ga).map(([name, schema]) => [name, schema instanceof z.ZodDefault ? schema.unwrap().optional() : schema.optional()]),
  ) as unknown as { [K in keyof typeof ga]: z.ZodOptional<z.ZodType<z.output<(typeof ga)[K]>>> };
  return {
    // Optional here (the creation body's defaults fill them): the documented body does not require them.
    name: text(200).optional(),
    description: text(2000).optional(),
    submission_type: z.enum(QUICK_TYPES),
    webhook_url: z.unknown().optional(),
    notification_email: z.unknown().optional(),
    logger: refusedLogger,
    ...optional,
  };
})();
const quickCommon = z.strictObject(quickCommonShape);

/** The body of POST /submissions of each quick type, as documented (the type's inputs and the fields every quick body takes). */
export const quickBodySchemas = QUICK_TYPES.map((type) =>
  z
    .strictObject({
      ...quickCommonShape,
      submission_type: z.literal(type),
      ...(quickInputs(type) as unknown as { shape: z.ZodRawShape }).shape,
    })
    .meta({ id: `Create_${type}`, description: `A ${type} submission (docs/api.md#quick-submission-types).` }),
);

/** `GET /api/v1/submission-types`: `new` (its inputs: the creation body) and each quick type (its inputs, defaults and an example). */
export function submissionTypes() {
  return {
    results: [
      {
        name: "new",
        description: "A job of your own code: fitness_func (or fitness_func_id) and the GA parameters (docs/api.md#creation-parameters).",
        inputs: z.toJSONSchema(createSubmissionSchema, { io: "input", target: "draft-2020-12", unrepresentable: "any" }) as Record<
          string,
          unknown
        >,
        defaults: {},
        example: {},
        fixed_parameters: [],
        min_memory_mb: null,
      },
      ...quickTypeListing(),
    ],
  };
}

/** What a quick type made of a creation: its type and the inputs the server generated (echoed as `generated`). */
export interface QuickCreation {
  type: QuickType;
  generated: Record<string, unknown>;
}
export type CreationBody = CreateBody & { quick?: QuickCreation };

type Issue = { path: PropertyKey[]; message: string };
const issuesOf = (error: z.ZodError): Issue[] =>
  error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: [...issue.path, key], message: "is not a known field" }))
      : [{ path: issue.path, message: issue.message }],
  );

/**
 * A creation body, whatever its type: a `new` one as createSubmissionSchema reads it; a quick one (docs/api.md#quick-submission-types) as its
 * type's inputs and the GA parameters it may give, turned into the parameters of its job (the built-in
 * fitness source, the genes, the type's defaults under what it gave) and checked by the same rules.
 */
export const creationBodySchema = z.unknown().transform(async (raw, ctx): Promise<CreationBody> => {
  const fail = (issues: Issue[]) => {
    for (const issue of issues) ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    return z.NEVER;
  };
  const type = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>).submission_type : undefined;
  if (!isQuickType(type)) {
    const parsed = await createSubmissionSchema.safeParseAsync(raw);
    return parsed.success ? parsed.data : fail(issuesOf(parsed.error));
  }
  const body = raw as Record<string, unknown>;
  const names = new Set(quickInputNames(type));
  const inputs = Object.fromEntries(Object.entries(body).filter(([k]) => names.has(k)));
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !names.has(k)));
  const issues: Issue[] = [];
  for (const field of [...QUICK_FIXED_FIELDS, "fitness_func_id", "initial_population"]) {
    if (!(field in rest)) continue;
    delete rest[field];
    issues.push({
      path: [field],
      message:
        field === "fitness_func" || field === "fitness_func_id"
          ? `is built into ${type} and cannot be given (its source is shown on the submission)`
          : `is set by ${type} from its inputs and cannot be given`,
    });
  }
  const parsedInputs = await quickInputs(type).safeParseAsync(inputs);
  const parsedRest = await quickCommon.safeParseAsync(rest);
  if (!parsedInputs.success) issues.push(...issuesOf(parsedInputs.error));
  if (!parsedRest.success) issues.push(...issuesOf(parsedRest.error));
  if (issues.length || !parsedInputs.success || !parsedRest.success) return fail(issues);
  const { name, description, submission_type: _type, webhook_url, notification_email, logger: _logger, ...given } = parsedRest.data;
  const seed = given.random_seed ?? crypto.getRandomValues(new Uint32Array(1))[0]!;
  const { parameters, generated } = buildQuick(type, parsedInputs.data, given as Partial<GaParameters>, randomSource(seed));
  const full = await createSubmissionSchema.safeParseAsync({
    name,
    description,
    submission_type: type,
    webhook_url,
    notification_email,
    ...parameters,
  });
  if (!full.success) return fail(issuesOf(full.error));
  return { ...full.data, quick: { type, generated } };
});

/**
 * 422 for what the body names but Allele does not do: another submission type, or a per-submission
 * webhook URL or notification e-mail (the Vilvik SDK forwards them when its caller sets them).
 */
export function refuseUnsupported(
  body: { submission_type?: string; webhook_url?: unknown; notification_email?: unknown },
  /** The types this request takes: every one for a creation (a quick body is read before), `new` for a sweep's base. */
  supported: readonly string[] = SUBMISSION_TYPES,
): void {
  if (body.submission_type !== undefined && !supported.includes(body.submission_type)) {
    throw new ApiError(
      "unsupported_submission_type",
      `submission_type "${body.submission_type}" is not supported here; the supported ${supported.length > 1 ? "values are" : "value is"}: ${supported.join(", ")}.`,
      {
        field: "submission_type",
        supported: [...supported],
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
