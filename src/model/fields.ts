// What every input's fields share, whoever reads them (the API's bodies and queries, the dashboard's
// forms): free text, the marker of a field too large to take, and zod's issues as the fields they name.
import { z } from "zod";
import type { FieldError } from "../errors";

/** Issues whose message starts with this marker mean "payload too large" (a code field over 64 KiB). */
export const TOO_LARGE = "payload_too_large:";

/**
 * Free text a person names things with (names, descriptions): at most `max` UTF-16 units and well-formed
 * Unicode. JSON may carry a lone surrogate (`"\ud800"`); storing it would silently turn it into U+FFFD,
 * so it is refused instead (docs/decisions.md#free-text).
 */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/\p{Cs}/u.test(s), { message: "must be valid Unicode text (it contains a lone surrogate)" });

/**
 * The first control character of `value` (C0, DEL or C1) and where it is, or null: what a URL a person
 * gives must not hold (a browser or a URL parser silently drops some of them, so the address seen is not
 * the one used).
 */
export function controlCharacter(value: string): { char: string; index: number } | null {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return { char: `U+${code.toString(16).toUpperCase().padStart(4, "0")}`, index: i };
  }
  return null;
}

export function fieldErrors(error: { issues: z.core.$ZodIssue[] }): FieldError[] {
  return error.issues.flatMap((issue) => {
    // An unknown field is named by itself, not by the object that holds it ("body").
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ field: [...issue.path, key].join("."), message: "is not a known field" }));
    }
    return [{ field: issue.path.length ? issue.path.join(".") : "body", message: issue.message }];
  });
}
