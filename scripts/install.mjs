// What the project installs besides its Node packages, in one place: what running the service needs
// (`npm install` → scripts/setup.mjs: the GA worker's environment) and the extras only testing needs,
// which the test commands install on first use (`npm test`, `npm run test:fast`, `npm run check`, and
// the single-suite commands). Every step runs again only when its inputs changed (whenChanged: a digest
// of the input files kept in a stamp file), so a second run installs nothing.
//
//   node scripts/install.mjs <extra>…      installs the named extras now (`all`: every one)

import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT, run, SDK_PYTHON, SDK_VENV, VENV, VENV_PYTHON } from "./lib.mjs";

/** Runs `install` when `inputs` (files) changed since its last run, recorded as their digest in `stamp`. */
export function whenChanged(stamp, inputs, install) {
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

const CONTAINER = join(ROOT, "container");

/**
 * A run's sandbox user (an unprivileged uid) loads Python and the worker package: readable by all, even
 * when this checkout was made under a private umask. (Nothing secret lives there.)
 */
const shareWithRuns = () => run("chmod", ["-R", "a+rX", VENV, join(CONTAINER, "allele_worker")]);

/**
 * The GA worker's environment (container/.venv) with what it runs on (container/requirements.txt) and
 * the worker package itself, editable: `python -m allele_worker` and the sandboxed children (`python -I
 * -m allele_worker.child`) import it from container/allele_worker without any path setup.
 */
export function installWorkerRuntime() {
  venvAt(VENV, VENV_PYTHON);
  const requirements = join(CONTAINER, "requirements.txt");
  whenChanged(join(VENV, ".requirements.sha256"), [requirements, join(CONTAINER, "pyproject.toml")], () => {
    console.log("setup: installing the GA worker's Python packages (container/requirements.txt)");
    pip(VENV_PYTHON, "-r", requirements);
    pip(VENV_PYTHON, "--no-deps", "--editable", CONTAINER);
  });
  shareWithRuns();
}

/** A Python environment of its own for a tool, (re)installed from its pinned requirements when they change. */
function toolEnvironment(venv, python, requirements, what) {
  venvAt(venv, python);
  whenChanged(join(venv, ".requirements.sha256"), [requirements], () => {
    console.log(`test extras: installing ${what}`);
    pip(python, "-r", requirements);
  });
}

const FUZZ_VENV = join(CONTAINER, "fuzz", ".venv");
const CLIENT = join(ROOT, "clients", "typescript");
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * The extras only testing needs, by name. Each says what it installs the first time (and again when its
 * pinned inputs change); otherwise it is silent.
 */
export const EXTRAS = {
  // ruff, mypy and pytest (container/requirements-dev.txt), into the GA worker's environment.
  "python-dev": () => {
    if (!existsSync(VENV_PYTHON)) installWorkerRuntime();
    const requirements = join(CONTAINER, "requirements-dev.txt");
    whenChanged(join(VENV, ".requirements-dev.sha256"), [requirements], () => {
      console.log("test extras: installing the GA worker's test tools: ruff, mypy, pytest (container/requirements-dev.txt)");
      pip(VENV_PYTHON, "-r", requirements);
      shareWithRuns();
    });
  },
  // The TypeScript client's own tools (openapi-typescript needs TypeScript 5; the Worker is built with 7).
  "client-tools": () =>
    whenChanged(join(CLIENT, "node_modules", ".package-lock.sha256"), [join(CLIENT, "package-lock.json")], () => {
      console.log("test extras: installing the TypeScript client's build tools (clients/typescript: openapi-typescript, TypeScript 5)");
      run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: CLIENT });
    }),
  // The Vilvik SDK's suite (container/sdk-tests): the published SDK, unmodified, in an environment of its own.
  sdk: () =>
    toolEnvironment(
      SDK_VENV,
      SDK_PYTHON,
      join(CONTAINER, "sdk-tests", "requirements.txt"),
      "the Vilvik SDK for its test suite (container/sdk-tests/.venv)",
    ),
  // The API fuzzer (scripts/fuzz.mjs): schemathesis, likewise.
  fuzz: () =>
    toolEnvironment(
      FUZZ_VENV,
      join(FUZZ_VENV, "bin", "python"),
      join(CONTAINER, "fuzz", "requirements.txt"),
      "schemathesis for the API fuzz run (container/fuzz/.venv)",
    ),
  // The dashboard's browser tests drive Debian's Chromium through playwright-core (which never downloads
  // a browser). A machine without one gets it as root with apt-get; otherwise this says how.
  chromium: () => {
    if (existsSync(CHROMIUM) || process.env.ALLELE_SKIP_BROWSER === "1") return;
    if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
      console.log("test extras: installing Chromium for the browser tests (apt-get install chromium)");
      run("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"] });
      run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], {
        stdio: ["ignore", "ignore", "inherit"],
        env: { DEBIAN_FRONTEND: "noninteractive" },
      });
    } else {
      console.warn(
        `test extras: no Chromium at ${CHROMIUM}: the browser tests need it (Debian: sudo apt-get install chromium; or set CHROMIUM_PATH)`,
      );
    }
  },
};

/** Installs the named extras (each only when missing or out of date). */
export function installExtras(names) {
  for (const name of names) {
    const install = EXTRAS[name];
    if (!install) throw new Error(`unknown test extra "${name}" (known: ${Object.keys(EXTRAS).join(", ")})`);
    install();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2);
  installExtras(names.includes("all") ? Object.keys(EXTRAS) : names);
}
