// Global setup of the "workers" project: the real GA worker process, which the Worker under test
// reaches by RUNNER_URL. (Its reports go nowhere: inside the test pool the Worker has no listening
// port, so tests deliver reports themselves through the internal endpoints.)
import type { TestProject } from "vitest/node";
// @ts-expect-error -- plain ESM helpers shared with `npm start`
import { freePort, startWorkerProcess, waitFor } from "../../scripts/lib.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    runnerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const port = await freePort();
  const child = startWorkerProcess(port, "ignore");
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, 60_000);
  project.provide("runnerUrl", url);
  return () => {
    child.kill("SIGTERM");
  };
}
