/** @jsxImportSource hono/jsx */
// Picking runs to compare (docs/dashboard.md#compare): a checkbox per run in a list — the submissions
// list (each one's latest run), a submission's runs, the results list, a sweep's runs — tied by the
// `form` attribute to one GET form to /compare, so the boxes can sit in any table of the page and the
// page works without scripts. A run is named by its run id everywhere (docs/decisions.md#run-id).
import type { Child } from "hono/jsx";

/** At most this many runs on one comparison. */
export const MAX_COMPARED = 12;

export const COMPARE_FORM = "compare-form";

/** The checkbox of one run in a list. */
export const PickBox = (p: { runId: string; label: string }) => (
  <input type="checkbox" name="runs" value={p.runId} form={COMPARE_FORM} class="pick" aria-label={`Compare ${p.label}`} />
);

/** The form the page's checkboxes send: GET /compare?runs=…; the script keeps count and refuses past the cap. */
export const CompareBar = (p: { children?: Child }) => (
  <form id={COMPARE_FORM} method="get" action="/compare" class="compare-bar" data-compare-max={MAX_COMPARED}>
    <button type="submit" class="secondary">
      Compare selected runs
    </button>{" "}
    <span class="hint" data-compare-count aria-live="polite">
      Tick up to {MAX_COMPARED} runs in the table.
    </span>
    {p.children}
  </form>
);

/** A run as every list names it: its kind and its run id. */
export const RunName = (p: { kind: string | null | undefined; runId: string }) => (
  <>
    <span class="kind">{p.kind ?? "—"}</span> <code class="run-id">{p.runId}</code>
  </>
);

/** The comparison of some runs, as a link. */
export const compareHref = (runIds: readonly string[]) => `/compare?runs=${runIds.slice(0, MAX_COMPARED).join(",")}`;
