// Starts the real service for the end-to-end tests: the Python GA worker process and `wrangler dev`
// (local D1, Queues, R2, Durable Objects) on free ports, with a fresh local state directory.
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "../helpers/worker-process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error -- plain ESM helpers shared with `npm start`
import { migrateLocal, ROOT, startWorkerProcess, waitFor, WRANGLER_ENV, wranglerBin } from "../../scripts/lib.mjs";

export const ADMIN_TOKEN = "e2e-admin-token-0123456789";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
  }
}

export default async function setup(project: TestProject) {
  const state = mkdtempSync(join(tmpdir(), "allele-e2e-"));
  const port = await freePort();
  const workerPort = await freePort();
  const children: ChildProcess[] = [];
  const log: string[] = [];
  const keep = (child: ChildProcess, name: string) => {
    children.push(child);
    for (const stream of [child.stdout, child.stderr]) stream?.on("data", (d: Buffer) => log.push(`[${name}] ${d}`));
  };

  migrateLocal(state);
  keep(startWorkerProcess(workerPort, "pipe"), "ga-worker");
  keep(
    spawn(
      wranglerBin,
      [
        "dev",
        "--port", String(port),
        "--ip", "127.0.0.1",
        "--persist-to", state,
        "--test-scheduled",
        "--show-interactive-dev-session=false",
        "--var", `ADMIN_TOKEN:${ADMIN_TOKEN}`,
        "--var", "RUN_TOKEN_SECRET:e2e-run-token-secret",
        "--var", `RUNNER_URL:http://127.0.0.1:${workerPort}`,
        "--var", `REPORT_BASE_URL:http://127.0.0.1:${port}`,
        "--var", "WEBHOOK_ALLOW_PRIVATE:true",
        // The tests poll: the per-minute limits are checked in the "limits" project instead.
        "--var", "RATE_LIMIT_KEY:1000000",
        "--var", "RATE_LIMIT_IP:1000000",
      ],
      { cwd: ROOT, env: { ...process.env, ...WRANGLER_ENV }, stdio: ["ignore", "pipe", "pipe"] },
    ),
    "wrangler",
  );

  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`http://127.0.0.1:${workerPort}/health`, 60_000);
    await waitFor(`${baseUrl}/api/v1/health`, 120_000);
  } catch (err) {
    console.error(log.join(""));
    throw err;
  }
  project.provide("baseUrl", baseUrl);
  project.provide("adminToken", ADMIN_TOKEN);

  return async () => {
    for (const child of children) child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    if (process.env.ALLELE_E2E_LOG) console.log(log.join(""));
    rmSync(state, { recursive: true, force: true });
  };
}
