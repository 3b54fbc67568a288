// Readiness, as GET /api/v1/health reports it: the database, the files bucket and the GA worker (a
// standing one: locally; in production each run starts its own container). Cheap: one query, one
// object lookup, one small request, each with a short time limit.

import type { Bindings } from "../env";
import { getRunner } from "../runner/runner";
import { probeDatabase } from "../storage/db";

export type Check = { status: "ok" | "on_demand" } | { status: "down"; reason: string };

export interface Readiness {
  ready: boolean;
  checks: { database: Check; files: Check; runner: Check };
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
