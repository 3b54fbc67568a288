// PyGAD's stop criteria, read as PyGAD 3.9.2 reads them (docs/api.md#creation-parameters).

/**
 * A stop criterion as PyGAD 3.9.2 parses it: `word_number`, the number in Python's decimal syntax
 * (`1e-3`, `.5`, `+2`); `reach` may take one threshold per objective (`reach_1_0.5`); `saturate` and
 * `evaluations` take a positive whole number, `time` non-negative seconds; every value a finite
 * 64-bit float. The message says what is wrong.
 */
export function stopCriterionProblem(text: string): string | null {
  const [word, ...numbers] = text.split("_");
  if (!["reach", "saturate", "time", "evaluations"].includes(word!)) return "must start with reach_, saturate_, time_ or evaluations_";
  if (numbers.length === 0 || (word !== "reach" && numbers.length !== 1))
    return "has the form word_number; only reach takes several numbers (one per objective)";
  for (const number of numbers) {
    const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(number);
    if (!m || (m[2] === "" && !m[3])) return `${JSON.stringify(number)} is not a number`;
    const value = Number(number.trim());
    if (!Number.isFinite(value)) return `${JSON.stringify(number)} is beyond a 64-bit float`;
    if (word === "time" && value < 0) return "time takes a non-negative number of seconds";
    if (word === "saturate" || word === "evaluations") {
      // Exactly a whole number (as Python's Decimal sees "1e2" or "5.0"): no non-zero digit after the point.
      const fraction = m[3] ?? "";
      const exponent = Number(m[4] ?? 0);
      const digits = `${m[2]}${fraction}`.replace(/0+$/, "");
      const pointAt = m[2]!.length + exponent; // digits after this position are the fraction
      if (m[1] === "-" || /^0*$/.test(digits) || digits.length > pointAt) return `${word} takes a positive whole number`;
    }
  }
  return null;
}
