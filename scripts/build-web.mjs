// Builds the dashboard's browser assets (web/client → dist/web/assets) with esbuild: app.js + app.css
// (every page: charts with uPlot, live progress, copy buttons) and editor.js (CodeMirror, only on pages
// with code). The Worker serves dist/web as its static assets (wrangler.toml [assets]): no CDN.
// Run by `npm install` (setup), `npm start`, `npm test`, the test config and the deploy check; ~0.2 s.
import { build } from "esbuild";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./lib.mjs";

export const WEB_DIST = join(ROOT, "dist", "web");

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
    entryPoints: { app: join(ROOT, "web", "client", "app.ts"), editor: join(ROOT, "web", "client", "editor.ts") },
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
  writeIfChanged(join(out, "favicon.svg"), readFileSync(join(ROOT, "web", "client", "favicon.svg")));
  return result.metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const meta = await buildWeb();
  for (const [file, info] of Object.entries(meta.outputs)) console.log(`build-web: ${file.replace(`${ROOT}/`, "")} ${info.bytes} bytes`);
}
