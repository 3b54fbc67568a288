// `npm install` runs this (postinstall): what running the service needs beyond the Node packages — the
// GA worker's Python environment (container/.venv, container/requirements.txt), the Worker's static
// assets and the local D1 database. Nothing of testing: the test commands install their own extras on
// first use (scripts/install.mjs). Safe to run again; no step needs a Cloudflare account, the internet
// beyond the package registries, or Docker.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildWeb } from "./build-web.mjs";
import { installWorkerRuntime } from "./install.mjs";
import { makePrivate, migrateLocal, ROOT } from "./lib.mjs";

if (process.env.ALLELE_SKIP_SETUP === "1") process.exit(0);

installWorkerRuntime();

console.log("setup: building the Worker's static assets (dist/web: the dashboard's code, /docs's Swagger UI)");
await buildWeb({ quiet: true });

mkdirSync(join(ROOT, ".wrangler"), { recursive: true, mode: 0o700 });
console.log("setup: applying D1 migrations to the local database");
migrateLocal();
makePrivate(join(ROOT, ".wrangler")); // local D1/R2/DO files and state: this user's only
console.log("setup: done — `npm start` runs Allele locally; `npm test` runs every test (it installs the test tools it needs on first use)");
