// Starts the real service for the end-to-end tests: the Python GA worker process and `wrangler dev`
// (local D1, Queues, R2, Durable Objects) on free ports, with a fresh local state directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error -- a plain ESM script, without types
import { freePort, startLocalService } from "../../scripts/lib.mjs";

export const ADMIN_TOKEN = "e2e-admin-token-0123456789";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    /** The GA worker process's own URL (its /health: the data cache's counts). */
    workerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const state = mkdtempSync(join(tmpdir(), "allele-e2e-"));
  const workerPort = await freePort();
  const service = await startLocalService({
    port: await freePort(),
    workerPort,
    persistTo: state,
    quiet: true,
    vars: {
      ADMIN_TOKEN,
      RUN_TOKEN_SECRET: "e2e-run-token-secret",
      WEBHOOK_ALLOW_PRIVATE: "true",
      // A failed delivery is failed for good within seconds, so the dashboard's re-send can be tried.
      WEBHOOK_RETRY_DELAYS: "1,1,1,1,1",
      // The tests poll: the per-minute limits are checked in the "limits" project instead.
      RATE_LIMIT_KEY: "1000000",
      RATE_LIMIT_IP: "1000000",
    },
  });
  project.provide("baseUrl", service.baseUrl);
  project.provide("adminToken", ADMIN_TOKEN);
  project.provide("workerUrl", `http://127.0.0.1:${workerPort}`);

  return async () => {
    await service.stop();
    if (process.env.ALLELE_E2E_LOG) console.log(service.log.join(""));
    rmSync(state, { recursive: true, force: true });
  };
}
