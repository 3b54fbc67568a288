// The words of a submission's life, each stated once: the statuses of a run (and of a submission, which
// shows its latest run's), how a run came to be, where a submission came from, and what a run leaves
// besides its numbers (its warnings, a result's constraint violations, its live progress trail).

/** Every status of a run, in the order a run goes through them (docs/api.md#submissions-runs-results). */
export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses of a live run (and of a submission whose latest run is live). */
export const LIVE_STATUSES = ["queued", "running"] as const satisfies readonly RunStatus[];
/** The statuses of a run that has ended. */
export const ENDED_STATUSES = ["succeeded", "failed", "cancelled"] as const satisfies readonly RunStatus[];
export type EndedStatus = (typeof ENDED_STATUSES)[number];
export const isLive = (status: string): boolean => (LIVE_STATUSES as readonly string[]).includes(status);
/** Whether `text` names a run status (a list filter's words). */
export const isRunStatus = (text: string): text is RunStatus => (RUN_STATUSES as readonly string[]).includes(text);

/** How a run came to be: the first run, a rerun, a continue, or the record of a run made elsewhere (an import). */
export const RUN_KINDS = ["initial", "reexecute", "continue", "import"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** Where a submission came from: the API, the website, or a run made elsewhere and imported (POST /imports). */
export const SUBMISSION_SOURCES = ["api", "web", "import"] as const;
export type SubmissionSource = (typeof SUBMISSION_SOURCES)[number];

/** One deduplicated warning of a run: its first text and how many times it (or its like) came. */
export interface RunWarning {
  message: string;
  count: number;
}

/** A gene of a result's best solution that its gene_constraint refuses. */
export interface ConstraintViolation {
  gene: number;
  value: number | null;
}

/**
 * A progress report of a run, as its trail keeps it: [generations completed, best fitness or null], with
 * several objectives a third item, each of the first few objectives' maximum over the population, and a
 * fourth, the best solution's values of them (PyGAD's history; trails kept before migration 0007 lack it).
 * One objective: a fifth item (the third and fourth null), the population's [best, mean, median, worst]
 * fitness at that generation (trails kept before migration 0010 lack it).
 */
export type TrailPoint = [number, number | null, ((number | null)[] | null)?, ((number | null)[] | null)?, (PopulationStats | null)?];

/** The population's [best, mean, median, worst] fitness at one generation (null where not finite). */
export type PopulationStats = [number | null, number | null, number | null, number | null];

/**
 * One generation of a result's `population_history` (docs/api.md#results): the population's best
 * (maximum), mean, median and worst (minimum) fitness; with several objectives each a list of one value
 * per objective. Null where not finite.
 */
export interface PopulationPoint {
  generation: number;
  best: number | null | (number | null)[];
  mean: number | null | (number | null)[];
  median: number | null | (number | null)[];
  worst: number | null | (number | null)[];
}
