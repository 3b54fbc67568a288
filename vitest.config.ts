import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const migrations = await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url)));

export default defineConfig({
  test: {
    projects: [
      {
        // Inside workerd: the Worker through its HTTP interface, with real D1, R2, Queues and Durable Objects.
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
              },
              // Consumers are driven by the tests themselves (test/workers), so queue state is deterministic.
              queueConsumers: {},
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/http/**/*.test.ts", "test/workers/**/*.test.ts"],
          setupFiles: ["./test/helpers/apply-migrations.ts"],
          globalSetup: ["./test/helpers/worker-process.ts"],
        },
      },
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
