// The TypeScript client (clients/typescript): `node scripts/client.mjs` regenerates its types from
// docs/openapi.json (openapi-typescript) and builds it (tsc → clients/typescript/dist); `--check` fails
// when the committed types differ from what docs/openapi.json gives, then builds. Its own tools live in
// clients/typescript/node_modules, installed on first use (scripts/install.mjs, "client-tools").
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installExtras } from "./install.mjs";
import { ROOT } from "./lib.mjs";

export const CLIENT = join(ROOT, "clients", "typescript");
const bin = (name) => join(CLIENT, "node_modules", ".bin", name);
const SCHEMA = join(CLIENT, "src", "schema.ts");

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: CLIENT, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (r.status !== 0) {
    process.stdout.write(r.stdout ?? "");
    process.exit(r.status ?? 1);
  }
}

installExtras(["client-tools"]);
const check = process.argv.includes("--check");
const dir = mkdtempSync(join(tmpdir(), "allele-client-"));
try {
  const target = check ? join(dir, "schema.ts") : SCHEMA;
  run(bin("openapi-typescript"), [join(ROOT, "docs", "openapi.json"), "--output", target, "--silent"]);
  if (check && readFileSync(target, "utf8") !== readFileSync(SCHEMA, "utf8")) {
    console.error("clients/typescript/src/schema.ts differs from what docs/openapi.json gives: run `npm run client` and commit it");
    process.exit(1);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
run(bin("tsc"), ["-p", "tsconfig.json"]);
console.log(check ? "clients/typescript: types match docs/openapi.json; built" : "clients/typescript: types regenerated; built into dist/");
