// What every dashboard action shares: who starts a run, and turning a refusal (a gate,
// a wrong state, a scope) into the same words the API would answer, shown on the page it came from.
import type { Context } from "hono";
import type { Payment } from "../../admission/limits";
import { ApiError } from "../../errors";
import type { Starter } from "../../operations/runs";
import type { DashboardEnv } from "./context";
import { flash } from "./session";

export const paymentOf = (value: string | undefined): Payment => (value === "credits" ? "credits" : "plan");

/** A run started from the dashboard: source `web`, paid as the person chose. */
export const webStarter = (c: Context<DashboardEnv>, payment: Payment): Starter => ({
  account: c.get("session")!.account,
  deferredRate: null,
  source: "web",
  payment,
  waitUntil: (p) => c.executionCtx.waitUntil(p),
});

/** The words of a refusal, as a person reads them: the API's message, plus the code for reference. */
export function refusalText(err: ApiError): string {
  const reason = typeof err.details.reason === "string" ? ` (${err.details.reason})` : "";
  return `${err.message} [${err.code}${reason}]`;
}

/**
 * Runs an action; a refusal the API would answer with a 4xx is shown as an error message on `back`
 * (a redirect), anything else goes to the error page.
 */
export async function act(c: Context<DashboardEnv>, back: string, run: () => Promise<string | Response>): Promise<Response> {
  try {
    const done = await run();
    if (done instanceof Response) return done;
    flash(c, "notice", done);
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500 || err.code === "not_found") throw err;
    flash(c, "error", refusalText(err));
  }
  return c.redirect(back, 303);
}

/** A form's number of generations (a run again, a continue): a whole number, else 400 naming the field. */
export function wholeGenerations(text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n))
    throw new ApiError("validation_failed", "num_generations: must be a whole number", {
      fields: [{ field: "num_generations", message: "must be a whole number" }],
    });
  return n;
}
