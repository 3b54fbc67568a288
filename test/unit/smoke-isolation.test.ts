// The deploy smoke test's decision on the GA worker's sandbox measures (scripts/smoke-isolation.mjs), by
// docs/deploy.md#isolation-per-measure's table: fed fake health bodies, as a deployment could answer.
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { isolationVerdict } from "../../scripts/smoke-isolation.mjs";

type Verdict = { lines: string[]; warnings: string[]; failures: string[] };
const verdict = (body: unknown) => isolationVerdict(body) as Verdict;

const ALL = {
  user: true,
  network: true,
  pid_namespace: true,
  minimal_root: true,
  syscall_filter: true,
  cgroup: "v2",
  memory_tree: true,
  cpu_tree: true,
  pids: true,
  rlimits: ["cpu", "as", "fsize", "nofile", "nproc", "core"],
  notes: [] as string[],
};
const health = (isolation: unknown) => ({
  status: "ok",
  checks: {
    database: { status: "ok" },
    files: { status: "ok" },
    runner: { status: "on_demand", isolation, observed_at: "2026-11-27T03:00:00.000Z", class: "GaRunner" },
  },
});

describe("the smoke test's reading of the isolation flags", () => {
  it("every measure held: each printed, no warning, no failure", () => {
    const v = verdict(health(ALL));
    expect(v.failures).toEqual([]);
    expect(v.warnings).toEqual([]);
    expect(v.lines[0]).toContain("reported by a GaRunner instance at 2026-11-27T03:00:00.000Z");
    for (const m of ["user", "network", "syscall_filter", "pid_namespace", "minimal_root", "cgroup", "rlimit:nproc"])
      expect(v.lines).toContain(`  ${m}: enforced${m === "cgroup" ? " (v2)" : ""}`);
  });

  it("a measure that may be absent with one run per instance warns, and does not fail", () => {
    const v = verdict(health({ ...ALL, cgroup: null, minimal_root: false, notes: ["cgroup: read-only cgroupfs"] }));
    expect(v.failures).toEqual([]);
    expect(v.warnings).toHaveLength(2);
    expect(v.warnings.join()).toMatch(/minimal_root is absent \(allowed/);
    expect(v.warnings.join()).toMatch(/cgroup is absent \(allowed/);
    expect(v.lines).toContain("  cgroup: absent (may be, with one run per instance)");
    expect(v.lines).toContain("  note: cgroup: read-only cgroupfs");
  });

  it("a measure that may never be absent fails, each named", () => {
    for (const m of ["user", "network", "syscall_filter"]) {
      const v = verdict(health({ ...ALL, [m]: false }));
      expect(v.failures).toEqual([`the sandbox measure ${m} is absent, and may never be`]);
      expect(v.lines).toContain(`  ${m}: ABSENT (may never be absent)`);
    }
    const v = verdict(health({ ...ALL, rlimits: ["cpu", "as", "fsize", "nofile", "core"] }));
    expect(v.failures).toEqual(["the per-process cap rlimit:nproc is absent, and may never be"]);
  });

  it("pid_namespace and cgroup both absent fails (one of them must hold)", () => {
    const v = verdict(health({ ...ALL, pid_namespace: false, cgroup: null }));
    expect(v.warnings).toHaveLength(2);
    expect(v.failures).toEqual([expect.stringContaining("pid_namespace and cgroup are both absent")]);
  });

  it("no flags reported (no instance started, or an older Worker) fails, saying so", () => {
    for (const body of [health(undefined), { checks: { runner: { status: "on_demand" } } }, null, { error: "x" }]) {
      const v = verdict(body);
      expect(v.failures).toEqual([expect.stringContaining("isolation flags are not reported")]);
      expect(v.lines).toEqual([]);
    }
  });

  it("the standing worker's flags (local) say so", () => {
    const v = verdict({ checks: { runner: { status: "ok", isolation: ALL } } });
    expect(v.lines[0]).toContain("reported by the standing GA worker");
    expect(v.failures).toEqual([]);
  });
});
