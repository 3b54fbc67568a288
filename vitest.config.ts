import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
// @ts-expect-error -- a plain ESM script, without types
import { buildWeb } from "./scripts/build-web.mjs";

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const migrations = await readD1Migrations(root("./migrations"));
// The dashboard's assets (wrangler.toml [assets]) exist before wrangler dev or miniflare reads the config.
await buildWeb({ quiet: true });

// The tests drive the queue consumers themselves, so queue state is deterministic: they run on a copy
// of wrangler.toml without [[queues.consumers]] (miniflare's `queueConsumers` option does not remove
// the ones the config declares). Paths in the copy are made absolute.
const testConfig = root("./.wrangler/wrangler.test.toml");
mkdirSync(root("./.wrangler"), { recursive: true });
writeFileSync(
  testConfig,
  readFileSync(root("./wrangler.toml"), "utf8")
    .replace(/\[\[queues\.consumers\]\][^[]*/g, "")
    .replace('main = "src/index.ts"', `main = "${root("./src/index.ts")}"`)
    .replaceAll('image = "./container/Dockerfile"', `image = "${root("./container/Dockerfile")}"`)
    .replace('migrations_dir = "migrations"', `migrations_dir = "${root("./migrations")}"`)
    .replace('directory = "./dist/web"', `directory = "${root("./dist/web")}"`),
);

/**
 * Files of the workerd projects that run alone, each in a Worker of its own (fresh D1, R2, Durable
 * Objects and modules): they run the cron's reconciliation (reconcileRuns, the scheduled handler), which
 * takes the first 100 stale runs of the whole database and whose tests count what it re-enqueued or
 * compare a run it resumed, so runs left by files before them could crowd theirs out or be counted with them. Every other file shares
 * its project's Worker with the files before it (isolate: false; each test makes accounts of its own,
 * and what scans the whole database — the platform queue count, requeueDueDeliveries — is compared with
 * itself before and after or looked up by id): that saves a Worker start and the load of the module
 * graph per file, most of the projects' time (docs/testing.md).
 */
const WORKERD_ALONE = ["test/http/submissions.errors.test.ts", "test/workers/run-lifecycle.test.ts", "test/workers/container-stop.test.ts"];

/** Files at once in the workerd projects: the machine's CPUs, at least 2 (their tests wait on I/O much of the time). */
const WORKERS = Math.max(2, availableParallelism());

/** A project inside workerd: the Worker through its HTTP interface, with real D1, R2, Queues and Durable Objects. */
function workersProject(
  name: string,
  files: { include: string[]; exclude?: string[]; isolate: boolean },
  vars: Record<string, string> = {},
) {
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: testConfig },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token-0123456789",
            RUN_TOKEN_SECRET: "test-run-token-secret",
            // The real GA worker process, started by the project's global setup.
            RUNNER_URL: inject<string>("runnerUrl"),
            // Nothing listens there: tests deliver the worker's reports themselves.
            REPORT_BASE_URL: "http://127.0.0.1:9",
            ...vars,
          },
        },
      })),
    ],
    test: {
      name,
      include: files.include,
      exclude: files.exclude ?? [],
      isolate: files.isolate,
      setupFiles: ["./test/helpers/apply-migrations.ts", "./test/helpers/file-boundary.ts"],
      globalSetup: ["./test/helpers/worker-process.ts"],
      maxWorkers: WORKERS,
      // Files run side by side, and beside pytest in `npm run test:fast`: a test that makes a hundred
      // requests can take more than vitest's default 5 s on a busy machine. (A timeout catches a hang;
      // no test asserts a duration.)
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
}

/** The end-to-end tests: Node, against `wrangler dev` and the real Python worker process of the global setup. */
function e2eProject(name: string, files: { include: string[]; exclude?: string[] }, order: number, parallel: boolean) {
  return {
    test: {
      name,
      include: files.include,
      exclude: files.exclude ?? [],
      environment: "node",
      globalSetup: ["./test/e2e/global-setup.ts"],
      testTimeout: 120_000,
      hookTimeout: 120_000,
      sequence: { groupOrder: order },
      ...(parallel ? { maxWorkers: 2 } : { fileParallelism: false }),
    },
  };
}

/**
 * End-to-end files that need the whole service or the machine to themselves, run one at a time after the
 * others: the benchmarks' smoke run (its own services, timed), `npm start` (its own service), the fuzz run
 * (hundreds of requests), the Vilvik SDK's suite (several runs live at once), the files whose runs take
 * every run place (the dashboard's queued → running run, parallel_processing runs with a worker per
 * place), and /docs in a browser (Swagger UI's page renders for seconds on this machine; beside another
 * browser its clicks ran past the 20 s a person waits), and the data files' (it counts the GA worker's
 * downloads, to which another file's runs would add). Every other e2e file makes its own accounts and
 * only shares the service: two run at once.
 */
const E2E_ALONE = [
  "bench",
  "start",
  "fuzz",
  "sdk",
  "dashboard-runs",
  "dashboard-parallel",
  "runs",
  "docs-browser",
  "data-files",
  "durable",
].map((f) => `test/e2e/${f}.test.ts`);

export default defineConfig({
  test: {
    maxWorkers: WORKERS,
    projects: [
      // Pure modules under plain Node: no Worker, no service (test/unit).
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node", isolate: false } },
      // Most suites make many requests with one key: the per-minute limits are raised there, and the
      // limits suite checks them at the interface's values (60 per key, 120 per user, 60 per IP).
      workersProject(
        "workers",
        { include: ["test/http/**/*.test.ts", "test/workers/**/*.test.ts"], exclude: WORKERD_ALONE, isolate: false },
        { RATE_LIMIT_KEY: "1000000", RATE_LIMIT_IP: "1000000", RUN_CAPACITY: "1000" },
      ),
      workersProject(
        "workers-alone",
        { include: WORKERD_ALONE, isolate: true },
        { RATE_LIMIT_KEY: "1000000", RATE_LIMIT_IP: "1000000", RUN_CAPACITY: "1000" },
      ),
      // One place on the whole platform: runs wait their turn, round-robin across accounts.
      workersProject(
        "dispatch",
        { include: ["test/dispatch/**/*.test.ts"], isolate: true },
        { RATE_LIMIT_KEY: "1000000", RATE_LIMIT_IP: "1000000", RUN_CAPACITY: "1" },
      ),
      workersProject("limits", { include: ["test/limits/**/*.test.ts"], isolate: true }, { RUN_CAPACITY: "1000" }),
      // Outside: `wrangler dev` and the real Python worker process, driven over HTTP; after the projects
      // above (sequence.groupOrder), files that share the service two at a time, then those that need it alone.
      e2eProject("e2e", { include: ["test/e2e/**/*.test.ts"], exclude: E2E_ALONE }, 1, true),
      e2eProject("e2e-alone", { include: E2E_ALONE }, 2, false),
    ],
  },
});
