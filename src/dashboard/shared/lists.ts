// The dashboard's lists read their query the way the API does: the same zod schema (so the same
// filters, ordering and bounds), with empty form fields left out, and the same signed cursors.
import type { Context } from "hono";
import type { z } from "zod";
import { fieldErrors } from "../../model/fields";
import type { DashboardEnv } from "./context";

export function listQueryOf<T extends z.ZodType>(
  c: Context<DashboardEnv>,
  schema: T,
): { query: z.output<T> | null; error: string | null; raw: Record<string, string> } {
  const raw: Record<string, string> = {};
  for (const [key, values] of Object.entries(c.req.queries())) {
    const value = values.at(-1);
    if (value !== undefined && value !== "") raw[key] = value;
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { query: parsed.data, error: null, raw };
  return {
    query: null,
    error: fieldErrors(parsed.error)
      .map((e) => `${e.field}: ${e.message}`)
      .join("; "),
    raw,
  };
}
