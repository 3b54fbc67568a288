// Runner on Cloudflare Containers: one GaRunner instance (a container-backed Durable Object) per run.
import { Container } from "@cloudflare/containers";
import type { Bindings } from "../env";
import { runsQueue } from "../env";
import { type GaParameters, parallelWorkers } from "../model/parameters";
import { latestIsolation, observeIsolation } from "./isolation";
import {
  type RunMetrics,
  type Runner,
  type RunnerHealth,
  RunnerUnavailable,
  type RunToStop,
  readCancel,
  readStart,
  type StartRequest,
} from "./protocol";
import { RUN_KEY, RunSegment } from "./segment";

/** The host name the container uses to report back; routed to the Worker by the outbound handler. */
export const INTERNAL_HOST = "allele.internal";

/** The container classes (wrangler.toml [[containers]]), each keeping its latest isolation observation. */
export const CONTAINER_CLASSES = ["GaRunner", "GaRunnerWide"] as const;

export class GaRunner extends Container<Bindings> {
  /** Which container class this is, by name (the isolation observation is kept per class). */
  readonly containerClass: (typeof CONTAINER_CLASSES)[number] = "GaRunner";
  defaultPort = 8080;
  sleepAfter = "2m";
  // User code runs in here: no internet. Reports reach the Worker through the outbound handler only.
  enableInternet = false;

  // Reports reach the Worker through `outboundByHost[INTERNAL_HOST]`, which the entry point wires to the
  // app (src/index.ts): the runner does not know the HTTP layer above it.

  /** What this instance knows of its run's segment (src/runner/segment.ts). */
  private get segment(): RunSegment {
    return new RunSegment(this.ctx.storage);
  }

  /** Keep the instance while its run is alive; stop it once the run has ended. */
  override async onActivityExpired(): Promise<void> {
    const runId = await this.ctx.storage.get<string>(RUN_KEY);
    if (runId) {
      const res = await this.containerFetch(`http://container/runs/${runId}`).catch(() => null);
      const state = res?.ok ? ((await res.json()) as { state?: string }).state : undefined;
      if (state === "running") return; // renews the activity timer
      // The worker is done with the run (its end reported, or handed back by a drain): stopping loses nothing.
      if (state === "finished") await this.segment.end();
    }
    await this.stop();
  }

  /**
   * The container stopped (docs/deploy.md, "Stop signal and grace period"): a segment still live — not
   * cancelled, not finished by its worker — is handed back at once to resume from its last checkpoint,
   * the silent-run sweep's own resume, without its 60 s of silence.
   */
  override async onStop(): Promise<void> {
    await this.segment.stopped(runsQueue(this.env));
  }

  /** The container failed (the monitor's error, no stop event follows): the same as a stop for a live segment. */
  override async onError(error: unknown): Promise<unknown> {
    await this.segment.stopped(runsQueue(this.env)).catch((err) => console.error("container: a lost segment was not handed back", err));
    console.error("Container error:", error);
    throw error;
  }

  async startRun(request: StartRequest, attempt: number): Promise<"started" | "already"> {
    await this.segment.begin(request.run_id);
    await this.startAndWaitForPorts();
    await this.segment.live(attempt);
    const started = await readStart(
      await this.containerFetch("http://container/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(request),
      }),
    );
    // Its sandbox measures, kept as its class's latest observation for GET /api/v1/health
    // (docs/deploy.md#isolation-per-measure); a missed one never fails the start.
    await observeIsolation(() => this.containerFetch("http://container/health"), this.env.FILES, this.containerClass);
    return started;
  }

  async cancelRun(runId: string): Promise<RunMetrics | null> {
    // A cancel (or delete) ends the segment: the container's stop that follows resumes nothing.
    await this.segment.end();
    const state = await this.getState();
    if (state.status !== "running" && state.status !== "healthy") return null;
    const metrics = await readCancel(await this.containerFetch(`http://container/runs/${runId}/cancel`, { method: "POST" }));
    await this.destroy();
    return metrics;
  }
}

/**
 * The same worker on a 4-vCPU instance (wrangler.toml), for the runs that evaluate their fitness in
 * parallel (`parallel_processing` N > 1, at most 4 by plan): such a run takes N places, one per vCPU.
 */
export class GaRunnerWide extends GaRunner {
  override readonly containerClass = "GaRunnerWide";
}

export class ContainerRunner implements Runner {
  constructor(
    private readonly namespace: DurableObjectNamespace<GaRunner>,
    private readonly wide: DurableObjectNamespace<GaRunner>,
    private readonly files: R2Bucket,
  ) {}

  /** The class a run goes to: the wide instances for parallel fitness, else the standard ones. */
  private classFor(params: GaParameters): DurableObjectNamespace<GaRunner> {
    return parallelWorkers(params) > 1 ? this.wide : this.namespace;
  }

  async start(request: StartRequest, attempt: number): Promise<"started" | "already"> {
    try {
      return await this.classFor(request.params).getByName(request.run_id).startRun(request, attempt);
    } catch (err) {
      throw new RunnerUnavailable(`container for run ${request.run_id} did not start: ${String(err)}`);
    }
  }

  async cancel(run: RunToStop): Promise<RunMetrics | null> {
    return this.classFor(run.parameters).getByName(run.id).cancelRun(run.id);
  }

  /**
   * Each run starts its own container instance: there is no standing worker to ask. The flags are the
   * latest an instance reported once started (of either class); none before any has started.
   */
  async health(): Promise<RunnerHealth> {
    const seen = await latestIsolation(this.files, [...CONTAINER_CLASSES]).catch(() => null);
    return seen ? { status: "on_demand", ...seen } : { status: "on_demand" };
  }
}
