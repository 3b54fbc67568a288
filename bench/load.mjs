// `npm run bench -- load`: many accounts at once against the local service (`npm start`'s setup: the GA
// worker with one place per CPU, RUN_CAPACITY the same). 20 accounts × 10 runs of a job whose engine
// time is ≈ 0.2 s, all submitted at once (bench accounts: their slot, in-flight and quota limits raised
// by the admin API, so nothing waits on the client side), plus one more account that submits a single
// run when half of the others have finished. Reports: every run's outcome, the total time against the
// floor (the same jobs run by the engine in one process per CPU, no service), queue waits (the late
// run's against the median; each account's median: fairness), and the service's peak memory.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { ROOT, VENV_PYTHON } from "../scripts/lib.mjs";
import { benchAccount } from "./accounts.mjs";
import { fmt, median } from "./stats.mjs";

const JOB = { num_generations: 900, sol_per_pop: 50, num_parents_mating: 4, num_genes: 10 };
const FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n";

/** The floor: the same jobs by the engine alone, one process per CPU, each running its share in turn. */
async function floor(jobs, cpus) {
  const started = performance.now();
  const shares = Array.from({ length: cpus }, (_, i) => Math.floor(jobs / cpus) + (i < jobs % cpus ? 1 : 0)).filter((n) => n > 0);
  await Promise.all(
    shares.map(
      (count, i) =>
        new Promise((resolve, reject) => {
          const args = [
            join(ROOT, "bench", "bare_pygad.py"),
            JOB.num_generations,
            JOB.sol_per_pop,
            JOB.num_parents_mating,
            JOB.num_genes,
            i * 1000,
            "accelerated",
            "--jobs",
            count,
          ];
          const child = spawn(VENV_PYTHON, args.map(String), { env: { PATH: process.env.PATH, OPENBLAS_NUM_THREADS: "1" } });
          child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`floor process exited ${code}`))));
        }),
    ),
  );
  return (performance.now() - started) / 1000;
}

/** Per process of the machine: parent, resident MB, CPU seconds used so far by it and its reaped children. */
function processes() {
  const found = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      found.set(Number(entry), { parent: Number(f[1]), rssMb: (Number(f[21]) * 4096) / 2 ** 20, cpu: ticks / 100 });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Sum of `field` over `roots` and all their descendants. */
function treeSum(table, roots, field) {
  const inTree = (pid) => {
    for (let p = pid; p > 1; p = table.get(p)?.parent ?? 0) if (roots.includes(p)) return true;
    return false;
  };
  let total = 0;
  for (const [pid, row] of table) if (inTree(pid)) total += row[field];
  return total;
}

async function submit(api, key, seed) {
  const res = await fetch(`${api}/submissions/`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Idempotency-Key": crypto.randomUUID() },
    body: JSON.stringify({ name: "load", ...JOB, random_seed: seed, fitness_func: FITNESS, fitness_func_entry: "fitness" }),
  });
  if (res.status !== 202) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

export async function run({ baseUrl, adminToken, pids, workerPid, smoke = false }) {
  const api = `${baseUrl}/api/v1`;
  const cpus = availableParallelism();
  const accounts = smoke ? 3 : 20;
  const perAccount = smoke ? 2 : 10;
  const keys = await Promise.all(Array.from({ length: accounts + 1 }, () => benchAccount(baseUrl, adminToken)));
  const lateKey = keys.pop();

  let peakMb = 0;
  const workerdPids = pids.filter((p) => p !== workerPid);
  const cpuAtStart = processes();
  const cpu = { service: -treeSum(cpuAtStart, workerdPids, "cpu"), ga: -treeSum(cpuAtStart, [workerPid], "cpu") };
  const sampler = setInterval(() => (peakMb = Math.max(peakMb, treeSum(processes(), pids, "rssMb"))), 200);
  const started = performance.now();
  const runs = []; // { key, id, account }
  await Promise.all(
    keys.map(async (key, account) => {
      for (let i = 0; i < perAccount; i++) runs.push({ key, account, id: await submit(api, key, account * 100 + i) });
    }),
  );
  const total = runs.length;
  let late = null;
  const done = new Map();
  while (done.size < total + 1) {
    for (const r of [...runs, ...(late ? [late] : [])]) {
      if (done.has(r.id)) continue;
      const row = await (await fetch(`${api}/submissions/${r.id}`, { headers: { Authorization: `Bearer ${r.key}` } })).json();
      if (["succeeded", "failed", "cancelled"].includes(row.status)) done.set(r.id, { ...r, row });
    }
    if (!late && [...done.values()].filter((d) => d.account !== "late").length >= total / 2) {
      late = { key: lateKey, account: "late", id: await submit(api, lateKey, 999_999) };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const elapsed = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const cpuAtEnd = processes();
  cpu.service += treeSum(cpuAtEnd, workerdPids, "cpu");
  cpu.ga += treeSum(cpuAtEnd, [workerPid], "cpu"); // the GA worker, its fork server and every run it reaped

  const outcomes = [...done.values()];
  const failed = outcomes.filter((d) => d.row.status !== "succeeded");
  const capped = outcomes.filter((d) => d.row.hit_time_cap);
  const waitOf = (d) => (Date.parse(d.row.started_at) - Date.parse(d.row.queued_at)) / 1000;
  const ran = outcomes.filter((d) => d.row.started_at);
  const waits = ran.filter((d) => d.account !== "late").map(waitOf);
  const lateRun = ran.find((d) => d.account === "late");
  const perAccountMedian = keys.map((_, a) => median(ran.filter((d) => d.account === a).map(waitOf)));
  const floorSeconds = await floor(total + 1, cpus);
  const oneJob = floorSeconds / Math.ceil((total + 1) / cpus);

  console.log(`\n## Load: ${accounts} accounts × ${perAccount} runs + 1 late run (${cpus} CPUs, ${cpus} places)\n`);
  const rows = [
    [
      "runs",
      `${outcomes.length}: ${outcomes.length - failed.length} succeeded, ${failed.length} not (${[...new Set(failed.map((d) => d.row.error?.code ?? d.row.status))].join(", ") || "—"}), ${capped.length} with hit_time_cap`,
    ],
    ["total time, submit → last succeeded", `${fmt(elapsed)} s`],
    ["floor: the same jobs by the engine, one process per CPU", `${fmt(floorSeconds)} s (one job ≈ ${fmt(oneJob)} s)`],
    ["total / floor", fmt(elapsed / floorSeconds)],
    [`queue wait (queued → started), median of the ${total}`, `${fmt(median(waits))} s`],
    ["queue wait of the late single run", lateRun ? `${fmt(waitOf(lateRun))} s (${fmt(waitOf(lateRun) / oneJob)} × one job per CPU)` : "—"],
    [
      "per-account median wait, max / min",
      `${fmt(Math.max(...perAccountMedian))} s / ${fmt(Math.min(...perAccountMedian))} s = ${fmt(Math.max(...perAccountMedian) / Math.max(Math.min(...perAccountMedian), 1e-9))}`,
    ],
    ["peak memory of the whole service (Worker + GA worker + runs)", `${fmt(peakMb, 0)} MB`],
    ["CPU used meanwhile: the Worker (wrangler dev, workerd)", `${fmt(cpu.service)} s (${fmt(cpu.service / (total + 1), 3)} s per run)`],
    ["CPU used meanwhile: the GA worker and its runs", `${fmt(cpu.ga)} s (${fmt(cpu.ga / (total + 1), 3)} s per run)`],
    ["CPU-seconds available (CPUs × total time)", `${fmt(cpus * elapsed)} s`],
  ];
  console.log("| measure | value |\n|---|---|");
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  return {
    elapsed,
    floorSeconds,
    failed: failed.length,
    capped: capped.length,
    medianWait: median(waits),
    lateWait: lateRun ? waitOf(lateRun) : null,
    perAccountMedian,
    peakMb,
    cpu,
  };
}
