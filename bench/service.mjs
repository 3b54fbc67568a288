// Issue 3's benchmark: a job run through the whole service (submit → succeeded, polling the API)
// against the same job run by bare PyGAD in one Python process, alternating, medians of each.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, VENV_PYTHON } from "../scripts/lib.mjs";
import { fmt, median } from "./stats.mjs";

const JOBS = [
  { name: "small", num_generations: 100, sol_per_pop: 50, num_parents_mating: 4, num_genes: 10, repeats: 7 },
  { name: "large", num_generations: 1000, sol_per_pop: 100, num_parents_mating: 4, num_genes: 100, repeats: 3 },
];
const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

function bare(job, seed, engine = "stock") {
  const args = [
    join(ROOT, "bench", "bare_pygad.py"),
    job.num_generations,
    job.sol_per_pop,
    job.num_parents_mating,
    job.num_genes,
    seed,
    engine,
  ];
  const res = spawnSync(VENV_PYTHON, args.map(String), { encoding: "utf8", env: { PATH: process.env.PATH, OPENBLAS_NUM_THREADS: "1" } });
  if (res.status !== 0) throw new Error(`bare PyGAD failed: ${res.stderr}`);
  return JSON.parse(res.stdout).seconds;
}

/** fetch, retried once when a kept-alive connection was closed by the server while idle (the bare
 * PyGAD runs in between leave it idle for seconds). Safe for the create: it carries an Idempotency-Key. */
async function fetchRetry(url, init) {
  try {
    return await fetch(url, init);
  } catch (err) {
    if (err?.cause?.code !== "UND_ERR_SOCKET") throw err;
    return fetch(url, init);
  }
}

async function throughService(api, key, job, seed) {
  const body = { name: `bench-${job.name}`, ...job, random_seed: seed, fitness_func: FITNESS, fitness_func_entry: "fitness" };
  delete body.repeats;
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const started = performance.now();
  const created = await fetchRetry(`${api}/submissions/`, {
    method: "POST",
    headers: { ...headers, "Idempotency-Key": crypto.randomUUID() },
    body: JSON.stringify(body),
  });
  if (created.status !== 202) throw new Error(`create failed: ${created.status} ${await created.text()}`);
  const { id } = await created.json();
  for (;;) {
    const row = await (await fetchRetry(`${api}/submissions/${id}`, { headers })).json();
    if (row.status === "succeeded") return { seconds: (performance.now() - started) / 1000, cpu: row.cpu_seconds_used };
    if (row.status === "failed" || row.status === "cancelled") throw new Error(`run ${row.status}: ${JSON.stringify(row.error)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function run({ baseUrl, key, smoke = false }) {
  const api = `${baseUrl}/api/v1`;
  const rows = [];
  for (const job of smoke ? JOBS.slice(0, 1).map((j) => ({ ...j, repeats: 1 })) : JOBS) {
    const service = [];
    const billed = [];
    const stock = [];
    const accelerated = [];
    for (let i = 0; i < job.repeats; i++) {
      stock.push(bare(job, i));
      accelerated.push(bare(job, i, "accelerated"));
      const { seconds, cpu } = await throughService(api, key, job, i);
      service.push(seconds);
      billed.push(cpu);
    }
    const s = median(service);
    const b = median(stock);
    const a = median(accelerated);
    rows.push({
      job: job.name,
      service_s: s,
      bare_pygad_s: b,
      bare_engine_s: a,
      ratio: s / b,
      overhead_s: s - b,
      service_overhead_s: s - a,
      billed_cpu_s: median(billed),
      repeats: job.repeats,
    });
  }
  console.log("\n## Service vs bare PyGAD (submit → succeeded; medians, measured alternately)\n");
  console.log(
    "| job | service (s) | bare PyGAD (s) | service / bare PyGAD | service − bare PyGAD (s) | bare, service's engine (s) | service − bare engine (s) | billed CPU (s) |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.job} (${r.repeats}×) | ${fmt(r.service_s, 3)} | ${fmt(r.bare_pygad_s, 3)} | ${fmt(r.ratio)} | ${fmt(r.overhead_s, 3)} | ${fmt(r.bare_engine_s, 3)} | ${fmt(r.service_overhead_s, 3)} | ${fmt(r.billed_cpu_s, 3)} |`,
    );
  }
  return rows;
}
