/** @jsxImportSource hono/jsx */
// "Libraries you can import", beside the fitness function's editor (docs/dashboard.md#new-submission): the
// GA worker's environment as GET /api/v1/environment serves it (model/environment.ts, one source).
import { ENVIRONMENT } from "../../model/environment";

export function Libraries() {
  const featured = ENVIRONMENT.packages.filter((p) => p.featured);
  const others = ENVIRONMENT.packages.filter((p) => !p.featured);
  const { memory, threads, data_files: data } = ENVIRONMENT;
  return (
    <details class="libraries" id="libraries">
      <summary>Libraries you can import</summary>
      <p class="hint">
        Python {ENVIRONMENT.python}, the standard library, and these packages at exactly these versions (also{" "}
        <a href="/api/v1/environment">GET /api/v1/environment</a>):
      </p>
      <table class="libraries-table">
        <thead>
          <tr>
            <th scope="col">Package</th>
            <th scope="col">Version</th>
            <th scope="col">Import</th>
          </tr>
        </thead>
        <tbody>
          {featured.map((p) => (
            <tr>
              <td>{p.name}</td>
              <td>{p.version}</td>
              <td>
                <code>{p.modules.map((m) => `import ${m}`).join("; ")}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">
        TensorFlow (and <code>pygad.kerasga</code>) needs a run memory cap of at least {memory.tensorflow_min_memory_mb} MB: runs paid with
        credits have it, and so do the trial and premium plans'; below it <code>import tensorflow</code> fails with an error that says so.
        Thread pools ({threads.variables.join(", ")}) are sized to the run's CPUs: 1, or N with parallel processing N.{" "}
        {data.available ? `Data files are read-only at ${data.mount}/<name>.` : `Data files (at ${data.mount}) are not available yet.`}
      </p>
      <p class="hint">
        Also importable (their dependencies):{" "}
        {others.map((p, i) => (
          <>
            {i > 0 && ", "}
            {p.name} {p.version}
          </>
        ))}
        .
      </p>
    </details>
  );
}
