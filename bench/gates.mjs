// Issue 4's benchmark: latency of a gated POST /submissions and of a GET /submissions/{id} against a
// bare Hono route in the same `wrangler dev`, interleaved request by request; and how many admissions
// per second one account's Durable Object serves.
import { fmt, median, percentile } from "./stats.mjs";

async function timed(url, init) {
  const started = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  const ms = performance.now() - started;
  return { ms, status: res.status, res };
}

export async function run({ baseUrl, key, requests = 1000, admissions: admissionCount = 2000 }) {
  const api = `${baseUrl}/api/v1`;
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const body = JSON.stringify({
    name: "bench",
    num_generations: 1,
    num_parents_mating: 2,
    sol_per_pop: 4,
    num_genes: 2,
    fitness_func: "def f(ga, s, i):\n    return 1.0\n",
    fitness_func_entry: "f",
  });
  const first = await fetch(`${api}/submissions/`, { method: "POST", headers, body });
  const { id } = await first.json();
  const samples = { bare: [], barePost: [], d1: [], do: [], write: [], read: [] };
  // Warm up, then measure the three interleaved so that machine noise hits them alike.
  for (let i = 0; i < 50; i++) await timed(`${baseUrl}/__bench/bare`);
  for (let i = 0; i < requests; i++) {
    samples.bare.push((await timed(`${baseUrl}/__bench/bare`)).ms);
    samples.barePost.push((await timed(`${baseUrl}/__bench/bare`, { method: "POST", headers, body })).ms);
    if (i % 4 === 0) {
      samples.d1.push((await timed(`${baseUrl}/__bench/d1`)).ms);
      samples.do.push((await timed(`${baseUrl}/__bench/do`)).ms);
    }
    const w = await timed(`${api}/submissions/`, { method: "POST", headers, body });
    if (w.status !== 202) throw new Error(`gated write answered ${w.status}`);
    samples.write.push(w.ms);
    samples.read.push((await timed(`${api}/submissions/${id}`, { headers })).ms);
  }
  const admissions = await (await fetch(`${baseUrl}/__bench/admissions?n=${admissionCount}`)).json();
  const row = (name, s) => ({ name, median_ms: median(s), p99_ms: percentile(s, 99) });
  const rows = [
    row("bare Hono route", samples.bare),
    row("bare Hono route, POST with the same JSON body", samples.barePost),
    row("one D1 query (SELECT 1)", samples.d1),
    row("one Durable Object call", samples.do),
    row("gated POST /submissions", samples.write),
    row("GET /submissions/{id}", samples.read),
  ];
  console.log(`\n## Gates: latency over ${requests} requests each (interleaved), one client, keep-alive\n`);
  console.log("| route | median (ms) | p99 (ms) | median over bare (ms) |");
  console.log("|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.name} | ${fmt(r.median_ms)} | ${fmt(r.p99_ms)} | ${fmt(r.median_ms - rows[0].median_ms)} |`);
  const write = rows.find((r) => r.name.startsWith("gated POST"));
  console.log(`\nGated write over the bare POST of the same body: ${fmt(write.median_ms - rows[1].median_ms)} ms at the median.`);
  console.log(
    `\nAccount Durable Object: ${admissions.admissions} admissions in ${fmt(admissions.elapsed_ms, 0)} ms = ${fmt(admissions.per_second, 0)} per second (sequential, from one Worker).`,
  );
  return { rows, admissions };
}
