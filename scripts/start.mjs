// `npm start`: the whole service locally — the Worker under `wrangler dev` (local D1, Queues, R2,
// Durable Objects) and the Python GA worker as a process — plus an idempotently seeded demo account.
// Env: PORT (default 8787), WORKER_PORT (default PORT + 1), ADMIN_TOKEN, ALLELE_DEMO_KEY, ALLELE_STATE_DIR,
// WEBHOOK_ALLOW_PRIVATE (default true here). The Worker's vars reach wrangler in a 0600 file, never on a
// command line; a GA worker that crashes is restarted.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  LOCAL_STATE,
  makePrivate,
  migrateLocal,
  PERSIST_TO,
  privately,
  readJson,
  run,
  STATE_DIR,
  startLocalService,
  wranglerBin,
  writeJson,
} from "./lib.mjs";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = (n) =>
  [...randomBytes(n * 2)]
    .filter((b) => b < 248)
    .slice(0, n)
    .map((b) => BASE62[b % 62])
    .join("");
const KEY_PATTERN = /^(alk_[0-9A-Za-z]{8})_[0-9A-Za-z]{40}$/;
const DEMO_ACCOUNT = "DemoAccount1";
const ALL_SCOPES = ["submissions:read", "submissions:write", "results:read", "results:write", "webhooks:read", "webhooks:write"];

const port = Number(process.env.PORT ?? 8787);
const workerPort = Number(process.env.WORKER_PORT ?? port + 1);

mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
makePrivate(STATE_DIR); // state written by an older version, before the scripts' umask
const state = readJson(LOCAL_STATE, {});
state.adminToken = process.env.ADMIN_TOKEN || state.adminToken || `adm_${base62(32)}`;
state.runTokenSecret ||= base62(48);
if (process.env.ALLELE_DEMO_KEY) {
  if (!KEY_PATTERN.test(process.env.ALLELE_DEMO_KEY)) {
    console.error("ALLELE_DEMO_KEY must look like alk_XXXXXXXX_ followed by 40 base62 characters");
    process.exit(2);
  }
  state.demoKey = process.env.ALLELE_DEMO_KEY;
}
state.demoKey ||= `alk_${base62(8)}_${base62(40)}`;
writeJson(LOCAL_STATE, state);

// Local database: migrations, then the demo account (premium, 100.00 credits once) and its key.
migrateLocal(PERSIST_TO);
const now = new Date().toISOString();
const prefix = KEY_PATTERN.exec(state.demoKey)[1];
const hash = createHash("sha256").update(state.demoKey).digest("hex");
const q = (s) => `'${String(s).replaceAll("'", "''")}'`;
const seed = `
INSERT OR IGNORE INTO accounts (id, email, plan, overrides, free_credits_micro, paid_credits_micro, created_at, updated_at)
  VALUES (${q(DEMO_ACCOUNT)}, 'demo@allele.local', 'premium', '{}', 0, 100000000, ${q(now)}, ${q(now)});
INSERT OR IGNORE INTO credit_ledger (id, account_id, kind, amount_micro, free_delta_micro, paid_delta_micro, created_at)
  VALUES ('DemoGrant001', ${q(DEMO_ACCOUNT)}, 'grant', 100000000, 0, 100000000, ${q(now)});
INSERT OR IGNORE INTO api_keys (id, account_id, prefix, key_hash, name, scopes, created_at)
  VALUES (${q(base62(12))}, ${q(DEMO_ACCOUNT)}, ${q(prefix)}, ${q(hash)}, 'demo', ${q(JSON.stringify(ALL_SCOPES))}, ${q(now)});
`;
const seedFile = join(mkdtempSync(join(tmpdir(), "allele-seed-")), "seed.sql");
writeFileSync(seedFile, seed);
const persist = PERSIST_TO ? ["--persist-to", PERSIST_TO] : [];
privately(() =>
  run(wranglerBin, ["d1", "execute", "DB", "--local", "--file", seedFile, ...persist], { stdio: ["ignore", "ignore", "inherit"] }),
);
rmSync(dirname(seedFile), { recursive: true, force: true });

let service;
service = await startLocalService({
  port,
  workerPort,
  persistTo: PERSIST_TO,
  migrate: false,
  vars: {
    ADMIN_TOKEN: state.adminToken,
    RUN_TOKEN_SECRET: state.runTokenSecret,
    REPORT_BASE_URL: `http://127.0.0.1:${port}`,
    // Local receivers (127.0.0.1) are allowed by default here; WEBHOOK_ALLOW_PRIVATE=false checks as production does.
    WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? "true",
  },
  onExit: (part, code) => {
    console.error(`${part} exited (${code}); stopping`);
    void (service?.stop() ?? Promise.resolve()).then(() => process.exit(code ?? 1));
  },
});
const base = `http://localhost:${port}`;
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => void service.stop().then(() => process.exit(0)));

// wrangler dev does not fire cron triggers by itself: tick the scheduled handler every minute.
setInterval(() => fetch(`${base}/__scheduled?cron=*+*+*+*+*`).catch(() => undefined), 60_000).unref();

// A one-time sign-in link to the dashboard for the demo account (valid 24 hours), through the admin API.
const link = await fetch(`${base}/admin/v1/accounts/${DEMO_ACCOUNT}/sign-in-links`, {
  method: "POST",
  headers: { Authorization: `Bearer ${state.adminToken}`, "Content-Type": "application/json" },
  body: JSON.stringify({ ttl_minutes: 24 * 60 }),
})
  .then(async (res) => (res.ok ? (await res.json()).url : null))
  .catch(() => null);

console.log(`
Allele is running at ${base} (GA worker on 127.0.0.1:${workerPort})

  Dashboard: open this one-time sign-in link (valid 24 hours; \`npm run admin -- login-link --account ${DEMO_ACCOUNT}\` makes another):
    ${link ?? "(could not create one; see the Worker's log)"}

  Demo API key (premium plan, 100.00 credits): ${state.demoKey}
  Admin token:                                  ${state.adminToken}

Try it:

  curl -s -X POST ${base}/api/v1/submissions/ \\
    -H "Authorization: Bearer ${state.demoKey}" -H "Content-Type: application/json" \\
    -d '{"name": "sphere", "num_generations": 50, "num_parents_mating": 4, "sol_per_pop": 20, "num_genes": 5,
         "fitness_func": "def fitness(ga, solution, idx):\\n    return -float((solution ** 2).sum())\\n",
         "fitness_func_entry": "fitness"}'

  curl -s ${base}/api/v1/results/ -H "Authorization: Bearer ${state.demoKey}"

Interactive API docs: ${base}/docs (Authorize with the demo key, then "Try it out")
OpenAPI document:     ${base}/api/v1/openapi.json

Operator commands: npm run admin -- help
`);
