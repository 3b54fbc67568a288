// The one reader of a dashboard form (docs/dashboard.md#sessions): every route — the CSRF check, the
// sign-in forms, every action — reads the body through here. A body that cannot be read as a form (a
// multipart body without its boundary, a broken multipart body) is refused with a 400 page, never a 500,
// before anything is done.
import type { Context } from "hono";
import { ApiError } from "../../errors";
import type { DashboardEnv } from "./context";

type Parsed = Record<string, string | File | (string | File)[]>;

const unreadable = () =>
  new ApiError("validation_failed", "The form could not be read (a multipart body needs its boundary); reload the page and try again.", {
    fields: [{ field: "body", message: "is not a readable form" }],
  });

/**
 * The body as a form, every value of every field (Hono parses it once and keeps it; always with `all`, so
 * every caller reads the same parse). A body that is not a form (another media type) is an empty form.
 */
async function parsed(c: Context<DashboardEnv>): Promise<Parsed> {
  try {
    return await c.req.parseBody({ all: true });
  } catch {
    throw unreadable();
  }
}

/** The form's fields as strings (a repeated field: its last value). */
export async function formOf(c: Context<DashboardEnv>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(await parsed(c))) {
    const last = [value].flat().at(-1);
    if (typeof last === "string") out[key] = last;
  }
  return out;
}

/** Every string value of a repeated field (the ticked boxes of a list), in the order sent. */
export async function valuesOf(c: Context<DashboardEnv>, name: string): Promise<string[]> {
  return [(await parsed(c))[name] ?? []].flat().filter((v): v is string => typeof v === "string");
}
