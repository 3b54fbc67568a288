// The bounded API fuzz run (docs/testing.md): schemathesis against this suite's service (`wrangler dev`
// + the real GA worker) from the committed OpenAPI document, with a valid key, over every public
// operation. No 5xx, no response outside its documented schema, status codes, content types and
// headers, no invalid request accepted. `npm run fuzz` is the longer run. scripts/test.mjs counts each
// operation (its JUnit report) in the summary line.
import { existsSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import {
  BOUNDED_EXAMPLES,
  BOUNDED_SEED,
  cancelLiveRuns,
  documentedOperations,
  FUZZ_PYTHON,
  fuzzAccount,
  runSchemathesis,
  seedResources,
  shorten,
  // @ts-expect-error -- a plain ESM script, without types
} from "../../scripts/fuzz.mjs";
// @ts-expect-error -- a plain ESM script, without types
import { ROOT } from "../../scripts/lib.mjs";
import { baseUrl } from "./client";

describe("schemathesis", () => {
  it("finds nothing wrong in a bounded run over every public operation", { timeout: 600_000 }, async () => {
    expect(existsSync(FUZZ_PYTHON), "container/fuzz/.venv is missing: `npm test` makes it on first use").toBe(true);
    const key = await fuzzAccount(baseUrl(), inject("adminToken"));
    const seeded = await seedResources(baseUrl(), key);
    const result = await runSchemathesis({
      baseUrl: baseUrl(),
      key,
      seeded,
      maxExamples: BOUNDED_EXAMPLES,
      seed: BOUNDED_SEED,
      phases: "fuzzing",
      reportDir: `${ROOT}/.wrangler/test-reports`,
    });
    await cancelLiveRuns(baseUrl(), key);
    console.log(
      `schemathesis: operations ${result.operations}, cases ${result.cases}, failures ${result.failures}, ${result.seconds.toFixed(0)} s`,
    );
    expect(result.ok, shorten(result.output)).toBe(true);
    expect(result.operations).toBe(documentedOperations());
    expect(result.operations).toBeGreaterThanOrEqual(32);
  });
});
