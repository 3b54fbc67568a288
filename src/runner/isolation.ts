// The GA worker's sandbox measures (its GET /health's `isolation`, docs/runner-protocol.md), read
// defensively, and — in production, where no standing worker exists to ask — the latest observation of
// each container class, kept as one small R2 object per class beside the health probe (no D1 table).
// GET /api/v1/health shows it (docs/api.md#health; docs/deploy.md#isolation-per-measure).
import { z } from "zod";

const measure = (description: string) => z.boolean().meta({ description });

/**
 * What the GA worker's `/health` says about its sandbox (container/allele_worker/wire.py `IsolationHealth`):
 * what is read from it (keys a newer worker adds are dropped) and what GET /api/v1/health documents.
 */
export const isolationFlags = z.object({
  user: measure("the run as an unprivileged uid of its own"),
  network: measure("an empty network namespace"),
  pid_namespace: measure("the run sees its own processes only"),
  minimal_root: measure("a minimal read-only root"),
  syscall_filter: measure("a seccomp filter"),
  cgroup: z.union([z.string(), z.null()]).meta({ description: '"v1" or "v2": a control group per run; null without' }),
  memory_tree: measure("memory measured and capped over the run's whole process tree"),
  cpu_tree: measure("CPU billed over the run's whole process tree"),
  pids: measure("the run's process count capped"),
  rlimits: z.array(z.string()).meta({ description: "the per-process caps set (cpu, as, fsize, nofile, nproc, core)" }),
  notes: z.array(z.string()).meta({ description: "why a measure is missing" }),
});
export type IsolationFlags = z.infer<typeof isolationFlags>;

/** An instance's flags as one of them reported them once started, with when and which container class. */
export interface IsolationObservation {
  isolation: IsolationFlags;
  observed_at: string;
  class: string;
}

const bounded = (values: string[]) => values.slice(0, 50).map((v) => v.slice(0, 500));

/** The flags from a `/health` body's `isolation`, or null when it is not one (nothing is made up). */
export function readIsolation(value: unknown): IsolationFlags | null {
  const read = isolationFlags.safeParse(value);
  if (!read.success) return null;
  const flags = read.data;
  return { ...flags, cgroup: flags.cgroup?.slice(0, 20) ?? null, rlimits: bounded(flags.rlimits), notes: bounded(flags.notes) };
}

/** Where a container class's latest observation is kept (the files bucket, beside `health/probe`). */
export const isolationKey = (containerClass: string) => `health/isolation/${containerClass}.json`;

/** Keeps `flags` as the class's latest observation (replacing the one before: an R2 put is atomic). */
export async function recordIsolation(files: R2Bucket, containerClass: string, flags: IsolationFlags, now = new Date()): Promise<void> {
  const observation: IsolationObservation = { isolation: flags, observed_at: now.toISOString(), class: containerClass };
  await files.put(isolationKey(containerClass), JSON.stringify(observation), { httpMetadata: { contentType: "application/json" } });
}

/** The most recent observation among the classes', or null before any instance of them has started. */
export async function latestIsolation(files: R2Bucket, classes: string[]): Promise<IsolationObservation | null> {
  const seen = await Promise.all(
    classes.map(async (containerClass) => {
      const object = await files.get(isolationKey(containerClass));
      if (!object) return null;
      const body = (await object.json().catch(() => null)) as Partial<IsolationObservation> | null;
      const isolation = readIsolation(body?.isolation);
      return isolation && typeof body?.observed_at === "string"
        ? { isolation, observed_at: body.observed_at, class: containerClass }
        : null;
    }),
  );
  return seen.reduce<IsolationObservation | null>((latest, o) => (o && (!latest || o.observed_at > latest.observed_at) ? o : latest), null);
}

/**
 * Asks a started instance for its flags (`health`: its GET /health) and keeps them as its class's latest
 * observation. Never throws: a missed observation leaves the one before (false).
 */
export async function observeIsolation(health: () => Promise<Response>, files: R2Bucket, containerClass: string): Promise<boolean> {
  try {
    const res = await health();
    const isolation = res.ok ? readIsolation(((await res.json()) as { isolation?: unknown } | null)?.isolation) : null;
    if (!isolation) return false;
    await recordIsolation(files, containerClass, isolation);
    return true;
  } catch (err) {
    console.error("container: the isolation flags were not observed", err);
    return false;
  }
}
