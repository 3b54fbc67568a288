// Readiness, as GET /api/v1/health reports it: the database, the files bucket and the GA worker (a
// standing one: locally; in production each run starts its own container) with its sandbox measures
// (docs/api.md#health). Cheap: one query, one object lookup, one small request (in production: the
// latest isolation observation, one small object per container class), each with a short time limit.

import type { Bindings } from "../env";
import { getRunner, type RunnerHealth } from "../runner/runner";
import { probeDatabase } from "../storage/db";

export type Check = { status: "ok" } | { status: "down"; reason: string };

export interface Readiness {
  ready: boolean;
  /** The runner's check carries the GA worker's sandbox measures (`isolation`) when they are known. */
  checks: { database: Check; files: Check; runner: RunnerHealth };
}

const within = async (ms: number, work: () => Promise<unknown>, what: string): Promise<Check> => {
  try {
    await Promise.race([work(), new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms))]);
    return { status: "ok" };
  } catch (err) {
    return { status: "down", reason: `${what}: ${err instanceof Error && err.message === "timeout" ? "no answer in time" : "error"}` };
  }
};

export async function readiness(env: Bindings): Promise<Readiness> {
  const [database, files, runner] = await Promise.all([
    within(2_000, () => probeDatabase(env.DB), "database"),
    within(2_000, () => env.FILES.head("health/probe"), "files bucket"),
    getRunner(env).health(),
  ]);
  return { ready: [database, files, runner].every((c) => c.status !== "down"), checks: { database, files, runner } };
}

/** The GA worker's check alone, with its sandbox measures: what the dashboard's account page shows. */
export function runnerHealth(env: Bindings): Promise<RunnerHealth> {
  return getRunner(env).health();
}
