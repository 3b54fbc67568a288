// The sweep form (docs/dashboard.md#sweeps): the new-submission form's fields are the base (its name
// and description the sweep's), a grid editor — a parameter and its values per row — and the seeds. The
// form becomes the API's body and passes the same schema (operations/sweeps.ts), so an error names the
// field the API would, shown next to the form's field or the grid row it belongs to.
import type { FieldError } from "../../../errors";
import { GRID_PARAMETERS, MAX_GRID_PARAMETERS } from "../../../model/sweeps";
import { type FormValues, formErrors, formToBody } from "../forms";

/** Grid rows the form shows: four, or one more than those filled (at most MAX_GRID_PARAMETERS). */
export function gridRowCount(values: FormValues): number {
  let filled = 0;
  for (let i = 0; i < MAX_GRID_PARAMETERS; i++) if ((values[`grid_param_${i}`] ?? "") !== "") filled = i + 1;
  return Math.min(MAX_GRID_PARAMETERS, Math.max(4, filled + 1));
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A grid row's values as typed: JSON (`[[0.1, 0.2], [0.2, 0.4]]`, a list whose items are values), else
 * a comma-separated list whose items are numbers, `null` / `none`, `true` / `false`, or words.
 */
export function parseValues(text: string): { values: unknown[] } | { error: string } {
  const trimmed = text.trim();
  if (!trimmed) return { error: "give the values to try, separated by commas" };
  if (trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return { values: parsed };
    } catch {
      // not JSON: read as a comma-separated list below
    }
    return { error: "is not a JSON list: write 10, 20, 50 or, for pairs, [[0.1, 0.2], [0.2, 0.4]]" };
  }
  const items = trimmed
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    values: items.map((item) => {
      if (NUMBER.test(item)) return Number(item);
      if (item === "null" || item === "none") return null;
      if (item === "true" || item === "false") return item === "true";
      return item;
    }),
  };
}

export interface SweepForm {
  body: Record<string, unknown>;
  /** Errors by form field (the base's fields, `grid_values_<i>`, `grid`, `seeds`). */
  errors: Record<string, string>;
}

/** The API body of the sweep form, and the fields whose text is not even a value of their kind. */
export function sweepFormToBody(values: FormValues): SweepForm {
  const { body: fields, errors } = formToBody(values);
  const { name, description, ...base } = fields;
  const grid: Record<string, unknown[]> = {};
  for (let i = 0; i < MAX_GRID_PARAMETERS; i++) {
    const param = values[`grid_param_${i}`] ?? "";
    if (!param) continue;
    if (!GRID_PARAMETERS.includes(param)) {
      errors[`grid_values_${i}`] = `${param} cannot be varied by a grid`;
      continue;
    }
    if (param in grid) {
      errors[`grid_values_${i}`] = `${param} has a row already`;
      continue;
    }
    const parsed = parseValues(values[`grid_values_${i}`] ?? "");
    if ("error" in parsed) errors[`grid_values_${i}`] = parsed.error;
    else grid[param] = parsed.values;
    // A parameter of the grid is the grid's: its field in the base is left out.
    delete base[param];
  }
  const seedsText = (values.seeds ?? "").trim();
  const seeds = NUMBER.test(seedsText) ? Number(seedsText) : Number.NaN;
  if (!Number.isFinite(seeds)) errors.seeds = "must be a whole number";
  return { body: { name: name ?? "", description: description ?? "", base, grid, seeds }, errors };
}

/** The API's field errors as the sweep form shows them: a base field's by its field, a grid entry's by its row. */
export function sweepFormErrors(fields: FieldError[], values: FormValues): Record<string, string> {
  const out: Record<string, string> = {};
  const rowOf = (param: string) => {
    for (let i = 0; i < MAX_GRID_PARAMETERS; i++) if (values[`grid_param_${i}`] === param) return i;
    return -1;
  };
  const base: FieldError[] = [];
  for (const { field, message } of fields) {
    const [head, key, index] = field.split(".");
    if (head === "base" && key) base.push({ field: field.slice("base.".length), message });
    else if (head === "grid" && key && rowOf(key) >= 0) {
      const at = `grid_values_${rowOf(key)}`;
      out[at] ??= index === undefined ? message : `value ${Number(index) + 1}: ${message}`;
    } else if (head === "grid") out.grid ??= key ? `${key}: ${message}` : message;
    else out[head ?? "form"] ??= message;
  }
  return { ...formErrors(base), ...out };
}

export const initialSweepValues = (): FormValues => ({
  grid_param_0: "sol_per_pop",
  grid_values_0: "10, 20",
  grid_param_1: "mutation_probability",
  grid_values_1: "0.05, 0.2",
  seeds: "3",
});
