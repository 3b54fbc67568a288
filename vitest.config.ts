import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const migrations = await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url)));

/** A project inside workerd: the Worker through its HTTP interface, with real D1, R2, Queues and Durable Objects. */
function workersProject(name: string, include: string[], vars: Record<string, string> = {}) {
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
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
          // Consumers are driven by the tests themselves, so queue state is deterministic.
          queueConsumers: {},
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
      }),
      workersProject("limits", ["test/limits/**/*.test.ts"]),
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
