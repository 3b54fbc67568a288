// The D1 schema, the single source of the SQL migrations in migrations/ (drizzle-kit generate).
// Timestamps are ISO 8601 UTC strings with milliseconds ("2026-05-01T12:34:56.123Z"): they sort as text.
// Money is integer micro-units of currency. JSON columns hold text parsed by drizzle's json mode, each typed
// by what it holds (src/model/: the GA parameters, the warnings, the scopes, ...); the types change no SQL.
import { sql } from "drizzle-orm";
import { foreignKey, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Overrides, Plan, Scope } from "../model/accounts";
import type { DeliveryStatus, EventData, EventOrigin, EventType } from "../model/events";
import type { GaParameters } from "../model/parameters";
import type { ConstraintViolation, PopulationPoint, RunKind, RunStatus, RunWarning, SubmissionSource, TrailPoint } from "../model/runs";
import type { Combination, Grid, StoredSweepStatus } from "../model/sweeps";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  plan: text("plan").$type<Plan>().notNull(),
  overrides: text("overrides", { mode: "json" }).$type<Overrides>().notNull().default(sql`'{}'`),
  freeCreditsMicro: integer("free_credits_micro").notNull().default(0),
  paidCreditsMicro: integer("paid_credits_micro").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    name: text("name").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<Scope[]>().notNull(),
    expiresAt: text("expires_at"),
    revokedAt: text("revoked_at"),
    lastUsedAt: text("last_used_at"),
    createdAt: text("created_at").notNull(),
    /**
     * The key a dashboard session was signed in with when it made this key (the account page, a device
     * login it approved); null for a key of the operator, or of a session of a sign-in link. Revoking a key
     * revokes the keys made from it, and theirs (docs/dashboard.md#account).
     */
    parentKeyId: text("parent_key_id"),
  },
  (t) => [
    uniqueIndex("api_keys_prefix_uq").on(t.prefix),
    index("api_keys_account_idx").on(t.accountId),
    index("api_keys_parent_idx").on(t.parentKeyId),
  ],
);

export const submissions = sqliteTable(
  "submissions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // Lower-cased copy of name for the case-insensitive name_contains filter.
    nameLower: text("name_lower").notNull(),
    source: text("source").$type<SubmissionSource>().notNull(),
    submissionType: text("submission_type").notNull().default("new"),
    // Free text of the submitter's (≤ 2,000 characters; docs/api.md#submission-row).
    description: text("description").notNull().default(""),
    // Mirrors the latest run's status (the status of a submission is its latest run's).
    status: text("status").$type<RunStatus>().notNull(),
    parameters: text("parameters", { mode: "json" }).$type<GaParameters>().notNull(),
    // The R2 key of the start population it was created with (`initial_population`), which each of its
    // runs but a continue starts from; null when PyGAD draws it.
    initialPopulationKey: text("initial_population_key"),
    latestRunId: text("latest_run_id").notNull(),
    runCount: integer("run_count").notNull().default(1),
    creditsChargedMicro: integer("credits_charged_micro").notNull().default(0),
    // A child of a sweep (docs/api.md#sweeps): the sweep, and the child's place in it (seed-major order,
    // model/sweeps.ts childAt). Not a foreign key: a sweep's deletion removes its children itself.
    sweepId: text("sweep_id"),
    sweepIndex: integer("sweep_index"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("submissions_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("submissions_account_name_idx").on(t.accountId, t.name, t.id),
    index("submissions_account_status_idx").on(t.accountId, t.status, t.id),
    index("submissions_account_source_created_idx").on(t.accountId, t.source, t.createdAt, t.id),
    index("submissions_sweep_idx").on(t.sweepId, t.sweepIndex),
  ],
);

export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    submissionId: text("submission_id")
      .notNull()
      .references(() => submissions.id, { onDelete: "cascade" }),
    accountId: text("account_id").notNull(),
    kind: text("kind").$type<RunKind>().notNull(),
    parentResultId: text("parent_result_id"),
    // The R2 key of its start population when its submission was created with one (not a continue's,
    // which is its parent result's population.json).
    startPopulationKey: text("start_population_key"),
    status: text("status").$type<RunStatus>().notNull(),
    // Effective GA parameters of this run (the submission's, with reexecute/continue overrides).
    parameters: text("parameters", { mode: "json" }).$type<GaParameters>().notNull(),
    paidWithCredits: integer("paid_with_credits", { mode: "boolean" }).notNull().default(true),
    // How many times the run was handed to a worker (a lost worker re-enqueues it once).
    attempts: integer("attempts").notNull().default(0),
    // A sweep's child queued but not admitted yet: it waits for one of its account's concurrency slots
    // (docs/api.md#states). Not on the platform queue, never on the runs queue, until its admission
    // clears the flag (domain/sweep-progress.ts).
    awaitingSlot: integer("awaiting_slot", { mode: "boolean" }).notNull().default(false),
    queuedAt: text("queued_at").notNull(),
    enqueuedAt: text("enqueued_at").notNull(),
    startedAt: text("started_at"),
    heartbeatAt: text("heartbeat_at"),
    finishedAt: text("finished_at"),
    generationsCompleted: integer("generations_completed"),
    bestSolutionFitness: real("best_solution_fitness"),
    executionDurationMs: integer("execution_duration_ms"),
    cpuSecondsUsed: real("cpu_seconds_used"),
    peakMemoryMb: integer("peak_memory_mb"),
    hitTimeCap: integer("hit_time_cap", { mode: "boolean" }).notNull().default(false),
    hitMemoryCap: integer("hit_memory_cap", { mode: "boolean" }).notNull().default(false),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    output: text("output"),
    engine: text("engine"),
    // The live progress reports so far, [[generations_completed, best_solution_fitness], ...] (one per
    // report that moved; the dashboard's growing chart), with several objectives a third item: the
    // best value of each of the first few. Bounded by the run's time cap.
    progressTrail: text("progress_trail", { mode: "json" }).$type<TrailPoint[]>(),
    // PyGAD's and the user's Python warnings, deduplicated with counts (docs/api.md#warnings).
    warnings: text("warnings", { mode: "json" }).$type<RunWarning[]>(),
    creditsChargedMicro: integer("credits_charged_micro"),
    // Durable runs (docs/architecture.md#durable-runs-issue-28): the generation of the run's last
    // checkpoint (R2 checkpoints/{id}), when it was stored, and what the worker that took it had
    // measured of its segment by then; the earlier segments' usage (billed with the run's end); and
    // when the run was resumed (ISO times, one per resume).
    checkpointGeneration: integer("checkpoint_generation"),
    checkpointAt: text("checkpoint_at"),
    checkpointCpuSeconds: real("checkpoint_cpu_seconds"),
    checkpointWallMs: integer("checkpoint_wall_ms"),
    checkpointPeakMb: integer("checkpoint_peak_mb"),
    priorCpuSeconds: real("prior_cpu_seconds").notNull().default(0),
    priorWallMs: integer("prior_wall_ms").notNull().default(0),
    priorPeakMb: integer("prior_peak_mb").notNull().default(0),
    resumes: text("resumes", { mode: "json" }).$type<string[]>(),
    // Set by the one statement that ends the run (domain/transitions.ts); later statements of that
    // batch apply only where it is theirs.
    terminalToken: text("terminal_token"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("runs_submission_idx").on(t.submissionId, t.createdAt),
    index("runs_status_queued_idx").on(t.status, t.enqueuedAt),
    index("runs_status_heartbeat_idx").on(t.status, t.heartbeatAt),
    index("runs_awaiting_slot_idx").on(t.awaitingSlot, t.status, t.accountId),
  ],
);

/**
 * Parameter sweeps (docs/api.md#sweeps): a base job, a grid and a number of seeds, made into one child
 * submission per combination × seed (submissions.sweep_id). `base` holds the job as the children share
 * it (code included, random_seed left out); `combinations` the grid's combinations in order.
 */
export const sweeps = sqliteTable(
  "sweeps",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    source: text("source").$type<"api" | "web">().notNull(),
    status: text("status").$type<StoredSweepStatus>().notNull(),
    paidWithCredits: integer("paid_with_credits", { mode: "boolean" }).notNull().default(true),
    base: text("base", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    grid: text("grid", { mode: "json" }).$type<Grid>().notNull(),
    combinations: text("combinations", { mode: "json" }).$type<Combination[]>().notNull(),
    seeds: integer("seeds").notNull(),
    // The first seed: base.random_seed when given, else derived from the id (model/sweeps.ts seedOf).
    seedBase: integer("seed_base").notNull(),
    seedGiven: integer("seed_given", { mode: "boolean" }).notNull(),
    children: integer("children").notNull(),
    // The last refusal that left a child waiting ({code, message}), for the sweep's answer.
    waitingOn: text("waiting_on", { mode: "json" }).$type<{ code: string; message: string }>(),
    cancelRequestedAt: text("cancel_requested_at"),
    // Set by the one statement that ends the sweep: its event is written only where it is this one's.
    endToken: text("end_token"),
    endedAt: text("ended_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("sweeps_account_created_idx").on(t.accountId, t.createdAt, t.id), index("sweeps_status_idx").on(t.status)],
);

export const results = sqliteTable(
  "results",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    // Not a foreign key: results outlive a deleted submission (docs/api.md#submissions-runs-results).
    submissionId: text("submission_id").notNull(),
    runId: text("run_id").notNull(),
    name: text("name").notNull(),
    isShared: integer("is_shared", { mode: "boolean" }).notNull().default(false),
    bestSolution: text("best_solution", { mode: "json" }).$type<number[]>().notNull(),
    bestSolutionFitness: real("best_solution_fitness"),
    bestSolutionGeneration: integer("best_solution_generation"),
    // PyGAD's history: per generation, the best solution's fitness (one objective: a number; several: its
    // objective values).
    bestSolutionsFitness: text("best_solutions_fitness", { mode: "json" }).$type<(number | null | number[])[]>().notNull(),
    // Several objectives: per generation, each objective's maximum over the population; null for one
    // objective and for imports (docs/api.md#multi-objective).
    objectiveMaxima: text("objective_maxima", { mode: "json" }).$type<number[][]>(),
    // The population's best, mean, median and worst fitness per generation (bounded: docs/api.md#results);
    // null for imports and for results made before it was kept.
    populationHistory: text("population_history", { mode: "json" }).$type<PopulationPoint[]>(),
    generationsCompleted: integer("generations_completed").notNull(),
    stoppedReason: text("stopped_reason").notNull(),
    parameters: text("parameters", { mode: "json" }).$type<GaParameters>().notNull(),
    // The engine path that ran (docs/engine.md); null for results made before it was kept here.
    engine: text("engine"),
    warnings: text("warnings", { mode: "json" }).$type<RunWarning[]>().notNull().default(sql`'[]'`),
    // Multi-objective runs (docs/api.md#multi-objective): best_solution_fitness is NULL in the row (no one
    // number ranks a front: it sorts as the lowest); the API shows best_solution_objectives in its place.
    numObjectives: integer("num_objectives").notNull().default(1),
    bestSolutionObjectives: text("best_solution_objectives", { mode: "json" }).$type<number[]>(),
    paretoFrontSize: integer("pareto_front_size"),
    // Genes of the best solution its gene_constraint refuses; NULL when the job gave no gene_constraint.
    constraintViolations: text("constraint_violations", { mode: "json" }).$type<ConstraintViolation[]>(),
    // When the run that made it was resumed after a lost worker (ISO times; docs/architecture.md#durable-runs-issue-28).
    resumes: text("resumes", { mode: "json" }).$type<string[]>(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("results_run_uq").on(t.runId),
    index("results_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("results_account_fitness_idx").on(t.accountId, t.bestSolutionFitness, t.id),
    index("results_account_submission_created_idx").on(t.accountId, t.submissionId, t.createdAt, t.id),
    index("results_account_shared_created_idx").on(t.accountId, t.isShared, t.createdAt, t.id),
  ],
);

export const resultFiles = sqliteTable(
  "result_files",
  {
    resultId: text("result_id")
      .notNull()
      .references(() => results.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    r2Key: text("r2_key").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.resultId, t.name] })],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<EventType[]>().notNull(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    description: text("description").notNull().default(""),
    secret: text("secret").notNull(),
    lastDeliveryStatus: text("last_delivery_status").notNull().default(""),
    lastDeliveryAt: text("last_delivery_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhooks_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);

export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(), // UUID v4, the X-Event-Id
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).$type<EventData>().notNull(),
    occurredAt: text("occurred_at").notNull(), // ISO 8601 with microseconds and offset
    submissionId: text("submission_id"),
    runId: text("run_id"),
    // What made the event: a run's end, the dashboard's Test tool, or its Replay tool (whose per-account
    // limits count these rows).
    origin: text("origin").$type<EventOrigin>().notNull().default("run"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("events_account_created_idx").on(t.accountId, t.createdAt),
    index("events_run_idx").on(t.runId),
    index("events_account_origin_created_idx").on(t.accountId, t.origin, t.createdAt),
  ],
);

export const deliveries = sqliteTable(
  "deliveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    eventType: text("event_type").notNull(),
    // The exact body bytes sent on every attempt.
    body: text("body").notNull(),
    status: text("status").$type<DeliveryStatus>().notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    enqueuedAt: text("enqueued_at"),
    lastAttemptAt: text("last_attempt_at"),
    replayOf: text("replay_of"),
    isTest: integer("is_test", { mode: "boolean" }).notNull().default(false),
    // A re-send of a failed delivery starts a new series of attempts (docs/webhooks.md#dashboard-tools):
    // the retry schedule and the 24-hour limit count from `series_started_at` and from the attempt
    // after `series_base`; attempt numbers go on from where they were.
    seriesStartedAt: text("series_started_at"),
    seriesBase: integer("series_base").notNull().default(0),
    resendCount: integer("resend_count").notNull().default(0),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("deliveries_status_next_idx").on(t.status, t.nextAttemptAt),
    index("deliveries_webhook_created_idx").on(t.webhookId, t.createdAt),
    uniqueIndex("deliveries_event_webhook_uq").on(t.eventId, t.webhookId),
  ],
);

export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => deliveries.id, { onDelete: "cascade" }),
    attemptNo: integer("attempt_no").notNull(),
    requestUrl: text("request_url").notNull(),
    requestHeaders: text("request_headers", { mode: "json" }).$type<Record<string, string>>().notNull(),
    responseStatus: integer("response_status"),
    responseHeaders: text("response_headers", { mode: "json" }).$type<Record<string, string>>(),
    responseBody: text("response_body"),
    durationMs: integer("duration_ms").notNull(),
    networkError: text("network_error"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("delivery_attempts_delivery_no_uq").on(t.deliveryId, t.attemptNo)],
);

export const creditLedger = sqliteTable(
  "credit_ledger",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind").$type<"run_charge" | "grant">().notNull(),
    // Not a foreign key: the charge of a deleted submission's run stays on the ledger.
    runId: text("run_id"),
    submissionId: text("submission_id"),
    amountMicro: integer("amount_micro").notNull(), // negative for a charge
    freeDeltaMicro: integer("free_delta_micro").notNull(),
    paidDeltaMicro: integer("paid_delta_micro").notNull(),
    cpuSeconds: real("cpu_seconds"),
    gbSeconds: real("gb_seconds"),
    // A run charge: how many times the run was resumed (its segments are billed in this one row).
    resumes: integer("resumes"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    // One charge per run, however many times the terminal hook runs.
    uniqueIndex("credit_ledger_run_uq").on(t.runId),
    index("credit_ledger_account_created_idx").on(t.accountId, t.createdAt),
  ],
);

/**
 * One row: how many runs are queued on the whole platform, and the cap in force. Kept exact by the
 * triggers of migrations/0001_platform_queue.sql (redefined by 0008_sweeps.sql) on `runs` (in the same transaction as each change),
 * which also refuse a new queued run once `queued` reaches `cap` — no count over `runs` per request.
 */
export const platformQueue = sqliteTable("platform_queue", {
  id: integer("id").primaryKey(),
  queued: integer("queued").notNull(),
  cap: integer("cap").notNull(),
});

/** Code uploaded apart from a submission (docs/api.md#code-uploads), referenced as `<field>_id` at creation. */
export const codeUploads = sqliteTable(
  "code_uploads",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    content: text("content").notNull(),
    contentSize: integer("content_size").notNull(),
    contentSha256: text("content_sha256").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [index("code_uploads_account_created_idx").on(t.accountId, t.createdAt, t.id)],
);

/**
 * The bytes of the account's data files (docs/api.md#data-files, docs/decisions.md#data-files): one R2
 * object per account and content (sha256), kept while a listing (`data_files`) or a submission
 * (`submission_data_files`) names it; then swept (storage/data-files.ts). `r2_key` is the key the first
 * upload of these bytes wrote (`data/<account>/<upload id>`): R2 cannot rename, and the hash is known only
 * once the bytes went through. Its sizes summed are the account's storage.
 */
export const dataBlobs = sqliteTable(
  "data_blobs",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    sha256: text("sha256").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    r2Key: text("r2_key").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.sha256] }), index("data_blobs_r2_key_idx").on(t.r2Key)],
);

/** The account's data files as it lists them (docs/api.md#data-files); deleting one leaves its bytes to the submissions naming them. */
export const dataFiles = sqliteTable(
  "data_files",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    sha256: text("sha256").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("data_files_account_created_idx").on(t.accountId, t.createdAt, t.id),
    index("data_files_account_sha_idx").on(t.accountId, t.sha256),
    foreignKey({ columns: [t.accountId, t.sha256], foreignColumns: [dataBlobs.accountId, dataBlobs.sha256] }),
  ],
);

/**
 * The data files a submission's runs read (docs/api.md#data-files): what each id of their `data_files`
 * stood for when it was admitted — a name and bytes — so reruns and continues read the same files after
 * the listing is deleted. Deleting the submission drops them (cascade), and with them the hold on the bytes.
 */
export const submissionDataFiles = sqliteTable(
  "submission_data_files",
  {
    submissionId: text("submission_id")
      .notNull()
      .references(() => submissions.id, { onDelete: "cascade" }),
    // The listing's id as the parameters name it; not a foreign key: the listing may be deleted.
    dataFileId: text("data_file_id").notNull(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull(),
    contentType: text("content_type").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    sha256: text("sha256").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.submissionId, t.dataFileId] }),
    index("submission_data_files_account_sha_idx").on(t.accountId, t.sha256),
    foreignKey({ columns: [t.accountId, t.sha256], foreignColumns: [dataBlobs.accountId, dataBlobs.sha256] }),
  ],
);

/**
 * Dashboard sessions (docs/dashboard.md#sessions): only a SHA-256 of the cookie's token is stored.
 * `key_id` is the API key a person signed in with (null for a sign-in link): the session has that key's
 * scopes and ends with it. `csrf_token` is the session's anti-CSRF token, sent back with every change.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    keyId: text("key_id"),
    scopes: text("scopes", { mode: "json" }).$type<Scope[]>().notNull(),
    csrfToken: text("csrf_token").notNull(),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("sessions_token_hash_uq").on(t.tokenHash), index("sessions_account_idx").on(t.accountId)],
);

/** One-time sign-in links an operator creates (docs/dashboard.md#sign-in): a SHA-256 of the token only. */
export const signInLinks = sqliteTable(
  "sign_in_links",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (t) => [uniqueIndex("sign_in_links_token_hash_uq").on(t.tokenHash)],
);

/**
 * RFC 8628 device authorizations (docs/dashboard.md#device-login). `device_code_hash` is a SHA-256 of
 * the device code; `user_code` is what the person types. Approval records the account, the new key's
 * name and scopes; the key itself is made when the device next polls (never stored in clear).
 */
export const deviceCodes = sqliteTable(
  "device_codes",
  {
    id: text("id").primaryKey(),
    deviceCodeHash: text("device_code_hash").notNull(),
    userCode: text("user_code").notNull(),
    status: text("status").$type<"pending" | "approved" | "denied" | "issued">().notNull(),
    accountId: text("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    keyName: text("key_name"),
    scopes: text("scopes", { mode: "json" }).$type<Scope[]>(),
    keyPrefix: text("key_prefix"),
    /** The key of the session that approved it (null: a sign-in link's session): the new key's parent. */
    parentKeyId: text("parent_key_id"),
    intervalSeconds: integer("interval_seconds").notNull(),
    lastPolledAt: text("last_polled_at"),
    clientInfo: text("client_info").notNull().default(""),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    decidedAt: text("decided_at"),
  },
  (t) => [uniqueIndex("device_codes_hash_uq").on(t.deviceCodeHash), index("device_codes_user_code_idx").on(t.userCode)],
);
