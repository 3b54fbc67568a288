/** @jsxImportSource hono/jsx */
// The new-submission page (docs/dashboard.md#new-submission): the fields by group, what needs attention,
// and how the run is paid.
import type { Payment } from "../../admission/limits";
import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import { Csrf, Layout } from "../shared/layout";
import { Field } from "./field";
import { FORM_FIELDS, type FormField, type FormValues, GROUPS } from "./forms";
import { PaymentChoice } from "./parts";

/** What keeps the form from being sent: a refusal of the whole form, and the fields that need attention (linked). */
export function FormErrors(p: { errors: Record<string, string>; formError?: string }) {
  const count = Object.keys(p.errors).length;
  if (!p.formError && count === 0) return null;
  return (
    <div class="flash error" role="alert" id="form-errors">
      {p.formError && <p>{p.formError}</p>}
      {count > 0 && (
        <p>
          {count === 1 ? "One field needs" : `${count} fields need`} attention:{" "}
          {Object.keys(p.errors).map((name, i) => (
            <>
              {i > 0 && ", "}
              <a href={`#f-${name}`}>{name}</a>
            </>
          ))}
          .
        </p>
      )}
    </div>
  );
}

/** A group of fields, open when it is the basic one or when one of its fields has a value or an error. */
export function FieldGroup(p: { group: FormField["group"]; title: string; values: FormValues; errors: Record<string, string> }) {
  const fields = FORM_FIELDS.filter((f) => f.group === p.group);
  if (!fields.length) return null;
  const open =
    p.group === "basic" ||
    fields.some((f) => p.errors[f.name] || p.errors[`${f.param ?? f.name}_entry`] || (p.values[f.name] ?? "") !== "");
  return (
    <details class="group" open={open}>
      <summary>
        <h2>{p.title}</h2>
      </summary>
      <div class={p.group === "callbacks" || p.group === "custom" ? "fields one" : "fields"}>
        {fields.map((f) => (
          <Field f={f} values={p.values} errors={p.errors} />
        ))}
      </div>
    </details>
  );
}

export function NewSubmissionPage(p: {
  env: Bindings;
  session: Session;
  values: FormValues;
  errors: Record<string, string>;
  formError?: string;
  payment: Payment;
}) {
  return (
    <Layout title="New submission" session={p.session} section="new" scripts={["editor"]}>
      <h1>New submission</h1>
      <FormErrors errors={p.errors} formError={p.formError} />
      <form method="post" action="/submissions/new" class="submission-form" novalidate>
        <Csrf session={p.session} />
        {GROUPS.map(([group, title]) => (
          <FieldGroup group={group} title={title} values={p.values} errors={p.errors} />
        ))}
        <PaymentChoice env={p.env} session={p.session} chosen={p.payment} />
        <p class="hint">Runs started here fire no webhook events (only API submissions do).</p>
        <button type="submit">Submit</button>
      </form>
    </Layout>
  );
}
