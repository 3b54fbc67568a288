// Every static check, in one table: `npm run check` runs them (scripts/check.mjs), and so do `npm run
// test:fast` and `npm test`, which count each as one test. A check is a command that fails (non-zero)
// on a finding; the runner runs them side by side (one per CPU) and prints one line per check.
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { ROOT, VENV_PYTHON } from "./lib.mjs";
import { runCaptured } from "./test-lib.mjs";

const bin = (name) => join(ROOT, "node_modules", ".bin", name);
const node = (script, ...args) => [process.execPath, [join(ROOT, "scripts", script), ...args]];
const CONTAINER = join(ROOT, "container");

/**
 * name, what it checks, the command, its directory. `needs`: the test extras it runs with
 * (scripts/install.mjs).
 * Listed slowest first, so the slow ones start first.
 */
export const CHECKS = [
  { name: "tsc-worker", title: "TypeScript: the Worker and its tests", command: [bin("tsc"), ["--noEmit"]] },
  {
    name: "client",
    title: "TypeScript client: types from docs/openapi.json, build",
    command: node("client.mjs", "--check"),
    needs: ["client-tools"],
  },
  { name: "mypy", title: "Python types (mypy, container/)", command: [VENV_PYTHON, ["-m", "mypy"]], cwd: CONTAINER, needs: ["python-dev"] },
  { name: "deploy", title: "deploy dry run (wrangler deploy --dry-run)", command: node("deploy-check.mjs") },
  {
    name: "tsc-node",
    title: "TypeScript: the Node side (e2e, bench, configs)",
    command: [bin("tsc"), ["--noEmit", "-p", "tsconfig.node.json"]],
  },
  { name: "biome", title: "Biome: lint and format (TypeScript, JSON, CSS)", command: [bin("biome"), ["check"]] },
  {
    name: "tsc-web",
    title: "TypeScript: the dashboard's browser code",
    command: [bin("tsc"), ["--noEmit", "-p", "web/browser/tsconfig.json"]],
  },
  { name: "imports", title: "import graph of src/ (no cycle, no upward import)", command: node("check-imports.mjs") },
  {
    name: "ruff",
    title: "Python lint (ruff check, container/ and bench/)",
    command: [VENV_PYTHON, ["-m", "ruff", "check", ".", "../bench"]],
    cwd: CONTAINER,
    needs: ["python-dev"],
  },
  {
    name: "ruff-format",
    title: "Python format (ruff format --check)",
    command: [VENV_PYTHON, ["-m", "ruff", "format", "--check", ".", "../bench"]],
    cwd: CONTAINER,
    needs: ["python-dev"],
  },
  { name: "env-types", title: "Env in step with `wrangler types` (no drift)", command: node("check-env-types.mjs") },
  {
    name: "python-imports",
    title: "import graph of the GA worker package (no cycle, worker/ and child/ apart)",
    command: [VENV_PYTHON, ["check_imports.py"]],
    cwd: CONTAINER,
  },
];

/** The extras (scripts/install.mjs) the checks that will run need. */
export const checkExtras = () => [...new Set(CHECKS.flatMap((c) => c.needs ?? []))];

const seconds = (s) => `${s.toFixed(1)} s`;

/**
 * Runs every check, `concurrency` at once; prints one line per check as it ends (✓/✗, its time) and the
 * output of a failed one. Resolves with each check's { check, ok, seconds, output }.
 */
export async function runChecks({ concurrency = availableParallelism(), print = console.log } = {}) {
  const queue = [...CHECKS];
  const results = [];
  const width = Math.max(...queue.map((c) => c.name.length));
  async function worker() {
    for (let check = queue.shift(); check; check = queue.shift()) {
      const [cmd, args] = check.command;
      const { code, output, seconds: took } = await runCaptured(cmd, args, { cwd: check.cwd ?? ROOT });
      const ok = code === 0;
      print(`${ok ? "✓" : "✗"} ${check.name.padEnd(width)}  ${seconds(took).padStart(7)}  ${check.title}`);
      if (!ok) print(`${output.trimEnd()}\n`);
      results.push({ check, ok, seconds: took, output });
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return results;
}
