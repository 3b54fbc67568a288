// `npm run openapi`: writes docs/openapi.json (the public API) and docs/openapi.admin.json (the admin API),
// generated from the app's routes exactly as the Worker serves them at GET /api/v1/openapi.json and
// GET /admin/v1/openapi.json (src/http/openapi/). `--check` writes nothing and fails when a committed file
// differs. The app is bundled with esbuild for Node; `cloudflare:*` modules, which only the Durable
// Objects and containers need at run time, are stubbed.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { ROOT } from "./lib.mjs";

export const DOCUMENTS = { public: join(ROOT, "docs", "openapi.json"), admin: join(ROOT, "docs", "openapi.admin.json") };

/** The documents as the code produces them, serialised as committed (2-space JSON, trailing newline). */
export async function generate() {
  const dir = mkdtempSync(join(tmpdir(), "allele-openapi-"));
  try {
    const out = join(dir, "entry.mjs");
    await build({
      stdin: {
        contents: `import { newApp } from "./src/app.ts"; import { generateDocument } from "./src/http/openapi/document.ts";
          export const documents = async () => { const app = newApp(); return { public: await generateDocument(app, "public"), admin: await generateDocument(app, "admin") }; };`,
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: out,
      logLevel: "error",
      plugins: [
        {
          name: "cloudflare-stubs",
          setup(b) {
            b.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "stub" }));
            b.onLoad({ filter: /.*/, namespace: "stub" }, () => ({
              contents: "export class DurableObject {} export class WorkerEntrypoint {} export const env = {};",
              loader: "js",
            }));
          },
        },
      ],
    });
    const { documents } = await import(pathToFileURL(out).href);
    const docs = await documents();
    return Object.fromEntries(Object.entries(docs).map(([kind, doc]) => [kind, `${JSON.stringify(doc, null, 2)}\n`]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const check = process.argv.includes("--check");
  const generated = await generate();
  let stale = 0;
  for (const [kind, text] of Object.entries(generated)) {
    const path = DOCUMENTS[kind];
    let committed = "";
    try {
      committed = readFileSync(path, "utf8");
    } catch {}
    if (committed === text) continue;
    if (check) {
      console.error(`${path} differs from what the code generates: run \`npm run openapi\` and commit it`);
      stale++;
    } else {
      writeFileSync(path, text);
      console.log(`wrote ${path}`);
    }
  }
  process.exit(stale ? 1 : 0);
}
