// `npm test`: the full suite. First, side by side (scripts/test-parts.mjs): every static check, the
// Python worker's tests (the slow ones too) and the vitest projects that need no service (node-only
// units, inside workerd). Then, with the machine to themselves, the end-to-end projects: `wrangler dev`
// and the real GA worker, the browser tests in Chromium among them (their runs are real work, and
// several of their files time what a person would wait for). Installs the test extras it needs on first
// use (scripts/install.mjs). Prints one "N passed, N failed, N skipped" line (each static check counts
// as one test; so do the Vilvik SDK suite's tests and the fuzz run's operations, from their JUnit reports).

import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EXTRAS, installExtras } from "./install.mjs";
import { ROOT, WRANGLER_ENV } from "./lib.mjs";
import { Tally } from "./test-lib.mjs";
import { runSideBySide } from "./test-parts.mjs";

const started = performance.now();
const out = join(ROOT, ".wrangler", "test-reports");
mkdirSync(out, { recursive: true });
installExtras(Object.keys(EXTRAS)); // every test extra: the checks' tools, the SDK, schemathesis, Chromium
const tally = new Tally();

console.log("\n== static checks, the Python worker (pytest) and vitest's projects without a service, side by side");
await runSideBySide(tally, { slow: true, out, prefix: "full" });

console.log("\n== vitest end to end (wrangler dev + the real GA worker; the browser tests)");
const vitestReport = join(out, "vitest.json");
rmSync(vitestReport, { force: true });
rmSync(join(out, "sdk.xml"), { force: true }); // written afresh by this run's e2e project
rmSync(join(out, "schemathesis.xml"), { force: true });
const vt =
  spawnSync(
    join(ROOT, "node_modules", ".bin", "vitest"),
    ["run", "--project", "e2e", "--project", "e2e-alone", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestReport}`],
    { cwd: ROOT, stdio: "inherit", env: { ...process.env, ...WRANGLER_ENV } },
  ).status ?? 1;
tally.addVitest(vitestReport, vt);

// The Vilvik SDK's own suite, run by test/e2e/sdk.test.ts: each of its tests counts (its wrapper too;
// when the e2e project did not run it, that project's failure is counted there).
tally.addJunit(join(out, "sdk.xml"));
// The bounded schemathesis run (test/e2e/fuzz.test.ts): each operation it fuzzed counts.
tally.addJunit(join(out, "schemathesis.xml"));

const took = (performance.now() - started) / 1000;
console.log(`\n${tally.line} (${(took / 60).toFixed(1)} min)`);
process.exit(tally.failed === 0 ? 0 : 1);
