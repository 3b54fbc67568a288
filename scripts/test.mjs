// `npm test`: the full suite — every static check (scripts/checks.mjs), the Python worker's tests, then
// every vitest project (node-only units, inside workerd, and end to end against `wrangler dev` + the real
// GA worker, the browser tests in Chromium among them). Installs the test extras it needs on first use
// (scripts/install.mjs). Prints one "N passed, N failed, N skipped" line (each static check counts as one
// test; so do the Vilvik SDK suite's tests and the fuzz run's operations, from their JUnit reports).

import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runChecks } from "./checks.mjs";
import { EXTRAS, installExtras } from "./install.mjs";
import { ROOT, VENV_PYTHON, WRANGLER_ENV } from "./lib.mjs";
import { Tally } from "./test-lib.mjs";

const out = join(ROOT, ".wrangler", "test-reports");
mkdirSync(out, { recursive: true });
const step = (title, cmd, args, cwd = ROOT) => {
  console.log(`\n== ${title}`);
  return spawnSync(cmd, args, { cwd, stdio: "inherit", env: { ...process.env, ...WRANGLER_ENV } }).status ?? 1;
};

installExtras(Object.keys(EXTRAS)); // every test extra: the checks' tools, the SDK, schemathesis, Chromium
const tally = new Tally();

console.log("\n== static checks (npm run check)");
for (const { ok } of await runChecks()) tally.add(ok);

const pyReport = join(out, "pytest.xml");
rmSync(pyReport, { force: true });
const py = step("Python worker (pytest)", VENV_PYTHON, ["-m", "pytest", "container/tests", "-q", `--junitxml=${pyReport}`]);
if (!tally.addJunit(pyReport)) tally.add(false);

const vitestReport = join(out, "vitest.json");
rmSync(join(out, "sdk.xml"), { force: true }); // written afresh by this run's e2e project
rmSync(join(out, "schemathesis.xml"), { force: true });
const vt = step("vitest (unit, inside workerd, end to end)", join(ROOT, "node_modules", ".bin", "vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${vitestReport}`,
]);
tally.addVitest(vitestReport, vt);

// The Vilvik SDK's own suite, run by test/e2e/sdk.test.ts: each of its tests counts (its wrapper too;
// when the e2e project did not run it, that project's failure is counted there).
tally.addJunit(join(out, "sdk.xml"));
// The bounded schemathesis run (test/e2e/fuzz.test.ts): each operation it fuzzed counts.
tally.addJunit(join(out, "schemathesis.xml"));

console.log(`\n${tally.line}`);
process.exit(tally.failed === 0 && (py === 0 || py === 5) && vt === 0 ? 0 : 1);
