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

/**
 * One GA worker process per number of places, shared by the projects that ask for the same (workers,
 * workers-alone and limits: 64 places; dispatch: 1), and its parameter list read once: each project's
 * global setup runs in vitest's main process, so they meet on globalThis. The last project's teardown
 * stops the process.
 */
type SharedWorker = { url: Promise<string>; users: number; stop: () => Promise<void> };
const global = globalThis as { __alleleGaWorkers?: Map<number, SharedWorker>; __alleleGaParameters?: string };
global.__alleleGaWorkers ??= new Map();
const shared = global.__alleleGaWorkers;

function gaWorker(places: number): SharedWorker {
  let worker = shared.get(places);
  if (!worker) {
    const started = (async () => {
      const port = await freePort();
      const child = startWorkerProcess(port, "ignore", places);
      return { child, url: `http://127.0.0.1:${port}` };
    })();
    worker = {
      url: started.then(async ({ url }) => {
        await waitFor(`${url}/health`, 60_000);
        return url;
      }),
      users: 0,
      // SIGTERM drains (a run still reporting to nowhere could keep the worker for minutes), so a
      // worker not gone within a second is killed, as startLocalService stops its own.
      stop: async () => {
        const { child } = await started;
        const gone = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())));
        child.kill("SIGTERM");
        await Promise.race([gone, new Promise((r) => setTimeout(r, 1_000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      },
    };
    shared.set(places, worker);
  }
  worker.users++;
  return worker;
}

export default async function setup(project: TestProject) {
  // Places enough for every suite's runs at once; the dispatch suite's worker has one place.
  const places = project.name === "dispatch" ? 1 : 64;
  const worker = gaWorker(places);
  project.provide("runnerUrl", await worker.url);
  global.__alleleGaParameters ??= workerParameters();
  project.provide("workerParameters", global.__alleleGaParameters);
  return async () => {
    if (--worker.users > 0) return;
    shared.delete(places);
    await worker.stop();
  };
}
