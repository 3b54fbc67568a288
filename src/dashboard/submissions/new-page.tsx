/** @jsxImportSource hono/jsx */
// The new-submission page (docs/dashboard.md#new-submission): the fields by group, the data files to
// attach (and, with the page's script, a file to upload and attach), what needs attention, and how the
// run is paid.
import type { Payment } from "../../admission/limits";
import type { Session } from "../../domain/sessions";
import type { Bindings } from "../../env";
import type { DataFileRow } from "../../storage/data-files";
import { Csrf, fmtBytes, Layout } from "../shared/layout";
import { Field } from "./field";
import { FORM_FIELDS, type FormField, type FormValues, GROUPS, labelOfField } from "./forms";
import { PaymentChoice } from "./parts";

/** What keeps the form from being sent: a refusal of the whole form, and the fields that need attention (linked). */
export function FormErrors(p: { errors: Record<string, string>; formError?: string }) {
  const count = Object.keys(p.errors).length;
  if (!p.formError && count === 0) return null;
  return (
    <div class="flash error" role="alert" id="form-errors">
      {p.formError && <p>{p.formError}</p>}
      {count > 0 && (
        <>
          <p>{count === 1 ? "One field needs" : `${count} fields need`} attention:</p>
          <ul class="error-list">
            {Object.entries(p.errors).map(([name, message]) => (
              <li>
                <a href={`#f-${name}`}>{labelOfField(name)}</a> {message}
              </li>
            ))}
          </ul>
        </>
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

/** The ids a form's `data_files` value holds (a JSON list, as bodyToForm and the create handler write it). */
export function chosenFiles(value: string | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(value ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

/**
 * The account's data files as checkboxes (`data_files`), those of the copied job or the form sent
 * checked; with the script, "Upload and attach" sends a file to /data-files and adds it here, checked.
 */
export function DataFilesChooser(p: { session: Session; files: DataFileRow[]; chosen: string[]; error?: string }) {
  const listed = new Set(p.files.map((f) => f.id));
  const unlisted = p.chosen.filter((id) => !listed.has(id));
  return (
    <details class="group" open={p.chosen.length > 0 || p.error !== undefined}>
      <summary>
        <h2>Data files</h2>
      </summary>
      <fieldset id="f-data_files" class="file-choices" aria-describedby={`f-data_files-hint${p.error ? " f-data_files-error" : ""}`}>
        <legend>Files the run reads, read-only, at /data/&lt;name&gt;</legend>
        <ul data-file-list>
          {unlisted.map((id) => (
            <li>
              <label>
                <input type="checkbox" name="data_files" value={id} checked /> <code>{id}</code>{" "}
                <span class="muted small">(no longer in your data files)</span>
              </label>
            </li>
          ))}
          {p.files.map((f) => (
            <li>
              <label>
                <input type="checkbox" name="data_files" value={f.id} checked={p.chosen.includes(f.id)} /> <code>{f.name}</code>{" "}
                <span class="muted small">{fmtBytes(f.sizeBytes)}</span>
              </label>
            </li>
          ))}
        </ul>
        {p.files.length === 0 && unlisted.length === 0 && (
          <p class="empty" data-file-empty>
            No data files yet.
          </p>
        )}
        <p class="hint" id="f-data_files-hint">
          A fitness function opens them as <code>open("/data/jobs.csv")</code>. Manage them on the <a href="/data-files">Data files</a>{" "}
          page.
        </p>
        <div class="upload-inline" data-upload-url="/data-files" data-csrf={p.session.row.csrfToken} hidden>
          <label for="data-file-attach">Upload and attach</label>
          <input type="file" id="data-file-attach" aria-describedby="data-file-attach-status" />
          <p class="hint" id="data-file-attach-status" role="status" aria-live="polite" data-upload-status></p>
        </div>
        {p.error && (
          <p class="field-error" id="f-data_files-error">
            {p.error}
          </p>
        )}
      </fieldset>
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
  /** The account's data files the form offers. */
  dataFiles: DataFileRow[];
}) {
  return (
    <Layout title="New submission" session={p.session} section="new" scripts={["editor"]}>
      <h1>New submission</h1>
      <p>
        Or start a built-in problem without code: a <a href="/submissions/new/quick">quick submission type</a> (subset sum, knapsack,
        scikit-learn tuners, a Keras XOR network).
      </p>
      <FormErrors errors={p.errors} formError={p.formError} />
      <form method="post" action="/submissions/new" class="submission-form" novalidate>
        <Csrf session={p.session} />
        {GROUPS.map(([group, title]) => (
          <>
            <FieldGroup group={group} title={title} values={p.values} errors={p.errors} />
            {group === "basic" && (
              <DataFilesChooser
                session={p.session}
                files={p.dataFiles}
                chosen={chosenFiles(p.values.data_files)}
                error={p.errors.data_files}
              />
            )}
          </>
        ))}
        <PaymentChoice env={p.env} session={p.session} chosen={p.payment} />
        <p class="hint">Runs started here fire no webhook events (only API submissions do).</p>
        <button type="submit">Submit</button>
      </form>
    </Layout>
  );
}
