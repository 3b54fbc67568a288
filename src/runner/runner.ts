// Which runner the Worker uses: a Cloudflare Container per run (production) or the GA worker process at
// RUNNER_URL (npm start, tests). Both speak runner/protocol.ts.
import { config } from "../config";
import type { Bindings } from "../env";
import { ContainerRunner } from "./container-runner";
import { LocalRunner } from "./local-runner";
import type { Runner } from "./protocol";

export type { IsolationFlags, IsolationObservation } from "./isolation";
export type { RunMetrics, Runner, RunnerHealth, StartRequest } from "./protocol";
export { RunnerUnavailable, WorkerFull } from "./protocol";

export function getRunner(env: Bindings): Runner {
  const url = config(env).runnerUrl;
  if (url) return new LocalRunner(url);
  return new ContainerRunner(env.GA_RUNNER, env.GA_RUNNER_WIDE, env.FILES);
}
