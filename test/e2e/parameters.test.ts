// The GA parameters exist twice by necessity — the Worker validates them (TypeScript, zod) and the GA
// worker passes them to PyGAD (Python) — so this test holds the two lists to each other.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM helpers shared with `npm start`
import { ROOT, VENV_PYTHON } from "../../scripts/lib.mjs";
import { CODE_FIELDS, GA_PARAMETER_NAMES } from "../../src/http/validation/submission";

describe("the GA parameters of the Worker and of the GA worker", () => {
  it("are the same names", () => {
    const python = spawnSync(
      VENV_PYTHON,
      ["-c", "import json; from allele_worker.jobs import CODE_FIELDS, PLAIN_PARAMS; print(json.dumps({'plain': PLAIN_PARAMS, 'code': CODE_FIELDS}))"],
      { cwd: join(ROOT, "container"), encoding: "utf8" },
    );
    expect(python.status, python.stderr).toBe(0);
    const worker = JSON.parse(python.stdout) as { plain: string[]; code: string[] };
    expect([...worker.code].sort()).toEqual([...CODE_FIELDS].sort());
    const workerNames = [...worker.plain, ...worker.code, ...worker.code.map((f) => `${f}_entry`)].sort();
    expect([...GA_PARAMETER_NAMES].sort()).toEqual(workerNames);
  });
});
