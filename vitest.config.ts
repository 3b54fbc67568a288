import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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

/** A project inside workerd: the Worker through its HTTP interface, with real D1, R2, Queues and Durable Objects. */
function workersProject(name: string, include: string[], vars: Record<string, string> = {}) {
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
      include,
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      globalSetup: ["./test/helpers/worker-process.ts"],
    },
  };
}

export default defineConfig({
  test: {
    projects: [
      // Most suites make many requests with one key: the per-minute limits are raised there, and the
      // limits suite checks them at the interface's values (60 per key, 120 per user, 60 per IP).
      workersProject("workers", ["test/http/**/*.test.ts", "test/workers/**/*.test.ts"], {
        RATE_LIMIT_KEY: "1000000",
        RATE_LIMIT_IP: "1000000",
        RUN_CAPACITY: "1000",
      }),
      // One place on the whole platform: runs wait their turn, round-robin across accounts.
      workersProject("dispatch", ["test/dispatch/**/*.test.ts"], {
        RATE_LIMIT_KEY: "1000000",
        RATE_LIMIT_IP: "1000000",
        RUN_CAPACITY: "1",
      }),
      workersProject("limits", ["test/limits/**/*.test.ts"], { RUN_CAPACITY: "1000" }),
      {
        // Outside: `wrangler dev` and the real Python worker process, driven over HTTP.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          globalSetup: ["./test/e2e/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
