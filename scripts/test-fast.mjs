// `npm run test:fast`: the loop to run after a change — every static check (scripts/checks.mjs), the
// node-only unit tests, the projects inside workerd, and the Python worker's tests not marked slow, side
// by side (the machine's CPUs are shared between them; their tests wait on I/O much of the time). No
// end-to-end tests and no browser: `npm test` is the full gate. Installs the test tools it needs on first
// use (scripts/install.mjs). Prints a line per part as it ends, the output of a failed part, and one
// "N passed, N failed, N skipped" line.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { checkExtras, runChecks } from "./checks.mjs";
import { installExtras } from "./install.mjs";
import { ROOT, VENV_PYTHON } from "./lib.mjs";
import { runCaptured, Tally } from "./test-lib.mjs";

/** The vitest projects of the fast loop (vitest.config.ts): all but the end-to-end ones. */
export const FAST_PROJECTS = ["unit", "workers", "workers-alone", "limits", "dispatch"];

const started = performance.now();
const out = join(ROOT, ".wrangler", "test-reports");
mkdirSync(out, { recursive: true });
installExtras(checkExtras());

const tally = new Tally();
const line = (ok, name, seconds, what) =>
  console.log(`${ok ? "✓" : "✗"} ${name.padEnd(11)}  ${`${seconds.toFixed(1)} s`.padStart(7)}  ${what}`);

const vitestReport = join(out, "fast-vitest.json");
rmSync(vitestReport, { force: true });
const vitest = runCaptured(join(ROOT, "node_modules", ".bin", "vitest"), [
  "run",
  ...FAST_PROJECTS.flatMap((p) => ["--project", p]),
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${vitestReport}`,
]).then((r) => {
  const before = { ...tally };
  tally.addVitest(vitestReport, r.code);
  const ok = r.code === 0;
  line(
    ok,
    "vitest",
    r.seconds,
    `${FAST_PROJECTS.join(", ")}: ${tally.passed - before.passed} passed, ${tally.failed - before.failed} failed`,
  );
  if (!ok) console.log(r.output);
});

const pyReport = join(out, "fast-pytest.xml");
rmSync(pyReport, { force: true });
const pytest = runCaptured(VENV_PYTHON, ["-m", "pytest", "container/tests", "-q", "-m", "not slow", `--junitxml=${pyReport}`]).then((r) => {
  const before = { ...tally };
  if (!tally.addJunit(pyReport)) tally.add(false);
  // 5: no test collected (every one marked slow) is not a failure.
  const ok = (r.code === 0 || r.code === 5) && tally.failed === before.failed;
  line(
    ok,
    "pytest",
    r.seconds,
    `container/tests -m "not slow": ${tally.passed - before.passed} passed, ${tally.failed - before.failed} failed`,
  );
  if (!ok) {
    console.log(r.output);
    if (tally.failed === before.failed) tally.add(false);
  }
});

// The checks take a CPU between them while vitest and pytest run: one at a time.
const checks = runChecks({ concurrency: 1 }).then((results) => {
  for (const { ok } of results) tally.add(ok);
});

await Promise.all([vitest, pytest, checks]);
const took = (performance.now() - started) / 1000;
console.log(`\n${tally.line} (${took.toFixed(1)} s)`);
process.exit(tally.failed === 0 ? 0 : 1);
