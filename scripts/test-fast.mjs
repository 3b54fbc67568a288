// `npm run test:fast`: the loop to run after a change — every static check (scripts/checks.mjs), the
// node-only unit tests, the projects inside workerd, and the Python worker's tests not marked slow, side
// by side (scripts/test-parts.mjs). No end-to-end tests and no browser: `npm test` is the full gate.
// Installs the test tools it needs on first use (scripts/install.mjs). Prints a line per part as it
// ends, the output of a failed part, and one "N passed, N failed, N skipped" line.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { checkExtras } from "./checks.mjs";
import { installExtras } from "./install.mjs";
import { ROOT } from "./lib.mjs";
import { Tally } from "./test-lib.mjs";
import { runSideBySide } from "./test-parts.mjs";

const started = performance.now();
const out = join(ROOT, ".wrangler", "test-reports");
mkdirSync(out, { recursive: true });
installExtras(checkExtras());

const tally = new Tally();
await runSideBySide(tally, { slow: false, out, prefix: "fast" });
const took = (performance.now() - started) / 1000;
console.log(`\n${tally.line} (${took.toFixed(1)} s)`);
process.exit(tally.failed === 0 ? 0 : 1);
