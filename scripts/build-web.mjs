// Builds the Worker's static assets (wrangler.toml [assets], dist/web): no CDN, and none of it in the
// Worker's script.
// - The dashboard's browser code (web/browser → dist/web/assets) with esbuild: app.js + app.css (every
//   page: charts with uPlot, live progress, copy buttons) and editor.js (CodeMirror, only on pages with code).
// - The /docs page's Swagger UI files (swagger-ui-dist, Apache-2.0 → dist/web/docs): the page itself
//   and its configuration come from the Worker (src/http/routes/docs.ts), under its Content-Security-Policy.
// Run by `npm install` (setup), `npm start`, `npm test`, the test config and the deploy check; ~0.2 s.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { ROOT } from "./root.mjs";

export const WEB_DIST = join(ROOT, "dist", "web");

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
/** dist/web/docs/<name> ← swagger-ui-dist/<file>: what the /docs page loads, and the licences that cover it. */
const SWAGGER_UI_FILES = {
  "swagger-ui-bundle.js": "swagger-ui-bundle.js",
  "swagger-ui.css": "swagger-ui.css",
  "swagger-ui-bundle.js.LICENSE.txt": "swagger-ui-bundle.js.LICENSE.txt", // named by the bundle's first line
  "LICENSE.swagger-ui.txt": "LICENSE",
  "NOTICE.swagger-ui.txt": "NOTICE",
};

function writeIfChanged(path, contents) {
  if (existsSync(path) && Buffer.compare(readFileSync(path), Buffer.from(contents)) === 0) return;
  writeFileSync(path, contents);
}

export async function buildWeb({ quiet = false } = {}) {
  const out = join(WEB_DIST, "assets");
  // Files are overwritten in place (never removed first): a running `wrangler dev` may be serving them.
  mkdirSync(out, { recursive: true });
  // Written only where a file changed: a `wrangler dev` serving dist/web reloads on every write, and a
  // reload loses its in-memory queues (delayed retries included).
  const result = await build({
    write: false,
    entryPoints: { app: join(ROOT, "web", "browser", "app.ts"), editor: join(ROOT, "web", "browser", "editor.ts") },
    outdir: out,
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022"],
    legalComments: "linked",
    metafile: true,
    logLevel: quiet ? "silent" : "warning",
  });
  for (const file of result.outputFiles) writeIfChanged(file.path, file.contents);
  writeIfChanged(join(out, "favicon.svg"), readFileSync(join(ROOT, "web", "browser", "favicon.svg")));
  const docs = join(WEB_DIST, "docs");
  mkdirSync(docs, { recursive: true });
  for (const [name, file] of Object.entries(SWAGGER_UI_FILES)) writeIfChanged(join(docs, name), readFileSync(join(SWAGGER_UI, file)));
  return result.metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const meta = await buildWeb();
  for (const [file, info] of Object.entries(meta.outputs)) console.log(`build-web: ${file.replace(`${ROOT}/`, "")} ${info.bytes} bytes`);
}
