// `npm run deploy:check`: `wrangler deploy --dry-run` offline. The real config builds the container image
// from container/Dockerfile (needs Docker at deploy time), which a dry run cannot do offline, so the
// check uses a copy of wrangler.toml whose image is a registry reference; everything else is identical.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWeb, WEB_DIST } from "./build-web.mjs";
import { ROOT, run, wranglerBin } from "./lib.mjs";

const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
const image = 'image = "./container/Dockerfile"';
if (!config.includes(image)) throw new Error(`wrangler.toml no longer has ${image}; update scripts/deploy-check.mjs`);
const checked = join(ROOT, ".wrangler", "deploy-check.toml");
await buildWeb({ quiet: true });
writeFileSync(
  checked,
  config
    .replaceAll(image, 'image = "registry.cloudflare.com/allele/ga-worker:dry-run"')
    .replace('main = "src/index.ts"', `main = "${join(ROOT, "src", "index.ts")}"`)
    .replace('directory = "./dist/web"', `directory = "${WEB_DIST}"`),
);
const out = mkdtempSync(join(ROOT, ".wrangler", "dry-run-"));
try {
  run(wranglerBin, ["deploy", "--dry-run", "--config", checked, "--outdir", out]);
  console.log("deploy:check: wrangler deploy --dry-run succeeded");
} finally {
  rmSync(out, { recursive: true, force: true });
}
