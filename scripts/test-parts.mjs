// The parts `npm test` and `npm run test:fast` both run side by side: every static check (one at a
// time: they take a CPU between them), the vitest projects that need no service (node-only units and
// the projects inside workerd), and the Python worker's tests (`slow` ones too for `npm test`). The
// machine's CPUs are shared between them; their tests wait on I/O much of the time. Prints a line per
// part as it ends, and the output of a failed part.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runChecks } from "./checks.mjs";
import { ROOT, VENV_PYTHON } from "./lib.mjs";
import { runCaptured } from "./test-lib.mjs";

/** The vitest projects that need no service (vitest.config.ts): all but the end-to-end ones. */
export const FAST_PROJECTS = ["unit", "workers", "workers-alone", "limits", "dispatch"];

const line = (ok, name, seconds, what) =>
  console.log(`${ok ? "✓" : "✗"} ${name.padEnd(11)}  ${`${seconds.toFixed(1)} s`.padStart(7)}  ${what}`);

/** Runs the parts into `tally`; `slow`: the Python tests marked slow too. Reports go to `out/<prefix>-*`. */
export async function runSideBySide(tally, { slow, out, prefix }) {
  const vitestReport = join(out, `${prefix}-vitest.json`);
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

  const pyReport = join(out, `${prefix}-pytest.xml`);
  rmSync(pyReport, { force: true });
  const selection = slow ? [] : ["-m", "not slow"];
  const pytest = runCaptured(VENV_PYTHON, ["-m", "pytest", "container/tests", "-q", ...selection, `--junitxml=${pyReport}`]).then((r) => {
    const before = { ...tally };
    if (!tally.addJunit(pyReport)) tally.add(false);
    // 5: no test collected (every one marked slow) is not a failure.
    const ok = (r.code === 0 || r.code === 5) && tally.failed === before.failed;
    line(
      ok,
      "pytest",
      r.seconds,
      `container/tests${slow ? "" : ' -m "not slow"'}: ${tally.passed - before.passed} passed, ${tally.failed - before.failed} failed`,
    );
    if (!ok) {
      console.log(r.output);
      if (tally.failed === before.failed) tally.add(false);
    }
  });

  const checks = runChecks({ concurrency: 1 }).then((results) => {
    for (const { ok } of results) tally.add(ok);
  });

  await Promise.all([vitest, pytest, checks]);
}
