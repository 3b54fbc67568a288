/** @jsxImportSource hono/jsx */
// The data files page (docs/dashboard.md#data-files): the account's files with their download and delete
// buttons, and the form that uploads one (multipart; works without the script).
import type { Session } from "../../domain/sessions";
import type { DataFileRow } from "../../storage/data-files";
import { ActionButton, Csrf, fmtBytes, Layout, Pager, Time } from "../shared/layout";

/** The upload form: `_csrf` first, so the server checks it before it stores a byte of the file. */
export function UploadForm(p: { session: Session; maxBytes: number; back?: string }) {
  return (
    <form
      method="post"
      action={`/data-files${p.back ? `?back=${encodeURIComponent(p.back)}` : ""}`}
      enctype="multipart/form-data"
      class="upload"
    >
      <Csrf session={p.session} />
      <label for="data-file">File</label>
      <input type="file" id="data-file" name="file" required aria-describedby="data-file-hint" />
      <p class="hint" id="data-file-hint">
        Up to {fmtBytes(p.maxBytes)}. Its file name is its name: a run reads it at <code>/data/&lt;name&gt;</code>.
      </p>
      <button type="submit">Upload</button>
    </form>
  );
}

function FilesTable(p: { session: Session; rows: DataFileRow[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Type</th>
            <th scope="col">SHA-256</th>
            <th scope="col">Uploaded</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {p.rows.map((f) => (
            <tr>
              <td>
                <code>{f.name}</code>
                <div class="muted small">{f.id}</div>
              </td>
              <td>{fmtBytes(f.sizeBytes)}</td>
              <td>{f.contentType}</td>
              <td>
                <code title={f.sha256}>{f.sha256.slice(0, 12)}…</code>
              </td>
              <td>
                <Time iso={f.createdAt} />
              </td>
              <td>
                <a href={`/data-files/${f.id}/content`} download={f.name}>
                  Download
                </a>{" "}
                <ActionButton
                  session={p.session}
                  action={`/data-files/${f.id}/delete`}
                  label="Delete"
                  danger
                  confirm={`Delete ${f.name}? Submissions that use it keep reading it.`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DataFilesPage(p: {
  session: Session;
  rows: DataFileRow[];
  next: string | null;
  previous: string | null;
  limits: { maxBytes: number; perSubmission: number; storage: number };
  used: number;
}) {
  return (
    <Layout title="Data files" session={p.session} section="data-files">
      <h1>Data files</h1>
      <p>
        Your own files for your fitness functions: name them in a job (the form's “Data files”, or <code>data_files</code> in the API) and
        the run reads each at <code>/data/&lt;name&gt;</code>, read-only. Deleting one here leaves it to the submissions that already use
        it: their reruns and continues still read it.
      </p>
      <p class="muted">
        Storage: {fmtBytes(p.used)} of {fmtBytes(p.limits.storage)} (files still used by a submission count until it is deleted); up to{" "}
        {p.limits.perSubmission} files per job.
      </p>
      {p.rows.length === 0 ? <p class="empty">No data files yet.</p> : <FilesTable session={p.session} rows={p.rows} />}
      <Pager base="/data-files" next={p.next} previous={p.previous} />
      <section class="panel" aria-labelledby="upload-h">
        <h2 id="upload-h">Upload a file</h2>
        <UploadForm session={p.session} maxBytes={p.limits.maxBytes} />
      </section>
    </Layout>
  );
}
