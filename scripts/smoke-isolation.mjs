// The deploy smoke test's reading of the GA worker's sandbox measures (`checks.runner.isolation` of
// GET /api/v1/health), by docs/deploy.md#isolation-per-measure's table: a measure that may never be
// absent fails the smoke test, one that may be absent with one run per instance is a warning — unless
// `pid_namespace` and `cgroup` are both absent (one of them must hold). Pure: a health body in, the
// lines to print and the failures out (scripts/deploy-smoke.mjs prints them; test/unit/smoke-isolation.test.ts).

/** May never be absent (docs/deploy.md's table). */
export const REQUIRED = ["user", "network", "syscall_filter"];
/** The per-process caps, each required (`rlimit:*` in the table). */
export const RLIMITS = ["cpu", "as", "fsize", "nofile", "nproc", "core"];
/** May be absent with one run per instance (pid_namespace and cgroup: not both). */
export const OPTIONAL = ["pid_namespace", "minimal_root", "cgroup"];

/**
 * @param {any} health the body of GET /api/v1/health
 * @returns {{ lines: string[], warnings: string[], failures: string[] }} what to print (`lines`, each
 *   measure and its state), what may be absent and is (`warnings`), and what must not be and is (`failures`)
 */
export function isolationVerdict(health) {
  const runner = health?.checks?.runner;
  const flags = runner?.isolation;
  const lines = [];
  const warnings = [];
  const failures = [];
  if (!flags || typeof flags !== "object") {
    failures.push(
      `the GA worker's isolation flags are not reported by /api/v1/health (runner: ${JSON.stringify(runner ?? null)}): no instance reported its sandbox measures after a job ran`,
    );
    return { lines, warnings, failures };
  }
  const where =
    runner.status === "on_demand"
      ? `reported by a ${runner.class ?? "container"} instance at ${runner.observed_at ?? "an unknown time"}`
      : "reported by the standing GA worker";
  lines.push(`isolation flags ${where}:`);
  const present = (name) => (name === "cgroup" ? typeof flags.cgroup === "string" && flags.cgroup !== "" : flags[name] === true);
  for (const name of REQUIRED) {
    if (present(name)) lines.push(`  ${name}: enforced`);
    else {
      lines.push(`  ${name}: ABSENT (may never be absent)`);
      failures.push(`the sandbox measure ${name} is absent, and may never be`);
    }
  }
  const rlimits = Array.isArray(flags.rlimits) ? flags.rlimits : [];
  for (const name of RLIMITS) {
    if (rlimits.includes(name)) lines.push(`  rlimit:${name}: enforced`);
    else {
      lines.push(`  rlimit:${name}: ABSENT (may never be absent)`);
      failures.push(`the per-process cap rlimit:${name} is absent, and may never be`);
    }
  }
  for (const name of OPTIONAL) {
    if (present(name)) lines.push(`  ${name}: enforced${name === "cgroup" ? ` (${flags.cgroup})` : ""}`);
    else {
      lines.push(`  ${name}: absent (may be, with one run per instance)`);
      warnings.push(`the sandbox measure ${name} is absent (allowed with one run per instance: docs/deploy.md#isolation-per-measure)`);
    }
  }
  // The GA worker's own words on why a measure is missing (its startup probe's notes).
  for (const note of Array.isArray(flags.notes) ? flags.notes : []) lines.push(`  note: ${note}`);
  if (!present("pid_namespace") && !present("cgroup"))
    failures.push(
      "pid_namespace and cgroup are both absent: one of them must hold (the run's CPU is no longer counted over its process tree)",
    );
  return { lines, warnings, failures };
}
