// The response bodies of the API and the webhook event payloads, as zod schemas: the OpenAPI document
// (src/http/openapi/) is generated from them, and the type checks at the end hold every view that builds
// a response to its schema (a field added to a view and not here fails `tsc`; schemathesis checks the
// values at run time).
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../../errors";
import type { cancelledData, failedData, resultCompletedData, succeededData, sweepCompletedData } from "../../events/payloads";
import { OVERRIDABLE_LIMITS, type OverridableLimit, PLANS, SCOPES } from "../../model/accounts";
import type { Environment } from "../../model/environment";
import { DELIVERY_STATUSES, EVENT_TYPES } from "../../model/events";
import { RUN_KINDS, RUN_STATUSES, SUBMISSION_SOURCES } from "../../model/runs";
import { SWEEP_STATUSES } from "../../model/sweeps";
import type { sweepAccepted, sweepFull, sweepListItem } from "../../operations/sweeps";
import { isolationFlags } from "../../runner/isolation";
import type { FiredDelivery, inspectDelivery } from "../../webhooks/tools";
import type { attemptView, deliveryView, webhookView } from "../../webhooks/views";
import type { accountView, resultFull, resultListItem, submissionAccepted, submissionFull, submissionListItem } from "../views";

const timestamp = z.string().meta({ description: "ISO 8601 UTC with milliseconds and Z", examples: ["2026-05-01T12:34:56.123Z"] });
const id = z.string().meta({ description: "12 base62 characters" });
const url = z.string().meta({ description: "absolute URL" });
const runStatus = z.enum(RUN_STATUSES);
const parameters = z.record(z.string(), z.unknown()).meta({ description: "the GA parameters (docs/api.md#creation-parameters)" });
const errorObject = z.strictObject({ code: z.string(), message: z.string() });
const resumes = z
  .strictObject({
    count: z.number().meta({ description: "how many times the run was resumed after its worker was lost" }),
    at: z.array(timestamp).meta({ description: "when, one time per resume" }),
  })
  .meta({
    id: "RunResumes",
    description:
      "the run's resumes from its last checkpoint after a lost worker (docs/api.md#durable-runs); the result equals an uninterrupted run's",
  });
const warnings = z
  .array(z.strictObject({ message: z.string(), count: z.number() }).meta({ id: "RunWarning" }))
  .meta({ description: "the run's Python warnings, deduplicated with counts, in order of first appearance (docs/api.md#warnings)" });

const down = z.strictObject({ status: z.literal("down"), reason: z.string() });
const IsolationFlags = isolationFlags.meta({
  id: "IsolationFlags",
  description:
    "the sandbox measures the GA worker enforces, as its own GET /health reports them (docs/deploy.md#isolation-per-measure: which may be absent)",
});
const ok = z.strictObject({ status: z.literal("ok") });
export const Health = z
  .strictObject({
    status: z.enum(["ok", "unavailable"]),
    failing: z.array(z.string()).optional().meta({ description: "the parts that are down (503 only)" }),
    checks: z.strictObject({
      database: z.union([ok, down]),
      files: z.union([ok, down]),
      runner: z
        .union([
          z.strictObject({
            status: z.literal("ok"),
            isolation: IsolationFlags.optional().meta({ description: "the standing GA worker's measures (local)" }),
          }),
          z.strictObject({
            status: z.literal("on_demand"),
            isolation: IsolationFlags.optional().meta({
              description: "the latest measures an instance reported once started; absent before any instance has started",
            }),
            observed_at: timestamp.optional().meta({ description: "when that instance reported them" }),
            class: z.string().optional().meta({ description: "its container class (GaRunner, GaRunnerWide)" }),
          }),
          down,
        ])
        .meta({
          description:
            "the GA worker: `ok` (a standing worker, local), `on_demand` (a container per run, production) or `down`; with its sandbox measures when known",
        }),
    }),
  })
  .meta({ id: "Health" });

export const EnvironmentBody = z
  .strictObject({
    python: z
      .string()
      .meta({ description: "the Python release series runs use (the image's patch release is python:3.11-slim's)", examples: ["3.11"] }),
    packages: z
      .array(
        z
          .strictObject({
            name: z.string().meta({ description: "the distribution's name (PEP 503 normalized)", examples: ["scikit-learn"] }),
            version: z.string().meta({ examples: ["1.9.1"] }),
            modules: z
              .array(z.string())
              .meta({ description: "the top-level modules it provides: what a run imports", examples: [["sklearn"]] }),
            featured: z
              .boolean()
              .meta({ description: "one of the libraries the environment is curated for (listed first); the rest are their dependencies" }),
          })
          .meta({ id: "EnvironmentPackage" }),
      )
      .meta({ description: "every package a run's code can import, with its exact version" }),
    threads: z.strictObject({
      variables: z.array(z.string()).meta({ description: "the environment variables that size a run's thread pools" }),
      description: z.string(),
    }),
    memory: z.strictObject({
      tensorflow_min_memory_mb: z.number().meta({ description: "the smallest run memory cap under which TensorFlow may be imported" }),
      description: z.string(),
    }),
    data_files: z.strictObject({
      mount: z.string().meta({ description: "where a run finds its submission's data files", examples: ["/data"] }),
      read_only: z.boolean(),
      available: z.boolean().meta({ description: "whether this deployment mounts data files yet" }),
      description: z.string(),
    }),
  })
  .meta({ id: "Environment" });

export const OpenApiDocument = z
  .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
  .meta({ description: "an OpenAPI 3.1 document" });

/** The limits in force: every overridable limit (model/accounts.ts, their one declaration) and the run caps. */
const limitValues = {
  ...(Object.fromEntries(Object.keys(OVERRIDABLE_LIMITS).map((name) => [name, z.number()])) as Record<OverridableLimit, z.ZodNumber>),
  run_time_seconds: z.number(),
  run_memory_mb: z.number(),
};
const balances = z.strictObject({ free: z.number(), paid: z.number(), total: z.number() });
const overrides = z.record(z.string(), z.number()).meta({ description: "per-account overrides of the plan's limits" });
const plan = z.enum(PLANS);

export const Account = z
  .strictObject({
    id,
    email: z.string(),
    plan,
    overrides,
    balances,
    limits: z.strictObject({ ...limitValues, rate_limit_per_key: z.number(), rate_limit_per_user: z.number() }),
    usage: z.strictObject({
      concurrent_submissions: z.number(),
      inflight_api_runs: z.number(),
      daily_quota_used: z.number(),
      data_storage_bytes: z.number().meta({ description: "the bytes of data files the account keeps: listed, or read by its submissions" }),
      rate_window: z.strictObject({ limit: z.number(), remaining: z.number(), reset: z.number() }),
    }),
    key: z.strictObject({ prefix: z.string(), scopes: z.array(z.enum(SCOPES)) }),
  })
  .meta({ id: "Account" });

export const SubmissionTypesBody = z
  .strictObject({
    results: z.array(
      z.strictObject({
        name: z.string().meta({ description: "the value of submission_type" }),
        description: z.string(),
        inputs: z
          .record(z.string(), z.unknown())
          .meta({ description: "the type's own fields as JSON Schema (draft 2020-12), from the schemas creation validates with" }),
        defaults: z
          .record(z.string(), z.unknown())
          .meta({ description: "the GA parameters the type applies when the body leaves them out" }),
        example: z.record(z.string(), z.unknown()).meta({ description: "inputs to start from" }),
        fixed_parameters: z
          .array(z.string())
          .meta({ description: "GA parameters the type sets itself: a body, a reexecute or a continue cannot give them" }),
        min_memory_mb: z.number().nullable().meta({
          description:
            "the smallest run memory cap the type's code runs under (quick_keras_xor_training: TensorFlow's), null for any; under a smaller cap in force its creation is 403 tier_limit_exceeded",
        }),
      }),
    ),
  })
  .meta({ id: "SubmissionTypes" });

export const SubmissionAccepted = z
  .strictObject({
    id,
    status: z.literal("queued"),
    name: z.string(),
    description: z.string(),
    submission_type: z.string(),
    generated: z.record(z.string(), z.unknown()).optional().meta({
      description:
        'only when creating a quick type (docs/api.md#quick-submission-types): the inputs the server generated, e.g. `{"integers": […]}` for quick_binary_subset_sum with num_integers, `{}` when none',
    }),
    created_at: timestamp,
    status_url: url,
    result_url: url,
    request_id: z.string(),
  })
  .meta({ id: "SubmissionAccepted" });

const submissionItemShape = { id, name: z.string(), status: runStatus, source: z.enum(SUBMISSION_SOURCES), created_at: timestamp };
export const SubmissionListItem = z.strictObject(submissionItemShape).meta({ id: "SubmissionListItem" });

export const Submission = z
  .strictObject({
    ...submissionItemShape,
    submission_type: z.string(),
    description: z.string(),
    sweep_id: id.nullable().meta({ description: "the sweep this submission is a child of, or null" }),
    queued_reason: z.enum(["account_slot", "platform_place"]).nullable().meta({
      description:
        "while queued, what the latest run waits for: `account_slot` (a sweep's child waiting for one of the account's concurrency slots) or `platform_place` (admitted, waiting for a place on the platform); null otherwise",
    }),
    parameters,
    has_initial_population: z
      .boolean()
      .meta({ description: "created with a start population (initial_population), which each of its runs but a continue starts from" }),
    queued_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    execution_duration_ms: z.number().nullable(),
    generations_completed: z.number().nullable(),
    best_solution_fitness: z.number().nullable(),
    run_count: z.number(),
    latest_run: z.strictObject({
      id,
      kind: z.enum(RUN_KINDS),
      status: runStatus,
      parent_result_id: id.nullable(),
      resumes,
      checkpoint: z
        .strictObject({ generation: z.number(), at: timestamp.nullable() })
        .nullable()
        .meta({ description: "the run's last checkpoint: the generation a resume goes on from, and when it was stored; null: none yet" }),
    }),
    error: errorObject.nullable(),
    cpu_seconds_used: z.number().nullable(),
    peak_memory_mb: z.number().nullable(),
    hit_time_cap: z.boolean(),
    hit_memory_cap: z.boolean(),
    credits_charged: z.number(),
    logs: z.string().meta({ description: "the latest run's output: its last 8 KiB" }),
    logs_truncated: z.boolean(),
    warnings,
    status_url: url,
    result_url: url,
    updated_at: timestamp,
  })
  .meta({ id: "Submission" });

const resultItemShape = {
  id,
  submission_id: id,
  name: z.string(),
  is_shared: z.boolean(),
  best_solution_fitness: z
    .union([z.number(), z.array(z.number())])
    .nullable()
    .meta({
      description:
        "as PyGAD's best_solution() gives it: one objective, the best fitness (null when not finite); several, the best solution's objective values (the fitness orderings and filters treat those as the lowest)",
    }),
  num_objectives: z.number().meta({ description: "1, or the number of objectives the fitness returned (docs/api.md#multi-objective)" }),
  generations_completed: z.number(),
  created_at: timestamp,
};
export const ResultListItem = z.strictObject(resultItemShape).meta({ id: "ResultListItem" });

/** One value of a result's population_history: a number (null when not finite), or one per objective. */
const populationValue = z.union([z.number().nullable(), z.array(z.number().nullable())]);

export const Result = z
  .strictObject({
    ...resultItemShape,
    run_id: id,
    best_solution: z.array(z.number()),
    best_solution_objectives: z
      .array(z.number())
      .nullable()
      .meta({ description: "several objectives: the objective values of best_solution (as best_solution_fitness); one objective: null" }),
    pareto_front_size: z
      .number()
      .nullable()
      .meta({ description: "several objectives: the distinct solutions of the final Pareto front; one objective: null" }),
    best_solution_generation: z.number().nullable(),
    best_solutions_fitness: z.array(z.union([z.number().nullable(), z.array(z.number())])).meta({
      description:
        "PyGAD's history, per generation, generation 0 first: the best solution's fitness — one objective, a number (null when not finite); several, its objective values",
    }),
    objective_maxima: z.array(z.array(z.number())).nullable().meta({
      description:
        "several objectives: per generation, each objective's maximum over the population (the values may come from different solutions); null for one objective, for imports and for runs made before it was kept",
    }),
    population_history: z
      .array(
        z.strictObject({
          generation: z.number().int(),
          best: populationValue,
          mean: populationValue,
          median: populationValue,
          worst: populationValue,
        }),
      )
      .nullable()
      .meta({
        description:
          "the population's best (maximum), mean, median and worst (minimum) fitness per generation, generation 0 first; with several objectives each is a list of one value per objective; null where not finite. Every generation up to 2,000; past that (or past 200,000 numbers with many objectives) generations spread evenly over the run, the first and the last included. null for imports and for results made before it was kept",
      }),
    stopped_reason: z.string(),
    constraint_violations: z
      .array(z.strictObject({ gene: z.number(), value: z.number().nullable() }))
      .nullable()
      .meta({
        description:
          "genes of best_solution their gene_constraint refuses; [] when none; null without a gene_constraint (and for an import)",
      }),
    resumes,
    warnings,
    engine: z
      .string()
      .nullable()
      .meta({ description: "the engine path that ran (docs/engine.md); null for imports and results made before it was kept" }),
    parameters,
    interpretation: z.record(z.string(), z.unknown()).nullable().meta({
      description:
        "what the best solution's genes mean, for a quick type's run (docs/api.md#interpretation): its `submission_type` and the chosen subset or items with their totals, the tuned hyperparameters by name with the cross-validated accuracy, or the network's answers; null for any other run",
    }),
    files: z.array(z.strictObject({ name: z.string(), content_type: z.string(), size_bytes: z.number(), url })),
    updated_at: timestamp,
  })
  .meta({ id: "Result" });

// Parameter sweeps (docs/api.md#sweeps).
const sweepCounts = z
  .strictObject({
    queued: z.number(),
    running: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    cancelled: z.number(),
    waiting: z.number().meta({ description: "of the queued, the children waiting for one of the account's concurrency slots" }),
  })
  .meta({ id: "SweepCounts", description: "the children by status" });
const sweepItemShape = {
  id,
  name: z.string(),
  status: z.enum(SWEEP_STATUSES),
  source: z.enum(["api", "web"]),
  children: z.number().meta({ description: "combinations × seeds (less any child deleted since)" }),
  counts: sweepCounts,
  created_at: timestamp,
  ended_at: timestamp.nullable(),
};
export const SweepListItem = z.strictObject(sweepItemShape).meta({ id: "SweepListItem" });
export const SweepAccepted = z
  .strictObject({
    id,
    name: z.string(),
    status: z.literal("running"),
    children: z.number(),
    created_at: timestamp,
    status_url: url,
    submissions: z.array(
      z.strictObject({
        id,
        combination: z.number().meta({ description: "the index of its combination in the sweep's `combinations`" }),
        random_seed: z.number(),
        status: runStatus,
        status_url: url,
      }),
    ),
    request_id: z.string(),
  })
  .meta({ id: "SweepAccepted" });
const nullableNumber = z.number().nullable();
export const Sweep = z
  .strictObject({
    ...sweepItemShape,
    description: z.string(),
    base: parameters.meta({ description: "the parameters every child shares (as given, code uploads resolved; without random_seed)" }),
    grid: z.record(z.string(), z.array(z.unknown())),
    seeds: z.number(),
    seed_base: z.number().meta({ description: "the first child seed: base.random_seed, or derived from the sweep's id" }),
    payment: z.enum(["credits", "plan"]),
    waiting_on: errorObject.nullable().meta({ description: "why a child still waits: the last refusal of its admission" }),
    cancel_requested: z.boolean(),
    credits_charged: z.number(),
    best_combination: nullableNumber.meta({ description: "the index of the best combination (highest median final best fitness)" }),
    combinations: z.array(
      z
        .strictObject({
          index: z.number(),
          parameters: z.record(z.string(), z.unknown()),
          is_best: z.boolean(),
          runs: z.array(
            z.strictObject({
              submission_id: id,
              run_id: id,
              random_seed: nullableNumber,
              status: runStatus,
              waiting: z.boolean(),
              result_id: id.nullable(),
              best_solution_fitness: nullableNumber,
              generations_completed: nullableNumber,
              execution_duration_ms: nullableNumber,
              credits_charged: nullableNumber,
            }),
          ),
          statistics: z.strictObject({
            n: z.number().meta({ description: "how many final best fitness values the figures are of" }),
            min: nullableNumber,
            q1: nullableNumber,
            median: nullableNumber,
            q3: nullableNumber,
            max: nullableNumber,
            mean: nullableNumber,
            mean_execution_duration_ms: nullableNumber,
            mean_credits_charged: nullableNumber,
          }),
          comparison: z
            .strictObject({
              u: z.number(),
              p_value: z.number(),
              method: z.enum(["exact", "normal"]),
              significant: z.boolean().meta({ description: "p_value < 0.05" }),
              verdict: z.string(),
            })
            .nullable()
            .meta({ description: "the two-sided Mann–Whitney U test against the best combination; null for the best and without values" }),
        })
        .meta({ id: "SweepCombination" }),
    ),
    status_url: url,
    updated_at: timestamp,
  })
  .meta({ id: "Sweep" });

const webhookShape = {
  id,
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  is_active: z.boolean(),
  description: z.string(),
  last_delivery_status: z.string(),
  last_delivery_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
};
export const Webhook = z.strictObject(webhookShape).meta({ id: "Webhook" });
export const WebhookWithSecret = z
  .strictObject({ ...webhookShape, secret: z.string().meta({ description: "64 hexadecimal characters: the signing secret" }) })
  .meta({ id: "WebhookWithSecret" });

// The delivery log and the webhook tools (docs/webhooks.md#dashboard-tools).
const headerMap = z.record(z.string(), z.string());
const deliveryShape = {
  id: z.string().meta({ description: "16 hexadecimal characters" }),
  webhook_id: id,
  event_id: z.string().meta({ description: "the event's UUID (X-Event-Id)" }),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempt_count: z.number(),
  next_attempt_at: timestamp.nullable().meta({ description: "while pending, else null" }),
  last_attempt_at: timestamp.nullable(),
  is_test: z.boolean(),
  replay_of: z.string().nullable().meta({ description: "the replayed delivery's id, or null" }),
  resend_count: z.number(),
  created_at: timestamp,
};
export const Delivery = z.strictObject(deliveryShape).meta({ id: "Delivery" });
export const DeliveryAttempt = z
  .strictObject({
    attempt_no: z.number(),
    request_url: z.string(),
    request_headers: headerMap,
    response_status: z.number().nullable(),
    response_headers: headerMap.nullable(),
    response_body: z.string().nullable().meta({ description: "the first 8 KB" }),
    duration_ms: z.number(),
    network_error: z.string().nullable().meta({ description: "null, `timeout: …`, `network error: …`, or `blocked (<reason>): …`" }),
    created_at: timestamp,
  })
  .meta({ id: "DeliveryAttempt" });
export const DeliveryInspected = z
  .strictObject({ ...deliveryShape, payload: z.string().meta({ description: "the exact body sent" }), attempts: z.array(DeliveryAttempt) })
  .meta({ id: "DeliveryInspected" });
export const DeliveryQueued = z
  .strictObject({ delivery_id: z.string(), event_id: z.string(), event_type: z.string() })
  .meta({ id: "DeliveryQueued", description: "the delivery put on the queue (Test and Replay: a new one; re-send: the same)" });

const codeUploadShape = {
  code_id: id,
  content_size: z.number(),
  content_sha256: z.string(),
  created_at: timestamp,
  expires_at: timestamp,
  is_expired: z.boolean(),
};
export const CodeUpload = z.strictObject(codeUploadShape).meta({ id: "CodeUpload" });
export const CodeUploadWithContent = z.strictObject({ ...codeUploadShape, content: z.string() }).meta({ id: "CodeUploadWithContent" });

export const DataFile = z
  .strictObject({
    id,
    name: z.string().meta({ description: "the upload's file name: the file is /data/<name> in a run" }),
    size_bytes: z.number(),
    sha256: z.string().meta({ description: "hex SHA-256 of the bytes" }),
    content_type: z.string(),
    created_at: timestamp,
  })
  .meta({ id: "DataFile" });
/** A data file's upload (multipart/form-data: the file in a part named `file`, its file name the data file's name). */
export const DataFileUpload = z
  .strictObject({
    file: z
      .string()
      .meta({ format: "binary", contentMediaType: "application/octet-stream", description: "the file; its part's filename is its name" }),
  })
  .meta({ id: "DataFileUpload" });

export const ImportCreated = z
  .strictObject({ id, status: z.literal("succeeded"), source: z.literal("import"), result_id: id, status_url: url, result_url: url })
  .meta({ id: "ImportCreated" });

// The device login (RFC 8628; docs/dashboard.md#device-login): its answers and its errors, in RFC 6749's shape.
export const DeviceAuthorization = z
  .strictObject({
    device_code: z.string().meta({ description: "the device's secret: poll /auth/device/token with it" }),
    user_code: z.string().meta({ description: "8 letters shown XXXX-XXXX, for the person to confirm" }),
    verification_uri: url,
    verification_uri_complete: url,
    expires_in: z.number().meta({ description: "seconds (900)" }),
    interval: z.number().meta({ description: "seconds to wait between polls (5)" }),
  })
  .meta({ id: "DeviceAuthorization" });
export const DeviceToken = z
  .strictObject({
    api_key: z.string().meta({ description: "the new API key, given once (what the Vilvik SDK reads)" }),
    access_token: z.string().meta({ description: "the same key: RFC 8628's name for it" }),
    token_type: z.literal("Bearer"),
    scope: z.string().meta({ description: "the key's scopes, space-separated" }),
    key_prefix: z.string(),
    key_name: z.string(),
  })
  .meta({ id: "DeviceToken" });
/** An error as RFC 6749 §5.2 has it (not the API's envelope: device clients read this shape). */
export const OAuthError = <const C extends readonly [string, ...string[]]>(codes: C) =>
  z.strictObject({ error: z.enum(codes), error_description: z.string(), request_id: z.string() });

/** A cursor-paginated list (docs/api.md#lists). */
export const list = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    results: z.array(item),
    next: z.string().nullable().meta({ description: "`?cursor=…` of the next page, or null on the last" }),
    previous: z.string().nullable().meta({ description: "`?cursor=…` of the previous page, or null on the first" }),
  });

/** The error envelope (docs/api.md#errors), its `code` one of `codes`. */
export const errorEnvelope = (codes: readonly ErrorCode[]) =>
  z.strictObject({
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      request_id: z.string(),
    }),
  });
export const AnyError = errorEnvelope(ERROR_CODES).meta({
  id: "Error",
  description: "The error envelope; `code` is one of the closed list (docs/api.md#error-codes)",
});

// The admin API (docs/api.md#admin-api).
export const AdminAccount = z
  .strictObject({
    id,
    email: z.string(),
    plan,
    overrides,
    balances,
    limits: z.strictObject(limitValues),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "AdminAccount" });
const keyFields = { prefix: z.string(), name: z.string(), scopes: z.array(z.enum(SCOPES)), expires_at: timestamp.nullable() };
export const AdminAccountCreated = z.strictObject({
  account: AdminAccount,
  key: z.string().meta({ description: "the account's first key, all scopes: shown once" }),
});
export const AdminAccountWithKeys = z.strictObject({
  account: AdminAccount,
  keys: z.array(
    z.strictObject({ ...keyFields, revoked_at: timestamp.nullable(), last_used_at: timestamp.nullable(), created_at: timestamp }),
  ),
});
export const AdminAccountOnly = z.strictObject({ account: AdminAccount });
export const AdminBalances = z.strictObject({ balances });
export const AdminKeyIssued = z.strictObject({ key: z.string().meta({ description: "the key: shown once" }), ...keyFields });
export const AdminKeyRevoked = z.strictObject({
  prefix: z.string(),
  revoked: z.literal(true),
  /** The keys made from it (and from those) that this call revoked with it: none when it was revoked already. */
  revoked_dependents: z.array(z.string()),
});
export const AdminSignInLink = z.strictObject({
  url: url.meta({ description: "the one-time dashboard sign-in link: its token is shown once, only its hash is stored" }),
  expires_at: timestamp,
  account_id: id,
});

// Webhook event payloads (docs/webhooks.md#events): the envelope and each type's `data`.
const fitnessText = z
  .string()
  .nullable()
  .meta({ description: "the best fitness as a plain decimal string (never exponent notation), or null" });
const runUsage = {
  execution_duration_ms: z.number(),
  cpu_seconds_used: z.number(),
  peak_memory_mb: z.number(),
  hit_memory_cap: z.boolean(),
  hit_time_cap: z.boolean(),
};
const objectives = {
  best_solution_fitness: fitnessText,
  num_objectives: z.number().meta({ description: "1, or the number of objectives of a multi-objective run" }),
  best_solution_objectives: z
    .array(z.string())
    .nullable()
    .meta({ description: "several objectives: the best solution's objective values as plain decimal strings; one objective: null" }),
  pareto_front_size: z
    .number()
    .nullable()
    .meta({ description: "several objectives: the size of the final Pareto front; one objective: null" }),
};
export const SucceededData = z
  .strictObject({ submission_id: id, result_id: id.nullable(), status: z.literal("succeeded"), ...runUsage, ...objectives })
  .meta({ id: "SucceededData" });
export const ResultCompletedData = z
  .strictObject({ submission_id: id, result_id: id.nullable(), ...objectives, generations_completed: z.number() })
  .meta({ id: "ResultCompletedData" });
export const FailedData = z
  .strictObject({ submission_id: id, status: z.literal("failed"), error: errorObject, ...runUsage })
  .meta({ id: "FailedData" });
export const CancelledData = z
  .strictObject({ submission_id: id, status: z.literal("cancelled"), execution_duration_ms: z.number(), cpu_seconds_used: z.number() })
  .meta({ id: "CancelledData" });
export const ResumedData = z
  .strictObject({
    submission_id: id,
    run_id: id,
    status: z.literal("queued"),
    resumes: z.number().meta({ description: "how many times the run was resumed so far, this time included" }),
    from_generation: z.number().nullable().meta({
      description: "the generation its last checkpoint resumes it at; null: no checkpoint yet, it starts again from generation 0",
    }),
  })
  .meta({ id: "ResumedData" });
export const SweepCompletedData = z
  .strictObject({
    sweep_id: id,
    name: z.string(),
    status: z.enum(["completed", "cancelled"]),
    children: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    cancelled: z.number(),
    best_combination: z.number().nullable(),
  })
  .meta({ id: "SweepCompletedData" });
export const TestData = z
  .looseObject({ test: z.literal(true), sample_of: z.enum(EVENT_TYPES) })
  .meta({ id: "TestData", description: "a sample: `{test: true, sample_of}` and the fields of `sample_of`'s data, with sample ids" });

/** `data` of each event type. */
export const EVENT_DATA = {
  "submission.succeeded": SucceededData,
  "submission.failed": FailedData,
  "submission.cancelled": CancelledData,
  "result.completed": ResultCompletedData,
  "run.resumed": ResumedData,
  "sweep.completed": SweepCompletedData,
  "webhook.test": TestData,
} as const satisfies Record<(typeof EVENT_TYPES)[number], z.ZodType>;

/** The body of a delivery (docs/webhooks.md#envelope). */
export const eventEnvelope = (type: keyof typeof EVENT_DATA) =>
  z.strictObject({
    event_id: z.uuid().meta({ description: "the same as X-Event-Id; the same on every attempt" }),
    event_type: z.literal(type),
    occurred_at: z.string().meta({ description: "ISO 8601 with microseconds and +00:00", examples: ["2026-05-01T12:34:56.123000+00:00"] }),
    data: EVENT_DATA[type],
  });

// ---- Every view is held to its schema at compile time. ----
/** True when `View` is assignable to the schema's input and has no field the schema lacks. */
type Conforms<View, Schema extends z.ZodType> = [View] extends [z.input<Schema>]
  ? [NoExtra<View, z.input<Schema>>] extends [true]
    ? true
    : false
  : false;
/** No object of `V`, at any depth (arrays and nullable members included), has a field `S` lacks there. */
type NoExtra<V, S> = V extends readonly (infer A)[]
  ? S extends readonly (infer B)[]
    ? NoExtra<A, B>
    : true
  : V extends object
    ? S extends readonly unknown[]
      ? true
      : S extends object
        ? [Exclude<keyof V, keyof S>] extends [never]
          ? { [K in keyof V]-?: K extends keyof S ? NoExtra<V[K], S[K]> : false }[keyof V]
          : false
        : true
    : true;
type Holds<T extends true> = T;
export type ViewsConform = [
  Holds<Conforms<ReturnType<typeof submissionAccepted>, typeof SubmissionAccepted>>,
  Holds<Conforms<ReturnType<typeof submissionListItem>, typeof SubmissionListItem>>,
  Holds<Conforms<ReturnType<typeof submissionFull>, typeof Submission>>,
  Holds<Conforms<ReturnType<typeof resultListItem>, typeof ResultListItem>>,
  Holds<Conforms<ReturnType<typeof resultFull>, typeof Result>>,
  Holds<Conforms<ReturnType<typeof accountView>, typeof AdminAccount>>,
  Holds<Conforms<Omit<ReturnType<typeof webhookView>, "secret">, typeof Webhook>>,
  Holds<Conforms<ReturnType<typeof deliveryView>, typeof Delivery>>,
  Holds<Conforms<ReturnType<typeof attemptView>, typeof DeliveryAttempt>>,
  Holds<Conforms<Awaited<ReturnType<typeof inspectDelivery>>, typeof DeliveryInspected>>,
  Holds<Conforms<FiredDelivery, typeof DeliveryQueued>>,
  Holds<Conforms<ReturnType<typeof succeededData>, typeof SucceededData>>,
  Holds<Conforms<ReturnType<typeof resultCompletedData>, typeof ResultCompletedData>>,
  Holds<Conforms<ReturnType<typeof failedData>, typeof FailedData>>,
  Holds<Conforms<ReturnType<typeof cancelledData>, typeof CancelledData>>,
  Holds<Conforms<Environment, typeof EnvironmentBody>>,
  Holds<Conforms<ReturnType<typeof sweepCompletedData>, typeof SweepCompletedData>>,
  Holds<Conforms<ReturnType<typeof sweepAccepted>, typeof SweepAccepted>>,
  Holds<Conforms<ReturnType<typeof sweepListItem>, typeof SweepListItem>>,
  Holds<Conforms<ReturnType<typeof sweepFull>, typeof Sweep>>,
];
