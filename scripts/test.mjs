// `npm test`: type checking, the offline deploy dry run, the Python worker's tests, then every vitest
// project (inside workerd, and end to end against `wrangler dev` + the real GA worker).
// Prints one "N passed, N failed" line (the dry run counts as one test).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ROOT, VENV_PYTHON, WRANGLER_ENV } from "./lib.mjs";

const out = join(ROOT, ".wrangler", "test-reports");
mkdirSync(out, { recursive: true });
const step = (title, cmd, args, cwd = ROOT) => {
  console.log(`\n== ${title}`);
  return spawnSync(cmd, args, { cwd, stdio: "inherit", env: { ...process.env, ...WRANGLER_ENV } }).status ?? 1;
};

let passed = 0;
let failed = 0;
let skipped = 0;

const tscBin = join(ROOT, "node_modules", ".bin", "tsc");
const tsc =
  step("type check (Worker)", tscBin, ["--noEmit"]) ||
  step("type check (Node side)", tscBin, ["--noEmit", "-p", "tsconfig.node.json"]) ||
  step("type check (dashboard's browser code)", tscBin, ["--noEmit", "-p", "web/browser/tsconfig.json"]);
if (tsc !== 0) failed++;

const deploy = step("deploy dry run (wrangler deploy --dry-run)", process.execPath, [join(ROOT, "scripts", "deploy-check.mjs")]);
if (deploy === 0) passed++;
else failed++;

// The import graph of src/ runs one way (scripts/check-imports.mjs; docs/architecture.md).
if (step("import graph of src/ (no cycle, no upward import)", process.execPath, [join(ROOT, "scripts", "check-imports.mjs")]) === 0)
  passed++;
else failed++;

// The TypeScript client: its types are what docs/openapi.json gives, and it builds (scripts/client.mjs).
if (
  step("TypeScript client (types from docs/openapi.json, build)", process.execPath, [join(ROOT, "scripts", "client.mjs"), "--check"]) === 0
)
  passed++;
else failed++;

// The worker's static checks (configured in container/pyproject.toml): each is one test in the summary line.
for (const [title, args] of [
  ["Python lint (ruff)", ["-m", "ruff", "check", ".", "../bench"]],
  ["Python types (mypy)", ["-m", "mypy"]],
]) {
  if (step(title, VENV_PYTHON, args, join(ROOT, "container")) === 0) passed++;
  else failed++;
}

/** Adds a pytest JUnit report's counts to the summary; false when there is no readable report. */
function countJunit(path) {
  let xml;
  try {
    xml = readFileSync(path, "utf8");
  } catch {
    return false;
  }
  const attr = (name) => Number(new RegExp(`<testsuite[^>]*\\b${name}="(\\d+)"`).exec(xml)?.[1] ?? 0);
  const bad = attr("failures") + attr("errors");
  passed += attr("tests") - bad - attr("skipped");
  failed += bad;
  skipped += attr("skipped");
  return true;
}

const pyReport = join(out, "pytest.xml");
const py = step("Python worker (pytest)", VENV_PYTHON, ["-m", "pytest", "container/tests", "-q", `--junitxml=${pyReport}`]);
if (!countJunit(pyReport)) failed++;

const vitestReport = join(out, "vitest.json");
rmSync(join(out, "sdk.xml"), { force: true }); // written afresh by this run's e2e project
rmSync(join(out, "schemathesis.xml"), { force: true });
const vt = step("vitest (workers + e2e)", join(ROOT, "node_modules", ".bin", "vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${vitestReport}`,
]);
try {
  const report = JSON.parse(readFileSync(vitestReport, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  if (vt !== 0 && report.numFailedTests === 0) failed++; // a run error outside any test
} catch {
  failed++;
}

// The Vilvik SDK's own suite, run by test/e2e/sdk.test.ts: each of its tests counts (its wrapper too;
// when the e2e project did not run it, that project's failure is counted there).
countJunit(join(out, "sdk.xml"));
// The bounded schemathesis run (test/e2e/fuzz.test.ts): each operation it fuzzed counts.
countJunit(join(out, "schemathesis.xml"));

console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 && tsc === 0 && deploy === 0 && (py === 0 || py === 5) && vt === 0 ? 0 : 1);
