// The entry symbol of each code field: the top-level name the GA worker calls (docs/api.md#code-fields).
import { ApiError } from "../errors";
import { CODE_FIELDS, holdsCode } from "./parameters";

/** Top-level names a Python source defines, by a line scan: `def NAME`, `class NAME`, `NAME =`, `NAME: T =`. */
export function topLevelNames(source: string): Set<string> {
  const names = new Set<string>();
  const patterns = [/^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(/, /^class\s+([A-Za-z_]\w*)\s*[(:]/, /^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)/];
  for (const line of source.split(/\r?\n/)) {
    for (const pattern of patterns) {
      const name = pattern.exec(line)?.[1];
      if (name) names.add(name);
    }
    // Chained assignment `a = b = ...`: every target before the last `=` is defined.
    const chained = /^((?:[A-Za-z_]\w*\s*=(?!=)\s*)+)/.exec(line)?.[1];
    for (const m of chained?.matchAll(/([A-Za-z_]\w*)\s*=/g) ?? []) names.add(m[1]!);
  }
  return names;
}

/**
 * Every code field needs its `<field>_entry` (422 entry_symbol_required), and the entry must be a
 * top-level name of that source (422 entry_symbol_not_found). An entry without its code field is 400.
 * An operator (`parent_selection_type`, `crossover_type`, `mutation_type`) naming one of PyGAD's
 * operators is no code: it needs no entry.
 */
export function checkEntrySymbols(params: Record<string, unknown>): void {
  for (const field of CODE_FIELDS) {
    const source = params[field];
    const entryName = params[`${field}_entry`];
    if (source === undefined && entryName !== undefined) {
      throw new ApiError("validation_failed", `${field}_entry was sent without ${field}.`, {
        fields: [{ field: `${field}_entry`, message: `requires ${field}` }],
      });
    }
    if (typeof source !== "string" || !holdsCode(params, field)) continue;
    if (typeof entryName !== "string") {
      throw new ApiError("entry_symbol_required", `${field} needs its entry symbol ${field}_entry: the top-level name to call.`, {
        field: `${field}_entry`,
      });
    }
    if (!topLevelNames(source).has(entryName)) {
      throw new ApiError("entry_symbol_not_found", `${field}_entry "${entryName}" is not a top-level name defined in ${field}.`, {
        field: `${field}_entry`,
        entry: entryName,
      });
    }
  }
}
