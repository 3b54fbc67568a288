// The GA worker's sandbox measures (its GET /health's `isolation`, docs/runner-protocol.md), read
// defensively, and — in production, where no standing worker exists to ask — the latest observation of
// each container class, kept as one small R2 object per class beside the health probe (no D1 table).
// GET /api/v1/health shows it (docs/api.md#health; docs/deploy.md#isolation-per-measure).

/** What the GA worker's `/health` says about its sandbox (container/allele_worker/wire.py `IsolationHealth`). */
export interface IsolationFlags {
  user: boolean;
  network: boolean;
  pid_namespace: boolean;
  minimal_root: boolean;
  syscall_filter: boolean;
  /** "v1" or "v2" when runs get a control group of their own, else null. */
  cgroup: string | null;
  memory_tree: boolean;
  cpu_tree: boolean;
  pids: boolean;
  rlimits: string[];
  notes: string[];
}

/** An instance's flags as one of them reported them once started, with when and which container class. */
export interface IsolationObservation {
  isolation: IsolationFlags;
  observed_at: string;
  class: string;
}

const FLAGS = ["user", "network", "pid_namespace", "minimal_root", "syscall_filter", "memory_tree", "cpu_tree", "pids"] as const;

const strings = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value.map((v) => v.slice(0, 500)).slice(0, 50) : null;

/** The flags from a `/health` body's `isolation`, or null when it is not one (nothing is made up). */
export function readIsolation(value: unknown): IsolationFlags | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!FLAGS.every((name) => typeof v[name] === "boolean")) return null;
  if (v.cgroup !== null && typeof v.cgroup !== "string") return null;
  const rlimits = strings(v.rlimits);
  const notes = strings(v.notes);
  if (!rlimits || !notes) return null;
  return {
    user: v.user as boolean,
    network: v.network as boolean,
    pid_namespace: v.pid_namespace as boolean,
    minimal_root: v.minimal_root as boolean,
    syscall_filter: v.syscall_filter as boolean,
    cgroup: (v.cgroup as string | null)?.slice(0, 20) ?? null,
    memory_tree: v.memory_tree as boolean,
    cpu_tree: v.cpu_tree as boolean,
    pids: v.pids as boolean,
    rlimits,
    notes,
  };
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
