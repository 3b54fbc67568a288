/** @jsxImportSource hono/jsx */
// One field of the new-submission form (docs/dashboard.md#new-submission): its label, its control (a code
// editor with its entry symbol, a choice, a text area or a text input), its hint and its error.
import type { FormField, FormValues } from "./forms";
import { Libraries } from "./libraries";

interface FieldProps {
  f: FormField;
  values: FormValues;
  errors: Record<string, string>;
}

/** The attributes every control of a field carries: its id and name, what describes it, whether it is invalid. */
function commonOf(f: FormField, errors: Record<string, string>) {
  const id = `f-${f.name}`;
  const error = errors[f.name];
  const described = [f.hint || f.default ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
  return { id, name: f.name, "aria-describedby": described, "aria-invalid": error ? "true" : undefined };
}

const Label = (p: { f: FormField }) => (
  <label for={`f-${p.f.name}`}>
    {p.f.label}
    {p.f.required && <span class="req"> (required)</span>}
  </label>
);

const Hint = (p: { f: FormField }) =>
  p.f.hint || p.f.default ? (
    <p class="hint" id={`f-${p.f.name}-hint`}>
      {p.f.hint}
      {p.f.default && <span class="default"> Default: {p.f.default}.</span>}
    </p>
  ) : null;

const ErrorText = (p: { id: string; error: string | undefined }) =>
  p.error ? (
    <p class="field-error" id={`${p.id}-error`}>
      {p.error}
    </p>
  ) : null;

/** The API field a code field fills: its own, or a custom operator's (`param`). */
const fieldOf = (f: FormField) => f.param ?? f.name;

/** A code field's entry symbol: the top-level name to call, suggested from the code as it is typed. */
function EntryInput(p: FieldProps) {
  const entry = `${fieldOf(p.f)}_entry`;
  const entryError = p.errors[entry];
  return (
    <>
      <label for={`f-${entry}`} class="entry-label">
        Entry symbol
      </label>
      <input
        id={`f-${entry}`}
        name={entry}
        value={p.values[entry] ?? ""}
        class="entry"
        list={`f-${entry}-names`}
        autocomplete="off"
        spellcheck={false}
        aria-describedby={`f-${entry}-hint${entryError ? ` f-${entry}-error` : ""}`}
        aria-invalid={entryError ? "true" : undefined}
      />
      <datalist id={`f-${entry}-names`}></datalist>
      <p class="hint" id={`f-${entry}-hint`}>
        The top-level name to call{p.f.name === "gene_constraint" ? " (a list)" : ""}; suggested from the code as you type.
      </p>
      <ErrorText id={`f-${entry}`} error={entryError} />
    </>
  );
}

/** A code field: the Python editor, then its entry symbol. */
function CodeField(p: FieldProps) {
  const { f, values, errors } = p;
  const invalid = errors[f.name] || errors[`${fieldOf(f)}_entry`] || (f.param ? errors[f.param] : undefined);
  return (
    <div class={`field code-field${invalid ? " invalid" : ""}`}>
      <Label f={f} />
      <Hint f={f} />
      <textarea
        {...commonOf(f, errors)}
        class="code-input"
        data-editor="python"
        data-entry={`f-${fieldOf(f)}_entry`}
        rows={f.required ? 10 : 4}
        spellcheck={false}
      >
        {values[f.name] ?? ""}
      </textarea>
      <ErrorText id={`f-${f.name}`} error={errors[f.name] ?? (f.param ? errors[f.param] : undefined)} />
      <EntryInput {...p} />
      {f.name === "fitness_func" && <Libraries />}
    </div>
  );
}

/** A choice among a select's options (or yes / no), empty for the default. */
function ChoiceControl(p: FieldProps) {
  const { f, values } = p;
  const options =
    f.kind === "bool"
      ? [
          ["true", "yes"],
          ["false", "no"],
        ]
      : (f.options ?? []);
  return (
    <select {...commonOf(f, p.errors)}>
      <option value="">{f.default ? `default (${f.default})` : "—"}</option>
      {options.map(([value, label]) => (
        <option value={value} selected={values[f.name] === value}>
          {label}
        </option>
      ))}
    </select>
  );
}

/** A one-line text input: numbers take their pattern and keyboard, suggestions a datalist. */
function TextControl(p: FieldProps) {
  const { f, values } = p;
  const id = `f-${f.name}`;
  const numeric = f.kind === "int" || f.kind === "number";
  return (
    <>
      <input
        {...commonOf(f, p.errors)}
        value={values[f.name] ?? ""}
        type="text"
        inputmode={f.kind === "int" ? "numeric" : f.kind === "number" ? "decimal" : undefined}
        pattern={f.kind === "int" ? "-?[0-9]+" : numeric ? "[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?" : undefined}
        required={f.required}
        placeholder={f.default}
        list={f.suggestions ? `${id}-suggestions` : undefined}
        autocomplete={f.suggestions ? "off" : undefined}
        spellcheck={f.kind === "text" ? undefined : false}
      />
      {f.suggestions && (
        <datalist id={`${id}-suggestions`}>
          {f.suggestions.map((v) => (
            <option value={v}></option>
          ))}
        </datalist>
      )}
    </>
  );
}

function Control(p: FieldProps) {
  const { f } = p;
  if (f.kind === "select" || f.kind === "bool") return <ChoiceControl {...p} />;
  if (f.kind === "textarea") {
    return (
      <textarea {...commonOf(f, p.errors)} rows={2}>
        {p.values[f.name] ?? ""}
      </textarea>
    );
  }
  return <TextControl {...p} />;
}

export function Field(p: FieldProps) {
  if (p.f.kind === "code") return <CodeField {...p} />;
  const error = p.errors[p.f.name];
  return (
    <div class={`field${error ? " invalid" : ""}`}>
      <Label f={p.f} />
      <Control {...p} />
      <Hint f={p.f} />
      <ErrorText id={`f-${p.f.name}`} error={error} />
    </div>
  );
}
