// The data files a job form offers and sends (docs/dashboard.md#data-files): the new-submission form's
// and the sweep form's checkboxes (`data_files`), read from the body as every value of the field, and a
// refusal of one item (`data_files[i]`, `base.data_files[i]`) shown at the one choice.
import type { Context } from "hono";
import { recentDataFiles } from "../../storage/data-files";
import { getDb } from "../../storage/db";
import type { DashboardEnv } from "../shared/context";

type Ctx = Context<DashboardEnv>;

/** The data files a job form offers: the account's newest hundred. */
export const offeredFiles = (c: Ctx) => recentDataFiles(getDb(c.env.DB), c.get("session")!.account.id, 100);

/** The form's checked data files (every `data_files` value), in the form's order. */
export async function checkedFiles(c: Ctx): Promise<string[]> {
  const body = await c.req.parseBody({ all: true });
  return [body.data_files ?? []].flat().filter((v): v is string => typeof v === "string" && v !== "");
}

/** A refusal's field errors with every `data_files[i]` named as the one `data_files` choice of the form. */
export const withFileErrors = (errors: Record<string, string>) =>
  Object.fromEntries(Object.entries(errors).map(([k, v]) => [k.startsWith("data_files") ? "data_files" : k, v]));
