// `npm run admin -- <command> [options]`: the operator commands, over the admin HTTP surface.
// ALLELE_URL (default http://localhost:8787) and ADMIN_TOKEN (default: the one `npm start` printed).
import { parseArgs } from "node:util";
import { LOCAL_STATE, readJson } from "./lib.mjs";

const USAGE = `usage: npm run admin -- <command> [options]

  create-account --email E --plan free|trial|premium [--credits N]
  show-account   --account ID
  update-account --account ID [--plan P] [--override NAME=VALUE ...]   (VALUE "null" clears one)
  credits        --account ID --amount N [--kind paid|free]            (N may be negative)
  create-key     --account ID --name NAME --scopes s1,s2 [--expires-at ISO-8601]
  revoke-key     --prefix alk_XXXXXXXX
  login-link     --account ID [--ttl-minutes N]   one-time dashboard sign-in link (default 60 minutes)

Overrides: concurrent_submissions, inflight_api_runs, daily_quota, max_num_generations,
max_num_genes, negative_balance_cap.`;

const OPTIONS = {
  email: { type: "string" },
  plan: { type: "string" },
  credits: { type: "string" },
  account: { type: "string" },
  override: { type: "string", multiple: true },
  amount: { type: "string" },
  kind: { type: "string" },
  name: { type: "string" },
  scopes: { type: "string" },
  "expires-at": { type: "string" },
  prefix: { type: "string" },
  "ttl-minutes": { type: "string" },
};

/** `--amount -1.5` → `--amount=-1.5`: parseArgs would take a value starting with "-" for an option. */
function joinNegativeValues(args) {
  const out = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i].startsWith("--") && !args[i].includes("=") && /^-\d/.test(args[i + 1] ?? "")) out.push(`${args[i]}=${args[++i]}`);
    else out.push(args[i]);
  }
  return out;
}

let parsed;
try {
  parsed = parseArgs({ args: joinNegativeValues(process.argv.slice(2)), allowPositionals: true, options: OPTIONS });
} catch (err) {
  console.error(`${err.message}\n\n${USAGE}`);
  process.exit(2);
}
const { positionals, values } = parsed;

const [command] = positionals;
const base = (process.env.ALLELE_URL ?? `http://localhost:${process.env.PORT ?? 8787}`).replace(/\/$/, "");
const token = process.env.ADMIN_TOKEN || readJson(LOCAL_STATE, {}).adminToken;

function need(name) {
  if (values[name] === undefined) {
    console.error(`${command} needs --${name}\n\n${USAGE}`);
    process.exit(2);
  }
  return values[name];
}

const number = (name) => {
  const n = Number(need(name));
  if (!Number.isFinite(n)) {
    console.error(`--${name} must be a number`);
    process.exit(2);
  }
  return n;
};

function requestFor() {
  switch (command) {
    case "create-account":
      return ["POST", "/accounts", { email: need("email"), plan: need("plan"), credits: values.credits ? number("credits") : 0 }];
    case "show-account":
      return ["GET", `/accounts/${need("account")}`];
    case "update-account": {
      const overrides = {};
      for (const pair of values.override ?? []) {
        const [key, value] = pair.split("=");
        overrides[key] = value === "null" ? null : Number(value);
      }
      const body = {};
      if (values.plan) body.plan = values.plan;
      if (values.override) body.overrides = overrides;
      return ["PATCH", `/accounts/${need("account")}`, body];
    }
    case "credits":
      return ["POST", `/accounts/${need("account")}/credits`, { amount: number("amount"), kind: values.kind ?? "paid" }];
    case "create-key":
      return [
        "POST",
        `/accounts/${need("account")}/keys`,
        {
          name: need("name"),
          scopes: need("scopes")
            .split(",")
            .map((s) => s.trim()),
          expires_at: values["expires-at"] ?? null,
        },
      ];
    case "revoke-key":
      return ["POST", `/keys/${need("prefix")}/revoke`];
    case "login-link":
      return ["POST", `/accounts/${need("account")}/sign-in-links`, values["ttl-minutes"] ? { ttl_minutes: number("ttl-minutes") } : {}];
    default:
      console.log(USAGE);
      process.exit(command && command !== "help" ? 2 : 0);
  }
}

if (!token) {
  console.error("No admin token: set ADMIN_TOKEN (npm start prints the local one).");
  process.exit(2);
}
const [method, path, body] = requestFor();
const res = await fetch(`${base}/admin/v1${path}`, {
  method,
  headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
  body: body ? JSON.stringify(body) : undefined,
}).catch((err) => {
  console.error(`cannot reach ${base}: ${err.cause?.code ?? err.message}`);
  process.exit(1);
});
const text = await res.text();
try {
  console.log(JSON.stringify(JSON.parse(text), null, 2));
} catch {
  console.log(text);
}
process.exit(res.ok ? 0 : 1);
