// The one interface through which the Worker reaches the Python GA worker (docs/runner-protocol.md),
// and how its answers are read; implemented by container-runner.ts and local-runner.ts.
import type { GaParameters } from "../model/parameters";
import type { IsolationFlags } from "./isolation";

export interface RunMetrics {
  cpu_seconds_used: number;
  peak_memory_mb: number;
  execution_duration_ms: number;
  hit_time_cap: boolean;
  hit_memory_cap: boolean;
}

/** A data file of the run (docs/runner-protocol.md): the GA worker fetches it from `url` with the run's token, caches it by content, and binds it read-only at /data/<name>. */
export interface StartDataFile {
  name: string;
  sha256: string;
  size_bytes: number;
  url: string;
}

export interface StartRequest {
  run_id: string;
  submission_id: string;
  /** The GA parameters but `data_files`, whose files ride in `data_files` below. */
  params: Omit<GaParameters, "data_files">;
  /** The run's data files, in the order its parameters name them; [] when it has none. */
  data_files: StartDataFile[];
  /** Who the bytes belong to: the GA worker keeps one account's cached files apart from another's. */
  data_scope: string;
  initial_population: number[][] | null;
  /** A continue's start population, fetched by the GA worker with the run's token (streamed from R2). */
  initial_population_url: string | null;
  caps: { time_seconds: number; memory_mb: number };
  report: { url: string; token: string };
  /** A durable run's checkpoints: every interval_seconds of run time, each at most max_bytes. */
  checkpoint: { interval_seconds: number; max_bytes: number } | null;
  /** The run's last checkpoint to resume from (fetched by the GA worker with the run's token), else null. */
  checkpoint_url: string | null;
}

/** What stopping a run needs: its id, and its parameters (which worker class a wide run went to). */
export type RunToStop = { id: string; parameters: GaParameters };

export interface Runner {
  /**
   * Starts the run; "already" when the worker already has this run id (a duplicate message). `attempt`
   * is the claim's (the run's `attempts`): a container instance whose stop loses this segment hands back
   * this attempt only (src/runner/segment.ts).
   */
  start(request: StartRequest, attempt: number): Promise<"started" | "already">;
  /** Stops the run's process at once and returns its usage, or null when the worker has no such live run. */
  cancel(run: RunToStop): Promise<RunMetrics | null>;
  /** Whether the worker answers now, with its sandbox measures (docs/api.md#health). */
  health(): Promise<RunnerHealth>;
}

/**
 * "ok" with the standing worker's `isolation` (local), "down" with why, or "on_demand" (a container per
 * run starts when needed: production) with the latest flags an instance reported once started, when, and
 * of which container class — none before any instance has started.
 */
export type RunnerHealth =
  | { status: "ok"; isolation?: IsolationFlags }
  | { status: "on_demand"; isolation?: IsolationFlags; observed_at?: string; class?: string }
  | { status: "down"; reason: string };

export class RunnerUnavailable extends Error {}

/** The worker has no free place for the run (503 at_capacity): a matter of waiting, never a failure. */
export class WorkerFull extends Error {}

/** Shared by both implementations: interpret the worker's answers. */
export async function readStart(res: Response): Promise<"started" | "already"> {
  if (res.status === 202) return "started";
  if (res.status === 200) return "already";
  if (res.status === 503) {
    const code = ((await res.json().catch(() => null)) as { error?: { code?: string } } | null)?.error?.code;
    if (code === "at_capacity") throw new WorkerFull("the worker has no free place");
    throw new RunnerUnavailable("worker answered 503 to start");
  }
  throw new RunnerUnavailable(`worker answered ${res.status} to start: ${(await res.text()).slice(0, 500)}`);
}

export async function readCancel(res: Response): Promise<RunMetrics | null> {
  if (res.status === 404) return null;
  if (!res.ok) throw new RunnerUnavailable(`worker answered ${res.status} to cancel`);
  const body = (await res.json()) as { metrics?: RunMetrics };
  return body.metrics ?? null;
}
