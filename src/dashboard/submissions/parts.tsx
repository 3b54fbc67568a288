/** @jsxImportSource hono/jsx */
// Pieces the submission pages share: code shown read-only, the choice of how a run is paid, and a run's
// progress and best fitness as a list shows them.
import { limitsFor } from "../../admission/admission";
import type { Payment } from "../../admission/limits";
import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import type { RunSummary } from "../../storage/submissions";
import { fmtNumber } from "../shared/layout";
import { bestFitnessText } from "../shared/result-parts";

/** Code shown read-only, highlighted by the client's editor bundle. */
export const CodeBlock = (p: { code: string; label: string }) => (
  // biome-ignore lint/a11y/useAriaPropsSupportedByRole: screen readers announce the label of a code block, which has no role of its own
  <pre class="code" data-highlight="python" aria-label={p.label}>
    <code>{p.code}</code>
  </pre>
);

const workers = (n: number) => `${n} parallel fitness ${n === 1 ? "worker" : "workers"}`;

/** How a website run is paid: by the plan, or with credits (docs/api.md#payment), each with its limits. */
export function PaymentChoice(p: { env: Bindings; session: Session; chosen: Payment; name?: string }) {
  const plan = limitsFor(p.env, p.session.account, "plan");
  const credits = limitsFor(p.env, p.session.account, "credits");
  const name = p.name ?? "payment";
  return (
    <fieldset class="payment">
      <legend>How this run is paid</legend>
      <label class="check">
        <input type="radio" name={name} value="plan" checked={p.chosen === "plan"} /> On my {p.session.account.plan} plan — no credits; the
        plan's limits ({plan.max_num_generations} generations, {plan.max_num_genes} genes, {workers(plan.max_parallel_workers)},{" "}
        {Math.round(plan.run_time_seconds / 60)} min)
      </label>
      <label class="check">
        <input type="radio" name={name} value="credits" checked={p.chosen === "credits"} /> With credits — charged for CPU and memory;
        Premium limits ({credits.max_num_generations} generations, {credits.max_num_genes} genes, {workers(credits.max_parallel_workers)},{" "}
        {Math.round(credits.run_time_seconds / 60)} min), counted as an in-flight API run
      </label>
    </fieldset>
  );
}

/** Generations done, "of" the run's total when known. */
export const progressText = (done: number | null, total: number | null) =>
  done === null ? "—" : total === null ? String(done) : `${done} of ${total}`;

/** A run's best fitness as a list shows it: its result's (several objectives, infinite), else the run's progress. */
export function runFitnessText(run: Pick<RunSummary, "bestSolutionFitness" | "numObjectives">, status: string): string {
  if (run.numObjectives !== null)
    return bestFitnessText({ bestSolutionFitness: run.bestSolutionFitness, numObjectives: run.numObjectives });
  return run.bestSolutionFitness === null
    ? "—"
    : `${fmtNumber(run.bestSolutionFitness)}${status === "failed" || status === "cancelled" ? " (so far)" : ""}`;
}
