/** @jsxImportSource hono/jsx */
// The quick submission types in the dashboard (docs/dashboard.md#quick-types): a type picker, and the
// chosen type's inputs as a form made from its schema (the JSON Schema GET /api/v1/submission-types
// lists): a choice is a select, text is text, anything else (numbers, lists, objects) is JSON.
import type { Payment } from "../../admission/limits";
import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import { QUICK, QUICK_TYPES, type QuickType, quickTypeListing } from "../../model/quick-types";
import { Csrf, Layout } from "../shared/layout";
import { PaymentChoice } from "./parts";

type Property = { type?: string; enum?: unknown[]; description?: string; default?: unknown };
export type QuickFormValues = Record<string, string>;

/** The type's inputs by name, as its JSON Schema describes them. */
export function quickProperties(type: QuickType): [string, Property][] {
  const listed = quickTypeListing().find((t) => t.name === type)!;
  return Object.entries((listed.inputs.properties ?? {}) as Record<string, Property>);
}

const isText = (p: Property) => p.type === "string" || Array.isArray(p.enum);

/** A form's values for the type's example inputs (what the page starts from). */
export function quickExampleValues(type: QuickType): QuickFormValues {
  const example = QUICK[type].example as Record<string, unknown>;
  const values: QuickFormValues = { type };
  for (const [name, p] of quickProperties(type)) {
    const v = example[name];
    if (v !== undefined) values[name] = isText(p) && typeof v === "string" ? v : JSON.stringify(v);
  }
  return values;
}

/**
 * The API's body of a quick type from the form: its inputs (text as given, the rest read as JSON), the
 * optional GA sizes, the name; a field that is not JSON is an error named by the field.
 */
export function quickFormToBody(
  type: QuickType,
  values: QuickFormValues,
): { body: Record<string, unknown>; errors: Record<string, string> } {
  const body: Record<string, unknown> = { submission_type: type };
  const errors: Record<string, string> = {};
  if (values.name) body.name = values.name;
  for (const [name, p] of quickProperties(type)) {
    const raw = (values[name] ?? "").trim();
    if (raw === "") continue;
    if (isText(p)) body[name] = raw;
    else {
      try {
        body[name] = JSON.parse(raw);
      } catch {
        errors[name] = "must be JSON (a number, a list like [1, 2], or an object)";
      }
    }
  }
  for (const name of ["num_generations", "sol_per_pop", "random_seed"]) {
    const raw = (values[name] ?? "").trim();
    if (raw === "") continue;
    const n = Number(raw);
    if (Number.isFinite(n)) body[name] = n;
    else errors[name] = "must be a number";
  }
  return { body, errors };
}

function Input(p: { name: string; label: string; hint?: string; value: string; error?: string; property?: Property }) {
  const id = `f-${p.name}`;
  const described = [p.hint ? `${id}-hint` : "", p.error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  const choices = p.property?.enum;
  const long = p.property && !isText(p.property) && p.property.type !== "number" && p.property.type !== "integer";
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {choices ? (
        <select id={id} name={p.name} aria-describedby={described} aria-invalid={p.error ? "true" : undefined}>
          <option value="" selected={p.value === ""}>
            —
          </option>
          {choices.map((c) => (
            <option value={String(c)} selected={p.value === String(c)}>
              {String(c)}
            </option>
          ))}
        </select>
      ) : long ? (
        <textarea
          id={id}
          name={p.name}
          rows={3}
          spellcheck={false}
          aria-describedby={described}
          aria-invalid={p.error ? "true" : undefined}
        >
          {p.value}
        </textarea>
      ) : (
        <input id={id} name={p.name} value={p.value} aria-describedby={described} aria-invalid={p.error ? "true" : undefined} />
      )}
      {p.hint && (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      )}
      {p.error && (
        <p class="field-error" id={`${id}-error`}>
          {p.error}
        </p>
      )}
    </div>
  );
}

export function QuickSubmissionPage(p: {
  env: Bindings;
  session: Session;
  type: QuickType;
  values: QuickFormValues;
  errors: Record<string, string>;
  formError?: string;
  payment: Payment;
}) {
  const listed = quickTypeListing();
  const current = listed.find((t) => t.name === p.type)!;
  const defaults = current.defaults as Record<string, unknown>;
  const errorCount = Object.keys(p.errors).length;
  return (
    <Layout title="New quick submission" session={p.session} section="new">
      <h1>New quick submission</h1>
      <p>
        A built-in problem with its own fitness function and GA defaults (<a href="/docs">API</a>: <code>submission_type</code>). Or write
        your own: <a href="/submissions/new">new submission</a>.
      </p>
      <nav aria-label="Quick submission types" class="type-picker">
        <ul>
          {QUICK_TYPES.map((type) => (
            <li>
              <a href={`/submissions/new/quick?type=${type}`} aria-current={type === p.type ? "page" : undefined}>
                <code>{type}</code>
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <h2>
        <code>{p.type}</code>
      </h2>
      <p class="muted">{current.description}</p>
      {(p.formError || errorCount > 0) && (
        <div class="flash error" role="alert" id="form-errors">
          {p.formError && <p>{p.formError}</p>}
          {errorCount > 0 && (
            <ul class="error-list">
              {Object.entries(p.errors).map(([name, message]) => (
                <li>
                  <a href={`#f-${name}`}>{name}</a> {message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <form method="post" action="/submissions/new/quick" class="submission-form quick-form" novalidate>
        <Csrf session={p.session} />
        <input type="hidden" name="type" value={p.type} />
        <div class="fields">
          <Input name="name" label="Name" value={p.values.name ?? ""} error={p.errors.name} />
          {quickProperties(p.type).map(([name, property]) => (
            <Input
              name={name}
              label={name}
              hint={property.description}
              value={p.values[name] ?? ""}
              error={p.errors[name]}
              property={property}
            />
          ))}
          <Input
            name="num_generations"
            label="num_generations"
            hint={`empty: the type's default (${defaults.num_generations})`}
            value={p.values.num_generations ?? ""}
            error={p.errors.num_generations}
          />
          <Input
            name="sol_per_pop"
            label="sol_per_pop"
            hint={`empty: the type's default (${defaults.sol_per_pop})`}
            value={p.values.sol_per_pop ?? ""}
            error={p.errors.sol_per_pop}
          />
          <Input name="random_seed" label="random_seed" hint="optional" value={p.values.random_seed ?? ""} error={p.errors.random_seed} />
        </div>
        <PaymentChoice env={p.env} session={p.session} chosen={p.payment} />
        <button type="submit">Submit</button>
      </form>
    </Layout>
  );
}
