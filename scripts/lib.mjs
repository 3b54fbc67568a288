// Helpers shared by the project's scripts (setup, start, admin, test, deploy check).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const VENV = join(ROOT, "container", ".venv");
export const VENV_PYTHON = join(VENV, "bin", "python");
export const LOCAL_STATE = join(ROOT, ".wrangler", "allele-local.json");

/** Keeps wrangler and miniflare offline and quiet. */
export const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

export function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { cwd: ROOT, stdio: "inherit", ...opts, env: { ...process.env, ...WRANGLER_ENV, ...opts.env } });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited with ${res.status ?? res.signal}`);
  }
  return res;
}

export const wranglerBin = join(ROOT, "node_modules", ".bin", "wrangler");

/** The local D1 database gets every migration (idempotent). */
export function migrateLocal(persistTo) {
  const extra = persistTo ? ["--persist-to", persistTo] : [];
  run(wranglerBin, ["d1", "migrations", "apply", "DB", "--local", ...extra], { stdio: ["ignore", "ignore", "inherit"] });
}

/** The GA worker's environment: nothing of ours beyond what it needs (no tokens, no keys). */
export function workerEnv(port) {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", HOST: "127.0.0.1", PORT: String(port), PYTHONUNBUFFERED: "1" };
}

export function startWorkerProcess(port, stdio = "inherit") {
  if (!existsSync(VENV_PYTHON)) throw new Error("container/.venv is missing: run `npm install` first");
  return spawn(VENV_PYTHON, [join(ROOT, "container", "serve.py")], { cwd: ROOT, env: workerEnv(port), stdio });
}

export async function waitFor(url, timeoutMs = 30_000, isReady = (res) => res.ok) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (await isReady(res)) return;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become ready in ${timeoutMs} ms${lastError ? `: ${lastError}` : ""}`);
}

export function readJson(path, fallback) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return fallback;
  }
}

export function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}
