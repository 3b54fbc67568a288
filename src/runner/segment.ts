// What a GaRunner instance (one per run, reused by each of the run's segments) knows of its run, in its
// Durable Object's storage, and what its container's stop signal does with it: a segment (one claim of
// the run, numbered by the run's `attempts`) whose container stops while it lives is handed back at
// once — a `lost` message on the runs queue, which the consumer turns into the silent-run sweep's own
// resume of that one run (docs/architecture.md#durable-runs-issue-28). GaRunner delegates here, so the
// handling runs in workerd's tests without a container runtime (docs/testing.md).
import type { RunMessage } from "../env";

/** The part of a Durable Object's storage this needs. */
export type SegmentStorage = Pick<DurableObjectStorage, "get" | "put" | "delete">;

/** The run the instance is for (also read by its activity check). */
export const RUN_KEY = "run_id";
/** The live segment: the claim's attempt the container runs; absent once it ended on purpose or was handed back. */
export const SEGMENT_KEY = "segment";

/** The run's segment as the instance records it. */
export class RunSegment {
  constructor(private readonly storage: SegmentStorage) {}

  /** A claim's start begins: any segment before it is over (the run was claimed again, so D1 already moved on). */
  async begin(runId: string): Promise<void> {
    await this.storage.put(RUN_KEY, runId);
    await this.storage.delete(SEGMENT_KEY);
  }

  /** The container is up and is given the run: from now on, its stop loses this segment. */
  async live(attempt: number): Promise<void> {
    await this.storage.put(SEGMENT_KEY, { attempt });
  }

  /** The segment ended on purpose (a cancel; the worker done with the run): its container's stop loses nothing. */
  async end(): Promise<void> {
    await this.storage.delete(SEGMENT_KEY);
  }

  /**
   * The container stopped (or failed): a live segment is handed back as lost, once — the message first,
   * then the record cleared, so a failed send is tried again with the next stop event, and a second stop
   * finds nothing. True when a message was sent. The consumer resumes the run only if it still is
   * `running` with this attempt: a run that ended, was cancelled or deleted, was handed back by a drain,
   * or claimed again meanwhile is left alone.
   */
  async stopped(queue: Queue<RunMessage>): Promise<boolean> {
    const runId = await this.storage.get<string>(RUN_KEY);
    const segment = await this.storage.get<{ attempt: number }>(SEGMENT_KEY);
    if (!runId || !segment) return false;
    await queue.send({ run_id: runId, lost: { attempt: segment.attempt } });
    await this.storage.delete(SEGMENT_KEY);
    return true;
  }
}
