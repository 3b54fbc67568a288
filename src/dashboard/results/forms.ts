// The result forms (docs/dashboard.md#results): rename (the API's patch body, so the same rules), share
// or stop sharing, and continue with more generations.
import { validationError } from "../../errors";
import { fieldErrors } from "../../model/fields";
import type { GaParameters } from "../../model/parameters";
import { resultPatchBody } from "../../operations/results";
import { wholeGenerations } from "../shared/actions";

/** The rename form's name, checked as the API's PATCH checks it (400 naming the field). */
export function newName(form: Record<string, string>): string | undefined {
  const parsed = resultPatchBody.safeParse({ name: form.name ?? "" });
  if (!parsed.success) throw validationError(fieldErrors(parsed.error).slice(0, 1));
  return parsed.data.name;
}

/** The share form's choice: shared or not. */
export const sharedOf = (form: Record<string, string>) => form.is_shared === "true";

/** The continue form's overrides: its number of generations. */
export const continueOverrides = (form: Record<string, string>): Partial<GaParameters> => ({
  num_generations: wholeGenerations(form.num_generations),
});
