// `npm run check`: every static check (scripts/checks.mjs), side by side, one line each; fails when any
// fails. Installs the test tools the checks run with on first use (scripts/install.mjs).
import { checkExtras, runChecks } from "./checks.mjs";
import { installExtras } from "./install.mjs";

const started = performance.now();
installExtras(checkExtras());
const results = await runChecks();
const failed = results.filter((r) => !r.ok).length;
const took = ((performance.now() - started) / 1000).toFixed(1);
console.log(`\n${results.length - failed} checks passed, ${failed} failed (${took} s)`);
process.exit(failed === 0 ? 0 : 1);
