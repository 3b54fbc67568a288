// best_solution_fitness travels as a decimal string in webhook data (docs/webhooks.md#event-data): never exponent form.
import { describe, expect, it } from "vitest";
import { decimalString } from "../../src/events/payloads";

describe("decimalString", () => {
  it.each([
    [0, "0"],
    [-0.5, "-0.5"],
    [123.456, "123.456"],
    [1e-7, "0.0000001"],
    [-2.5e-9, "-0.0000000025"],
    [1.2345e21, "1234500000000000000000"],
    [-1e21, "-1000000000000000000000"],
    [1.5e22, "15000000000000000000000"],
    [Number.MAX_SAFE_INTEGER, "9007199254740991"],
  ])("%s → %s", (n, text) => {
    expect(decimalString(n)).toBe(text);
    expect(Number(decimalString(n))).toBe(n);
  });

  it("gives null for no value or a non-finite one", () => {
    expect(decimalString(null)).toBeNull();
    expect(decimalString(Number.POSITIVE_INFINITY)).toBeNull();
    expect(decimalString(Number.NaN)).toBeNull();
  });
});
