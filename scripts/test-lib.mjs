// What the test commands share (`npm test`, `npm run test:fast`, `npm run check`): running a command
// with its output kept, and the one "N passed, N failed, N skipped" tally over checks, pytest's JUnit
// reports and vitest's JSON report.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { ROOT, WRANGLER_ENV } from "./lib.mjs";

/** Runs a command with stdout and stderr kept together; resolves with its exit code, output and time. */
export function runCaptured(cmd, args, { cwd = ROOT, env = {} } = {}) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...WRANGLER_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (d) => chunks.push(d));
    child.stderr.on("data", (d) => chunks.push(d));
    const done = (code, extra = "") =>
      resolve({ code, output: Buffer.concat(chunks).toString("utf8") + extra, seconds: (performance.now() - started) / 1000 });
    child.on("error", (err) => done(1, `\n${cmd}: ${err.message}\n`));
    child.on("close", (code, signal) => done(code ?? 1, signal ? `\n${cmd} ended by ${signal}\n` : ""));
  });
}

/** The summary line's counts. */
export class Tally {
  passed = 0;
  failed = 0;
  skipped = 0;

  /** One test that passed or failed (a static check, a step). */
  add(ok) {
    if (ok) this.passed++;
    else this.failed++;
  }

  /** Adds a JUnit report's counts (pytest, schemathesis); false when there is no readable report. */
  addJunit(path) {
    let xml;
    try {
      xml = readFileSync(path, "utf8");
    } catch {
      return false;
    }
    const attr = (name) => Number(new RegExp(`<testsuite[^>]*\\b${name}="(\\d+)"`).exec(xml)?.[1] ?? 0);
    const bad = attr("failures") + attr("errors");
    this.passed += attr("tests") - bad - attr("skipped");
    this.failed += bad;
    this.skipped += attr("skipped");
    return true;
  }

  /** Adds a vitest JSON report's counts; a run that failed outside any test (exit ≠ 0, no failed test) is one failure. */
  addVitest(path, exitCode) {
    try {
      const report = JSON.parse(readFileSync(path, "utf8"));
      this.passed += report.numPassedTests;
      this.failed += report.numFailedTests;
      this.skipped += report.numPendingTests + (report.numTodoTests ?? 0);
      if (exitCode !== 0 && report.numFailedTests === 0) this.failed++;
    } catch {
      this.failed++;
    }
  }

  get line() {
    return `${this.passed} passed, ${this.failed} failed, ${this.skipped} skipped`;
  }
}
