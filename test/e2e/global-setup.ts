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
  }
}

type Service = { baseUrl: string; log: string[]; stop: () => Promise<void> };
type Shared = { service: Promise<{ service: Service; state: string }>; users: number };

/**
 * One service for both end-to-end projects (e2e and e2e-alone, vitest.config.ts): each project's global
 * setup runs in vitest's main process, so they meet on globalThis; the last teardown stops it.
 */
const shared = globalThis as { __alleleE2eService?: Shared };

async function start(): Promise<{ service: Service; state: string }> {
  const state = mkdtempSync(join(tmpdir(), "allele-e2e-"));
  const service: Service = await startLocalService({
    port: await freePort(),
    workerPort: await freePort(),
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
  return { service, state };
}

export default async function setup(project: TestProject) {
  shared.__alleleE2eService ??= { service: start(), users: 0 };
  const current = shared.__alleleE2eService;
  current.users++;
  const { service, state } = await current.service;
  project.provide("baseUrl", service.baseUrl);
  project.provide("adminToken", ADMIN_TOKEN);

  return async () => {
    if (--current.users > 0) return;
    shared.__alleleE2eService = undefined;
    await service.stop();
    if (process.env.ALLELE_E2E_LOG) console.log(service.log.join(""));
    rmSync(state, { recursive: true, force: true });
  };
}
