// Global setup of the "workers" project: the real GA worker process, which the Worker under test
// reaches by RUNNER_URL. (Its reports go nowhere: inside the test pool the Worker has no listening
// port, so tests deliver reports themselves through the internal endpoints.) Also the GA worker's own
// list of GA parameters, which the tests hold to the Worker's (test/workers/parameters.test.ts).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error -- a plain ESM script, without types
import { freePort, ROOT, startWorkerProcess, VENV_PYTHON, waitFor } from "../../scripts/lib.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    runnerUrl: string;
    /** The GA worker's parameter names, as JSON: {"plain": [...], "code": [...]} (allele_worker/wire.py). */
    workerParameters: string;
  }
}

function workerParameters(): string {
  const python = spawnSync(
    VENV_PYTHON,
    [
      "-c",
      "import json; from allele_worker.wire import CODE_FIELDS, OPERATOR_FIELDS, PLAIN_PARAMS; print(json.dumps({'plain': PLAIN_PARAMS, 'code': CODE_FIELDS, 'operators': OPERATOR_FIELDS}))",
    ],
    { cwd: join(ROOT, "container"), encoding: "utf8" },
  );
  if (python.status !== 0) throw new Error(`cannot read the GA worker's parameters: ${python.stderr}`);
  return python.stdout;
}

export default async function setup(project: TestProject) {
  const port = await freePort();
  // Places enough for every suite's runs at once; the dispatch suite's worker has one place.
  const child = startWorkerProcess(port, "ignore", project.name === "dispatch" ? 1 : 64);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, 60_000);
  project.provide("runnerUrl", url);
  project.provide("workerParameters", workerParameters());
  return () => {
    child.kill("SIGTERM");
  };
}
