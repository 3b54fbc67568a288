/** @jsxImportSource hono/jsx */
// What a quick type's result means (docs/dashboard.md#quick-types): the API's `interpretation`
// (src/model/quick-types.ts) in a sentence, then each of its fields.
import { interpretation } from "../../model/quick-types";
import type { ResultRow } from "../../storage/results";

const num = (v: unknown) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(4)) : String(v));
const show = (v: unknown): string =>
  Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)
    ? v.map(num).join(", ")
    : typeof v === "object" && v !== null
      ? JSON.stringify(v)
      : num(v);

/** The sentence a type's interpretation comes down to. */
function headline(it: Record<string, unknown>): string {
  switch (it.submission_type) {
    case "quick_binary_subset_sum": {
      const chosen = it.chosen_integers as number[];
      return `Chosen: ${chosen.join(" + ") || "none"} = ${it.sum} (target ${it.target}) — ${it.reaches_target ? "reaches the target" : "does not reach the target"}`;
    }
    case "quick_knapsack": {
      const dims = (it.dimensions as { name: string; total: number; capacity: number }[]).map(
        (d) => `${d.name} ${num(d.total)} of ${num(d.capacity)}`,
      );
      return `Packed: ${(it.items as string[]).join(", ") || "nothing"} — value ${num(it.total_value)}; ${dims.join(", ")} — ${it.within_capacity ? "within capacity" : "over capacity"}`;
    }
    case "quick_keras_xor_training":
      return `${it.correct} of 4 XOR answers right`;
    default: {
      const hyper = Object.entries(it.hyperparameters as Record<string, unknown>).map(([k, v]) => `${k} = ${num(v)}`);
      return `Best hyperparameters: ${hyper.join(", ")} — cross-validated accuracy ${num(it.cv_accuracy)}`;
    }
  }
}

export function Interpretation(p: { r: ResultRow }) {
  const it = interpretation(p.r.parameters, p.r.bestSolution, p.r.numObjectives > 1 ? null : p.r.bestSolutionFitness);
  if (!it) return null;
  const { submission_type: type, ...fields } = it;
  return (
    <section aria-labelledby="interpretation-h" class="panel" id="interpretation">
      <h2 id="interpretation-h">What the genes mean</h2>
      <p class="muted small">
        <code>{type}</code>
      </p>
      <p data-interpretation-headline>{headline(it)}</p>
      <dl class="facts">
        {Object.entries(fields).map(([k, v]) => (
          <div>
            <dt>{k}</dt>
            <dd>{show(v)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
