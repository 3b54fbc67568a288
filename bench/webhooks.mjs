// Issue 5's benchmark, against a running service started with WEBHOOK_ALLOW_PRIVATE=true:
//  1. latency: time from a run's end (the event's occurred_at, stamped when the run's end is written)
//     to the receipt of its submission.succeeded by a local receiver — median and p99 over 200 runs;
//  2. throughput: deliveries per second to a receiver that answers at once, over a burst of 1000
//     deliveries that all come due together (20 webhooks × 50 events, first attempts refused with 503,
//     so the retries after the 1-minute delay arrive as one burst).
import { createServer } from "node:http";
import { fmt, median, percentile } from "./stats.mjs";

const RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 200);
const IN_FLIGHT = 8;
const BURST_RUNS = 25; // × 20 webhooks × 2 events = 1000 deliveries
const TINY = {
  name: "bench-webhook",
  num_generations: 1,
  num_parents_mating: 2,
  sol_per_pop: 4,
  num_genes: 2,
  fitness_func: "def fitness(ga, solution, idx):\n    return float(solution[0])\n",
  fitness_func_entry: "fitness",
};

function receiver() {
  const state = { received: [], refuse: false };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      state.received.push({ at, path: req.url, body, refused: state.refuse });
      res.writeHead(state.refuse ? 503 : 204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, state, url: `http://127.0.0.1:${server.address().port}` })),
  );
}

async function api(baseUrl, path, { key, token, method, body } = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: method ?? (body ? "POST" : "GET"),
    headers: { Authorization: `Bearer ${key ?? token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method ?? "POST"} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function account(baseUrl, adminToken) {
  const { account, key } = await api(baseUrl, "/admin/v1/accounts", {
    token: adminToken,
    body: { email: `bench-webhooks-${Date.now()}-${Math.random()}@example.com`, plan: "premium", credits: 100000 },
  });
  await api(baseUrl, `/admin/v1/accounts/${account.id}`, {
    token: adminToken,
    method: "PATCH",
    body: { overrides: { concurrent_submissions: 100000, inflight_api_runs: 100000, daily_quota: 100000 } },
  });
  return key;
}

async function waitUntil(predicate, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run({ baseUrl, adminToken, smoke = false }) {
  const runs = smoke ? 3 : RUNS;
  const burstRuns = smoke ? 1 : BURST_RUNS;
  const rx = await receiver();
  try {
    // 1. Latency, one webhook, 200 runs with a few in flight at a time.
    const key = await account(baseUrl, adminToken);
    await api(baseUrl, "/api/v1/webhooks", { key, body: { url: `${rx.url}/latency`, events: ["submission.succeeded"] } });
    const got = () => rx.state.received.filter((r) => r.path === "/latency").length;
    let submitted = 0;
    while (submitted < runs) {
      const wave = Math.min(IN_FLIGHT, runs - submitted);
      await Promise.all(Array.from({ length: wave }, () => api(baseUrl, "/api/v1/submissions/", { key, body: TINY })));
      submitted += wave;
      await waitUntil(() => got() >= submitted, 120_000, `${submitted} deliveries`);
    }
    const latencies = rx.state.received.filter((r) => r.path === "/latency").map((r) => r.at - Date.parse(r.body.occurred_at));

    // 2. Throughput: 1000 deliveries due at once, to a receiver that answers at once.
    const key2 = await account(baseUrl, adminToken);
    for (let i = 0; i < 20; i++) {
      await api(baseUrl, "/api/v1/webhooks", {
        key: key2,
        body: { url: `${rx.url}/burst/${i}`, events: ["submission.succeeded", "result.completed"] },
      });
    }
    const burst = () => rx.state.received.filter((r) => r.path.startsWith("/burst/"));
    const expected = burstRuns * 20 * 2;
    rx.state.refuse = !smoke; // a smoke run does not wait a minute for the retries
    await Promise.all(Array.from({ length: burstRuns }, () => api(baseUrl, "/api/v1/submissions/", { key: key2, body: TINY })));
    await waitUntil(() => burst().length >= expected, 180_000, "first attempts of the burst");
    rx.state.refuse = false;
    await waitUntil(() => burst().filter((r) => !r.refused).length >= expected, 300_000, "retried burst");
    const accepted = burst().filter((r) => !r.refused);
    const first = Math.min(...accepted.map((r) => r.at));
    const last = Math.max(...accepted.map((r) => r.at));
    const throughput = accepted.length / Math.max(0.001, (last - first) / 1000);

    const figures = {
      latency_runs: latencies.length,
      latency_median_ms: median(latencies),
      latency_p99_ms: percentile(latencies, 99),
      latency_max_ms: Math.max(...latencies),
      burst_deliveries: accepted.length,
      burst_seconds: (last - first) / 1000,
      throughput_per_second: throughput,
    };
    console.log("\n## Webhooks: run end → receipt, delivery throughput\n");
    console.log(`| measure | value |\n|---|---|`);
    console.log(`| run end → receipt, median (${latencies.length} runs) | ${fmt(figures.latency_median_ms, 0)} ms |`);
    console.log(`| run end → receipt, p99 | ${fmt(figures.latency_p99_ms, 0)} ms |`);
    console.log(`| run end → receipt, max | ${fmt(figures.latency_max_ms, 0)} ms |`);
    console.log(`| burst of ${accepted.length} due deliveries drained in | ${fmt(figures.burst_seconds, 1)} s |`);
    console.log(`| delivery throughput | ${fmt(throughput, 1)} deliveries/s |`);
    return figures;
  } finally {
    rx.server.close();
  }
}
