// `npm install` runs this (postinstall): the Python virtual environment for container/ and the local
// D1 database. Safe to run again; no step needs a Cloudflare account, the internet beyond the
// package registries, or Docker.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { makePrivate, migrateLocal, ROOT, run, SDK_PYTHON, SDK_VENV, VENV, VENV_PYTHON } from "./lib.mjs";
import { buildWeb } from "./build-web.mjs";
import { writeDocsAssets } from "./docs-assets.mjs";

// The /docs page's Swagger UI files, served by the Worker itself (src/http/docs/): part of the Worker's
// build, so written even when the rest of the setup is skipped.
if (writeDocsAssets()) console.log("setup: wrote the /docs page's assets (src/http/docs/assets.generated.ts)");

if (process.env.ALLELE_SKIP_SETUP === "1") process.exit(0);

const requirements = ["requirements.txt", "requirements-dev.txt"].map((f) => join(ROOT, "container", f));
const pyproject = join(ROOT, "container", "pyproject.toml");
const stamp = join(VENV, ".requirements.sha256");
const digest = createHash("sha256").update([...requirements, pyproject].map((f) => readFileSync(f, "utf8")).join("\n")).digest("hex");

if (!existsSync(VENV_PYTHON)) {
  console.log("setup: creating container/.venv");
  run(process.env.PYTHON ?? "python3", ["-m", "venv", VENV]);
}
if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== digest) {
  console.log("setup: installing the GA worker's Python packages");
  const pip = [VENV_PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
  run(pip[0], [...pip.slice(1), ...requirements.flatMap((f) => ["-r", f])]);
  // The worker package itself, editable: `python -m allele_worker` and the sandboxed children
  // (`python -I -m allele_worker.child`) import it from container/allele_worker without any path setup.
  run(pip[0], [...pip.slice(1), "--no-deps", "--editable", join(ROOT, "container")]);
  writeFileSync(stamp, digest);
}

/** A Python environment of its own for a tool, (re)installed from its pinned requirements when they change. */
function toolEnvironment(venv, python, requirements, what) {
  const stamp = join(venv, ".requirements.sha256");
  const digest = createHash("sha256").update(readFileSync(requirements, "utf8")).digest("hex");
  if (!existsSync(python)) run(process.env.PYTHON ?? "python3", ["-m", "venv", venv]);
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== digest) {
    console.log(`setup: installing ${what}`);
    run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements]);
    writeFileSync(stamp, digest);
  }
}

// The Vilvik SDK's suite (container/sdk-tests): the published SDK, unmodified, in an environment of its own.
toolEnvironment(SDK_VENV, SDK_PYTHON, join(ROOT, "container", "sdk-tests", "requirements.txt"), "the Vilvik SDK for its test suite");
// The API fuzzer (scripts/fuzz.mjs): schemathesis, likewise.
const fuzzVenv = join(ROOT, "container", "fuzz", ".venv");
toolEnvironment(fuzzVenv, join(fuzzVenv, "bin", "python"), join(ROOT, "container", "fuzz", "requirements.txt"), "schemathesis for the API fuzz run");

// The TypeScript client's own tools (openapi-typescript needs TypeScript 5; the Worker is built with 7).
const client = join(ROOT, "clients", "typescript");
const clientStamp = join(client, "node_modules", ".package-lock.sha256");
const clientDigest = createHash("sha256").update(readFileSync(join(client, "package-lock.json"), "utf8")).digest("hex");
if (!existsSync(clientStamp) || readFileSync(clientStamp, "utf8") !== clientDigest) {
  console.log("setup: installing the TypeScript client's build tools (clients/typescript)");
  run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: client });
  writeFileSync(clientStamp, clientDigest);
}

// A run's sandbox user (an unprivileged uid) loads Python and the worker package: readable by all, even
// when this checkout was made under a private umask. (Nothing secret lives there.)
run("chmod", ["-R", "a+rX", VENV, join(ROOT, "container", "allele_worker")]);

// The dashboard's browser tests drive Debian's Chromium through playwright-core (which never downloads a
// browser). A fresh machine has none: as root with apt-get, setup installs it; otherwise it says how.
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
if (!existsSync(CHROMIUM) && process.env.ALLELE_SKIP_BROWSER !== "1") {
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log("setup: installing Chromium for the dashboard's browser tests (apt-get install chromium)");
    run("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"] });
    run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], { stdio: ["ignore", "ignore", "inherit"], env: { DEBIAN_FRONTEND: "noninteractive" } });
  } else {
    console.warn(`setup: no Chromium at ${CHROMIUM}: the browser tests need it (Debian: sudo apt-get install chromium; or set CHROMIUM_PATH)`);
  }
}

console.log("setup: building the dashboard's assets (dist/web)");
await buildWeb({ quiet: true });

mkdirSync(join(ROOT, ".wrangler"), { recursive: true, mode: 0o700 });
console.log("setup: applying D1 migrations to the local database");
migrateLocal();
makePrivate(join(ROOT, ".wrangler")); // local D1/R2/DO files and state: this user's only
console.log("setup: done — `npm start` runs Allele locally, `npm test` runs every test");
