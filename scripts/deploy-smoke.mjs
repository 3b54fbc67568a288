// `npm run deploy:smoke -- --url <deployed URL> --key <API key> [--webhook-url <a receiver that answers 2xx>]`
// (docs/deploy.md#smoke): knows that a deployment can run at all — its health (the database, the files
// bucket, the GA worker), one job end to end with the key, one webhook delivered to a receiver the
// operator gives, and — after the job, so an instance has started — the GA worker's sandbox measures
// (each printed; one that may never be absent fails, one that may be absent warns:
// scripts/smoke-isolation.mjs). Fails loudly, naming what is missing; exit status 1.
import { parseArgs } from "node:util";
import { isolationVerdict } from "./smoke-isolation.mjs";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    key: { type: "string" },
    "webhook-url": { type: "string" },
    timeout: { type: "string", default: "600" },
  },
});

const failures = [];
const say = (text) => console.log(`deploy:smoke: ${text}`);
const fail = (text) => {
  failures.push(text);
  console.error(`deploy:smoke: MISSING: ${text}`);
};

function done() {
  if (failures.length) {
    console.error(`deploy:smoke FAILED (${failures.length}): ${failures.join("; ")}`);
    process.exit(1);
  }
  say("OK: healthy, a job ran end to end, the sandbox measures hold, and a webhook was delivered");
  process.exit(0);
}

if (!values.url || !values.key) {
  console.error("usage: npm run deploy:smoke -- --url <deployed URL> --key <API key> [--webhook-url <receiver>]");
  process.exit(2);
}
const base = values.url.replace(/\/$/, "");
const deadline = Date.now() + Number(values.timeout) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function call(path, { method, body } = {}) {
  const headers = { Authorization: `Bearer ${values.key}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  try {
    const res = await fetch(`${base}${path}`, {
      method: method ?? (body !== undefined ? "POST" : "GET"),
      headers,
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: res.status, body: json, text };
  } catch (err) {
    return { status: 0, body: null, text: String(err) };
  }
}

// 1. Health: every part up (the GA worker "on_demand" in production: a container per run).
const health = await call("/api/v1/health");
if (health.status === 0) {
  fail(`the Worker at ${base} cannot be reached (${health.text})`);
  done();
}
for (const [part, check] of Object.entries(health.body?.checks ?? {})) {
  if (check.status === "down") fail(`${part} is down: ${check.reason}`);
  else say(`${part}: ${check.status}`);
}
if (!health.body?.checks) fail(`/api/v1/health answered ${health.status} without checks`);

// 2. A webhook to the operator's receiver, subscribed before the run ends.
let webhook = null;
if (values["webhook-url"]) {
  const created = await call("/api/v1/webhooks", { body: { url: values["webhook-url"], events: ["submission.succeeded"] } });
  if (created.status === 201) webhook = created.body;
  else fail(`the webhook could not be registered (${created.status}: ${created.body?.error?.message ?? created.text.slice(0, 200)})`);
} else say("no --webhook-url: webhook delivery not checked");

// 3. One job end to end with the key.
const job = {
  name: "deploy smoke",
  num_generations: 20,
  num_parents_mating: 4,
  sol_per_pop: 10,
  num_genes: 4,
  random_seed: 1,
  fitness_func: "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n",
  fitness_func_entry: "fitness",
};
const created = await call("/api/v1/submissions", { body: job });
if (created.status !== 202) {
  fail(
    `the job was refused (${created.status}: ${created.body?.error?.code ?? ""} ${created.body?.error?.message ?? created.text.slice(0, 200)})`,
  );
} else {
  let submission = null;
  while (Date.now() < deadline) {
    const res = await call(`/api/v1/submissions/${created.body.id}`);
    if (["succeeded", "failed", "cancelled"].includes(res.body?.status)) {
      submission = res.body;
      break;
    }
    await sleep(1000);
  }
  if (!submission) fail(`the job did not end within ${values.timeout} s (still ${created.body.status}: no GA worker took it?)`);
  else if (submission.status !== "succeeded")
    fail(
      `the job ${submission.status}: ${submission.error?.code ?? ""} ${submission.error?.message ?? ""} (an isolation measure the platform refused fails every run)`,
    );
  else say(`the job succeeded in ${submission.execution_duration_ms} ms (engine: ${submission.latest_run?.id ? "ran" : "?"})`);
  // 4. Its webhook delivered.
  if (webhook && submission?.status === "succeeded") {
    let delivered = null;
    while (Date.now() < deadline && !delivered) {
      const log = await call(`/api/v1/webhooks/${webhook.id}/deliveries`);
      delivered = (log.body?.results ?? []).find((d) => d.event_type === "submission.succeeded" && d.status === "succeeded");
      const failed = (log.body?.results ?? []).find((d) => d.status === "failed");
      if (failed) {
        fail(`the webhook delivery to ${values["webhook-url"]} failed (${failed.attempt_count} attempt(s))`);
        break;
      }
      if (!delivered) await sleep(1000);
    }
    if (delivered) say(`webhook delivered to ${values["webhook-url"]}`);
    else if (!failures.some((f) => f.startsWith("the webhook"))) fail(`no webhook delivered to ${values["webhook-url"]} in time`);
  }
}
if (webhook) await call(`/api/v1/webhooks/${webhook.id}`, { method: "DELETE" });

// 5. The sandbox measures, read now that the job's instance has started and reported them.
const after = await call("/api/v1/health");
const verdict = isolationVerdict(after.body);
for (const line of verdict.lines) say(line);
for (const warning of verdict.warnings) console.warn(`deploy:smoke: WARNING: ${warning}`);
for (const failure of verdict.failures) fail(failure);
done();
