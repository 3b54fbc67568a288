// `npm install` runs this (postinstall): the Python virtual environment for container/ and the local
// D1 database. Safe to run again; no step needs a Cloudflare account, the internet beyond the
// package registries, or Docker.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWeb } from "./build-web.mjs";
import { makePrivate, migrateLocal, ROOT, run, SDK_PYTHON, SDK_VENV, VENV, VENV_PYTHON } from "./lib.mjs";

if (process.env.ALLELE_SKIP_SETUP === "1") process.exit(0);

/** Runs `install` when `inputs` (files) changed since its last run, recorded as their digest in `stamp`. */
function whenChanged(stamp, inputs, install) {
  const digest = createHash("sha256")
    .update(inputs.map((f) => readFileSync(f, "utf8")).join("\n"))
    .digest("hex");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return;
  install();
  writeFileSync(stamp, digest);
}

/** A Python virtual environment at `venv`, created when missing. */
function venvAt(venv, python) {
  if (!existsSync(python)) run(process.env.PYTHON ?? "python3", ["-m", "venv", venv]);
}

const pip = (python, ...args) => run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...args]);

// The GA worker's environment: its packages, and the worker package itself, editable: `python -m
// allele_worker` and the sandboxed children (`python -I -m allele_worker.child`) import it from
// container/allele_worker without any path setup.
const requirements = ["requirements.txt", "requirements-dev.txt"].map((f) => join(ROOT, "container", f));
venvAt(VENV, VENV_PYTHON);
whenChanged(join(VENV, ".requirements.sha256"), [...requirements, join(ROOT, "container", "pyproject.toml")], () => {
  console.log("setup: installing the GA worker's Python packages");
  pip(VENV_PYTHON, ...requirements.flatMap((f) => ["-r", f]));
  pip(VENV_PYTHON, "--no-deps", "--editable", join(ROOT, "container"));
});

/** A Python environment of its own for a tool, (re)installed from its pinned requirements when they change. */
function toolEnvironment(venv, python, requirements, what) {
  venvAt(venv, python);
  whenChanged(join(venv, ".requirements.sha256"), [requirements], () => {
    console.log(`setup: installing ${what}`);
    pip(python, "-r", requirements);
  });
}

// The Vilvik SDK's suite (container/sdk-tests): the published SDK, unmodified, in an environment of its own.
toolEnvironment(SDK_VENV, SDK_PYTHON, join(ROOT, "container", "sdk-tests", "requirements.txt"), "the Vilvik SDK for its test suite");
// The API fuzzer (scripts/fuzz.mjs): schemathesis, likewise.
const fuzzVenv = join(ROOT, "container", "fuzz", ".venv");
toolEnvironment(
  fuzzVenv,
  join(fuzzVenv, "bin", "python"),
  join(ROOT, "container", "fuzz", "requirements.txt"),
  "schemathesis for the API fuzz run",
);

// The TypeScript client's own tools (openapi-typescript needs TypeScript 5; the Worker is built with 7).
const client = join(ROOT, "clients", "typescript");
whenChanged(join(client, "node_modules", ".package-lock.sha256"), [join(client, "package-lock.json")], () => {
  console.log("setup: installing the TypeScript client's build tools (clients/typescript)");
  run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: client });
});

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
    run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { DEBIAN_FRONTEND: "noninteractive" },
    });
  } else {
    console.warn(
      `setup: no Chromium at ${CHROMIUM}: the browser tests need it (Debian: sudo apt-get install chromium; or set CHROMIUM_PATH)`,
    );
  }
}

console.log("setup: building the Worker's static assets (dist/web: the dashboard's code, /docs's Swagger UI)");
await buildWeb({ quiet: true });

mkdirSync(join(ROOT, ".wrangler"), { recursive: true, mode: 0o700 });
console.log("setup: applying D1 migrations to the local database");
migrateLocal();
makePrivate(join(ROOT, ".wrangler")); // local D1/R2/DO files and state: this user's only
console.log("setup: done — `npm start` runs Allele locally, `npm test` runs every test");
