// `npm run bench -- --smoke`: every benchmark section runs end to end with a handful of samples (its own
// local services, the GA worker, the engine's quick run), so a broken bench script fails here rather
// than for the next person who measures. The figures of a smoke run mean nothing and are not checked.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { ROOT } from "../../scripts/lib.mjs";

function runBench(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bench", "run.mjs"), "--smoke"], { cwd: ROOT, env: process.env });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("npm run bench -- --smoke", () => {
  it("runs every section and prints its table", { timeout: 600_000 }, async () => {
    const { code, out } = await runBench();
    expect(code, out).toBe(0);
    for (const heading of [
      "## Service vs bare PyGAD",
      "## Gates",
      "## Webhooks",
      "## Load",
      "## Engine",
      "## The scientific stack's imports",
    ])
      expect(out).toContain(heading);
    expect(out).toMatch(/\| gated POST \/submissions \| [\d.]+ \|/);
    expect(out).toMatch(/constraint100\s+stock/);
    expect(out).toMatch(/accelerated parallel \/ ideal/);
  });
});
