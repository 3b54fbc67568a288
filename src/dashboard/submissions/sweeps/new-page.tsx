/** @jsxImportSource hono/jsx */
// The new-sweep page (docs/dashboard.md#sweeps): the base job with the new-submission form's fields (its
// name and description the sweep's), the grid editor — a parameter and the values to try per row — the
// seeds per combination with the number of children it makes against the plan's cap (the script counts as
// you type and refuses past the cap before sending), and how the children are paid.
import { limitsFor } from "../../../admission/admission";
import type { Payment } from "../../../admission/limits";
import type { Session } from "../../../domain/sessions";
import type { Bindings } from "../../../env";
import { GRID_PARAMETERS, MAX_SEEDS } from "../../../model/sweeps";
import { Csrf, Layout } from "../../shared/layout";
import type { FormValues } from "../forms";
import { GROUPS } from "../forms";
import { FieldGroup, FormErrors } from "../new-page";
import { PaymentChoice } from "../parts";
import { gridRowCount } from "./forms";

function GridRow(p: { i: number; values: FormValues; errors: Record<string, string> }) {
  const param = `grid_param_${p.i}`;
  const vals = `grid_values_${p.i}`;
  const error = p.errors[vals];
  return (
    <tr class={error ? "invalid" : undefined}>
      <td>
        <select id={`f-${param}`} name={param} aria-label={`Parameter ${p.i + 1}`}>
          <option value="">—</option>
          {GRID_PARAMETERS.map((name) => (
            <option value={name} selected={p.values[param] === name}>
              {name}
            </option>
          ))}
        </select>
      </td>
      <td>
        <input
          id={`f-${vals}`}
          name={vals}
          value={p.values[vals] ?? ""}
          aria-label={`Values of parameter ${p.i + 1}`}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? `f-${vals}-error` : "grid-hint"}
          autocomplete="off"
          spellcheck={false}
          data-grid-values
        />
        {error && (
          <p class="field-error" id={`f-${vals}-error`}>
            {error}
          </p>
        )}
      </td>
    </tr>
  );
}

function GridEditor(p: { values: FormValues; errors: Record<string, string>; caps: Record<Payment, number> }) {
  const rows = gridRowCount(p.values);
  return (
    <section aria-labelledby="grid-h" class="panel">
      <h2 id="grid-h">Grid</h2>
      <p class="hint" id="grid-hint">
        Pick the parameters to vary and the values to try, separated by commas (<code>10, 20, 50</code>; words such as{" "}
        <code>swap, scramble</code>; <code>none</code> for null; JSON for pairs: <code>[[0.1, 0.2], [0.2, 0.4]]</code>). Every combination
        runs once per seed; a field above that a grid row varies is left out of the base.
      </p>
      {p.errors.grid && (
        <p class="field-error" id="f-grid-error">
          {p.errors.grid}
        </p>
      )}
      <div class="table-wrap">
        <table class="compact grid-editor">
          <thead>
            <tr>
              <th scope="col">Parameter</th>
              <th scope="col">Values</th>
            </tr>
          </thead>
          <tbody>
            {Array.from({ length: rows }, (_, i) => (
              <GridRow i={i} values={p.values} errors={p.errors} />
            ))}
          </tbody>
        </table>
      </div>
      <div class={`field${p.errors.seeds ? " invalid" : ""}`}>
        <label for="f-seeds">Seeds per combination</label>
        <input
          id="f-seeds"
          name="seeds"
          value={p.values.seeds ?? ""}
          inputmode="numeric"
          pattern="[0-9]+"
          aria-describedby={`f-seeds-hint${p.errors.seeds ? " f-seeds-error" : ""}`}
          aria-invalid={p.errors.seeds ? "true" : undefined}
          data-seeds
        />
        <p class="hint" id="f-seeds-hint">
          1..{MAX_SEEDS}: each combination runs with the seeds base seed, +1, +2, … (the random seed above, or one derived from the sweep's
          id). Three seeds cannot show a difference at 5 %; five or more can.
        </p>
        {p.errors.seeds && (
          <p class="field-error" id="f-seeds-error">
            {p.errors.seeds}
          </p>
        )}
      </div>
      <p class="children-count" data-cap-plan={p.caps.plan} data-cap-credits={p.caps.credits} aria-live="polite">
        Children: <span data-children>combinations × seeds</span> — at most {p.caps.plan} per sweep on your plan, {p.caps.credits} with
        credits.
      </p>
    </section>
  );
}

export function NewSweepPage(p: {
  env: Bindings;
  session: Session;
  values: FormValues;
  errors: Record<string, string>;
  formError?: string;
  payment: Payment;
}) {
  const caps = {
    plan: limitsFor(p.env, p.session.account, "plan").max_sweep_children,
    credits: limitsFor(p.env, p.session.account, "credits").max_sweep_children,
  };
  return (
    <Layout title="New sweep" session={p.session} section="sweeps" scripts={["editor"]}>
      <h1>New sweep</h1>
      <p>
        One job over a grid of parameter values, several seeds each: a submission per combination and seed, which wait for your concurrency
        slots and start as they free. The sweep's page then shows which combination is best and which differences are real.
      </p>
      <FormErrors errors={p.errors} formError={p.formError} />
      <form method="post" action="/sweeps/new" class="submission-form sweep-form" novalidate>
        <Csrf session={p.session} />
        {GROUPS.map(([group, title]) => (
          <FieldGroup
            group={group}
            title={group === "basic" ? "Basic (the sweep's name and the base job)" : title}
            values={p.values}
            errors={p.errors}
          />
        ))}
        <GridEditor values={p.values} errors={p.errors} caps={caps} />
        <PaymentChoice env={p.env} session={p.session} chosen={p.payment} />
        <p class="hint">Sweeps started here fire no webhook events (only API sweeps do).</p>
        <button type="submit">Start the sweep</button>
      </form>
    </Layout>
  );
}
