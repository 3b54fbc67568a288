// The GA parameters exist twice by necessity — the Worker validates them (TypeScript, zod) and the GA
// worker passes them to PyGAD (Python, allele_worker/wire.py) — so this test holds the two lists to
// each other (the Python list is read by the project's global setup, test/helpers/worker-process.ts).
import { describe, expect, inject, it } from "vitest";
import { CODE_FIELDS, GA_PARAMETER_NAMES, OPERATOR_FIELDS } from "../../src/model/parameters";

describe("the GA parameters of the Worker and of the GA worker", () => {
  it("are the same names", () => {
    const worker = JSON.parse(inject("workerParameters")) as { plain: string[]; code: string[]; operators: string[] };
    expect([...worker.code].sort()).toEqual([...CODE_FIELDS].sort());
    // The operators are both: a plain parameter naming one of PyGAD's, or a code field with its _entry.
    expect([...worker.operators].sort()).toEqual([...OPERATOR_FIELDS].sort());
    const workerNames = [...new Set([...worker.plain, ...worker.code, ...worker.code.map((f) => `${f}_entry`)])].sort();
    expect([...GA_PARAMETER_NAMES].sort()).toEqual(workerNames);
  });
});
