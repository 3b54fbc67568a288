// Durable runs from the outside (docs/architecture.md#durable-runs-issue-28): the real GA worker
// under `npm start`'s supervisor and `wrangler dev`, with a short checkpoint interval and heartbeat timeout.
// SIGKILL of the GA worker process in the middle of a run (after a checkpoint): the supervisor starts a new
// one, the cron finds the run silent and resumes it from its checkpoint, and it ends `succeeded` with exactly
// the result of an uninterrupted twin (same body, same seed) — history, best solution, population, files —
// for one objective, several, and save_solutions; billed once; `resumes` and `run.resumed` say it resumed.
import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { freePort, startLocalService } from "../../scripts/lib.mjs";
import { call as callService } from "./client";

const ADMIN = "durable-admin-token-0123456789";
let service: { baseUrl: string; children: ChildProcess[]; log: string[]; stop: () => Promise<void> };
let state: string;
let receiver: Server;
const received: { type: string; data: any }[] = [];
let receiverUrl = "";
let workerPort = 0;

/** A request to the service this file starts (npm start's supervisor), not the global setup's. */
const call = (path: string, opts: Omit<Parameters<typeof callService>[1] & {}, "base"> = {}) =>
  callService(path, { ...opts, base: service.baseUrl });

/** One query's rows from the local D1 database (the ledger and the progress trail: no API shows them). */
function d1(query: string, params: string[]): any[] {
  const dir = join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const script = [
    "import json, sqlite3, sys, glob",
    "rows = []",
    "for path in glob.glob(sys.argv[1] + '/*.sqlite'):",
    "    db = sqlite3.connect(path)",
    "    db.row_factory = sqlite3.Row",
    "    try:",
    "        rows += [dict(r) for r in db.execute(sys.argv[2], sys.argv[3:])]",
    "    except sqlite3.OperationalError:",
    "        pass",
    "print(json.dumps(rows))",
  ].join("\n");
  return JSON.parse(execFileSync("python3", ["-c", script, dir, query, ...params], { encoding: "utf8" }));
}

/** The credit ledger's run charges of these submissions. */
function ledgerRows(submissions: string[]): { submission_id: string; resumes: number; amount_micro: number }[] {
  return d1("SELECT submission_id, resumes, amount_micro FROM credit_ledger WHERE kind = 'run_charge'", []).filter((r) =>
    submissions.includes(r.submission_id),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newAccount(): Promise<string> {
  const res = await call("/admin/v1/accounts", {
    token: ADMIN,
    body: { email: `durable-${crypto.randomUUID()}@example.com`, plan: "premium", credits: 100 },
  });
  if (res.status !== 201) throw new Error(`seed failed: ${res.status} ${res.text}`);
  return res.body.key;
}

/** The GA worker process the supervisor runs now. */
function gaWorker(): ChildProcess {
  const live = service.children.filter(
    (c) => c.spawnargs.join(" ").includes("allele_worker") && c.exitCode === null && c.signalCode === null,
  );
  if (live.length !== 1) throw new Error(`${live.length} live GA workers`);
  return live[0]!;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

async function ended(key: string, id: string) {
  return until(`submission ${id} to end`, async () => {
    // The cron: finds a silent run (its worker lost) and resumes it.
    await fetch(`${service.baseUrl}/__scheduled?cron=*+*+*+*+*`).catch(() => undefined);
    const res = await call(`/api/v1/submissions/${id}`, { key });
    return res.status === 200 && TERMINAL.has(res.body.status) ? res.body : undefined;
  });
}

/** Everything of a run's result that must equal its twin's: the result's fields and its files' bytes. */
async function resultOf(key: string, submission: any) {
  const list = await call(`/api/v1/results/?submission_id=${submission.id}`, { key });
  expect(list.status).toBe(200);
  const [item] = list.body.results;
  return call(`/api/v1/results/${item.id}`, { key });
}

async function outcome(key: string, submission: any) {
  const result = await resultOf(key, submission);
  expect(result.status).toBe(200);
  const r = result.body;
  const files: Record<string, string> = {};
  for (const file of r.files) {
    if (file.name === "result.json" || file.name === "logs.txt") continue; // ids and times differ
    files[file.name] = (await call(new URL(file.url).pathname, { key })).text;
  }
  return {
    best_solution: r.best_solution,
    best_solution_fitness: r.best_solution_fitness,
    best_solution_objectives: r.best_solution_objectives,
    best_solution_generation: r.best_solution_generation,
    best_solutions_fitness: r.best_solutions_fitness,
    objective_maxima: r.objective_maxima,
    generations_completed: r.generations_completed,
    stopped_reason: r.stopped_reason,
    pareto_front_size: r.pareto_front_size,
    engine: r.engine,
    warnings: r.warnings,
    files,
  };
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "allele-durable-"));
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      try {
        const event = JSON.parse(body);
        received.push({ type: event.event_type, data: event.data });
      } catch {
        // not an event
      }
      res.writeHead(200).end();
    });
  });
  const receiverPort = await freePort();
  await new Promise<void>((r) => receiver.listen(receiverPort, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;
  workerPort = await freePort();
  service = await startLocalService({
    port: await freePort(),
    workerPort,
    persistTo: state,
    quiet: true,
    vars: {
      ADMIN_TOKEN: ADMIN,
      RUN_TOKEN_SECRET: "durable-run-token-secret",
      WEBHOOK_ALLOW_PRIVATE: "true",
      RATE_LIMIT_KEY: "1000000",
      RATE_LIMIT_IP: "1000000",
      CHECKPOINT_SECONDS: "0.3",
      HEARTBEAT_TIMEOUT_SECONDS: "4",
    },
  });
}, 240_000);

afterAll(async () => {
  if (process.env.DURABLE_DEBUG) console.error(service?.log.filter((l) => l.startsWith("[ga-worker]")).join(""));
  await service?.stop();
  receiver?.close();
  if (state) rmSync(state, { recursive: true, force: true });
});

// A run of ≈ 10 s or more on this machine: slow enough to be killed in the middle after checkpoints.
const SLOW =
  "import time\nimport numpy\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.004)\n    return -float(numpy.sum(solution ** 2))\n";
const TWO =
  "import time\nimport numpy\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.004)\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";

const base = {
  num_generations: 120,
  num_parents_mating: 6,
  sol_per_pop: 20,
  num_genes: 5,
  fitness_func_entry: "fitness",
  random_seed: 42,
};

const CASES: Record<string, Record<string, unknown>> = {
  "one objective (accelerated)": { ...base, name: "durable-one", fitness_func: SLOW },
  "several objectives (nsga2)": { ...base, name: "durable-moo", fitness_func: TWO, parent_selection_type: "nsga2" },
  "save_solutions (stock)": { ...base, name: "durable-saved", fitness_func: SLOW, save_solutions: true, save_best_solutions: true },
};

describe("a SIGKILLed GA worker's run resumes from its checkpoint", () => {
  for (const [name, body] of Object.entries(CASES)) {
    it(`${name}: ends succeeded with exactly its uninterrupted twin's result, billed once`, async () => {
      const key = await newAccount();
      const hook = await call("/api/v1/webhooks", { key, body: { url: receiverUrl, events: ["run.resumed"] } });
      expect(hook.status).toBe(201);

      const twin = await call("/api/v1/submissions", { key, body });
      expect(twin.status).toBe(202);
      const twinDone = await ended(key, twin.body.id);
      expect(twinDone.status).toBe("succeeded");
      expect(twinDone.latest_run.resumes).toEqual({ count: 0, at: [] });

      const killed = await call("/api/v1/submissions", { key, body });
      expect(killed.status).toBe(202);
      const id = killed.body.id;
      // Running, with a checkpoint past generation 40 and the run not near its end.
      const checkpointed = await until("a checkpoint", async () => {
        const res = await call(`/api/v1/submissions/${id}`, { key });
        const checkpoint = res.body?.latest_run?.checkpoint;
        return res.body?.status === "running" && checkpoint && checkpoint.generation >= 40 ? res.body : undefined;
      });
      expect(checkpointed.generations_completed ?? 0).toBeLessThan(110);
      const from = checkpointed.latest_run.checkpoint.generation as number;
      const worker = gaWorker();
      worker.kill("SIGKILL");
      await until("a new GA worker", async () => {
        try {
          const next = gaWorker();
          return next !== worker ? next : undefined;
        } catch {
          return undefined;
        }
      });
      const done = await ended(key, id);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(done.latest_run.resumes.count).toBeGreaterThanOrEqual(1);
      expect(await outcome(key, done)).toEqual(await outcome(key, twinDone));
      // It went on from its checkpoint, not from generation 0: the live trail never went back below it.
      const [{ progress_trail }] = d1("SELECT progress_trail FROM runs WHERE id = ?", [done.latest_run.id]);
      const generations = (JSON.parse(progress_trail) as [number][]).map((point) => point[0]);
      const back = generations.findIndex((g, i) => i > 0 && g < generations[i - 1]!);
      if (back > 0) expect(Math.min(...generations.slice(back))).toBeGreaterThanOrEqual(from);
      const result = await resultOf(key, done);
      expect(result.body.resumes.count).toBe(done.latest_run.resumes.count);

      // Billed once: one ledger row per run, the killed run's saying it resumed, charged what the runs' rows measured.
      const rows = ledgerRows([twin.body.id, id]);
      expect(rows.map((r) => r.submission_id).sort()).toEqual([twin.body.id, id].sort());
      const row = rows.find((r) => r.submission_id === id)!;
      expect(row.resumes).toBe(done.latest_run.resumes.count);
      expect(row.amount_micro).toBe(-Math.round(done.credits_charged * 1_000_000));
      // The webhook subscribed to run.resumed heard of it.
      await until("run.resumed", async () => received.find((e) => e.type === "run.resumed" && e.data.submission_id === id));
    }, 300_000);
  }
});

describe("SIGTERM drains the GA worker", () => {
  it("hands its run back at once (no cron, no worker_lost): it ends with its twin's result, and the supervisor starts a new worker", async () => {
    const key = await newAccount();
    const body = CASES["one objective (accelerated)"]!;
    const twin = await call("/api/v1/submissions", { key, body });
    const twinDone = await ended(key, twin.body.id);
    expect(twinDone.status).toBe("succeeded");

    const created = await call("/api/v1/submissions", { key, body });
    const id = created.body.id;
    const running = await until("the run past generation 20", async () => {
      const res = await call(`/api/v1/submissions/${id}`, { key });
      return res.body?.status === "running" && (res.body.generations_completed ?? 0) >= 20 ? res.body : undefined;
    });
    const worker = gaWorker();
    const exited = new Promise<number | null>((r) => worker.once("exit", (code) => r(code)));
    worker.kill("SIGTERM");
    // Handed back by the worker itself (the cron is not called here): queued again with a checkpoint at
    // or past the generation it had reached, its resume recorded.
    const handedBack = await until(
      // (debug) dump the worker log on failure

      "the run handed back",
      async () => {
        const res = await call(`/api/v1/submissions/${id}`, { key });
        return res.body?.latest_run?.resumes?.count === 1 ? res.body : undefined;
      },
      60_000,
    );
    expect(handedBack.latest_run.checkpoint.generation).toBeGreaterThanOrEqual(running.generations_completed);
    await exited;
    await until("a new GA worker", async () => {
      try {
        const next = gaWorker();
        return next !== worker ? next : undefined;
      } catch {
        return undefined;
      }
    });
    const done = await until(
      "the run to end",
      async () => {
        const res = await call(`/api/v1/submissions/${id}`, { key });
        return TERMINAL.has(res.body?.status) ? res.body : undefined;
      },
      120_000,
    );
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.latest_run.resumes.count).toBe(1);
    expect(await outcome(key, done)).toEqual(await outcome(key, twinDone));
    const rows = ledgerRows([id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.resumes).toBe(1);
  }, 300_000);
});

describe("chaos", () => {
  it("10+ SIGKILLs at random moments over concurrent runs of two accounts: no run lost, each billed once, every result its twin's", async () => {
    const keys = [await newAccount(), await newAccount()];
    const bodies = [1, 2, 3, 4, 5, 6].map((seed) => ({
      ...base,
      name: `chaos-${seed}`,
      num_generations: 250,
      random_seed: seed,
      fitness_func: SLOW,
      ...(seed % 3 === 0 ? { parent_selection_type: "nsga2", fitness_func: TWO } : {}),
    }));
    // The twins, uninterrupted (all at once: they wait their turn for a place).
    const twinIds = await Promise.all(
      bodies.map(async (body, i) => (await call("/api/v1/submissions", { key: keys[i % 2]!, body })).body.id as string),
    );
    const twins = await Promise.all(twinIds.map((id, i) => ended(keys[i % 2]!, id)));
    for (const twin of twins) expect(twin.status).toBe("succeeded");
    const twinOutcomes = await Promise.all(twins.map((twin, i) => outcome(keys[i % 2]!, twin)));

    // The same bodies again, while the GA worker is killed at random moments (the cron runs every second).
    const runs: { id: string; body: number }[] = [];
    let next = 0;
    const submitNext = async () => {
      const i = next++ % bodies.length;
      const created = await call("/api/v1/submissions", { key: keys[i % 2]!, body: bodies[i] });
      expect(created.status).toBe(202);
      runs.push({ id: created.body.id, body: i });
    };
    for (let i = 0; i < 4; i++) await submitNext();
    let cron = true;
    const crons = (async () => {
      while (cron) {
        await fetch(`${service.baseUrl}/__scheduled?cron=*+*+*+*+*`).catch(() => undefined);
        await sleep(1000);
      }
    })();
    const live = async () => {
      let count = 0;
      for (const r of runs) {
        const res = await call(`/api/v1/submissions/${r.id}`, { key: keys[r.body % 2]! });
        if (!TERMINAL.has(res.body?.status)) count++;
      }
      return count;
    };
    let kills = 0;
    while (kills < 10) {
      // The supervisor gives up after 5 crashes within a minute: a kill every 13 to 18 s, and only once
      // a new worker answers and has run for a few seconds (a worker down most of the time tests the
      // supervisor's pauses, not a resume).
      const pause = sleep(13_000 + Math.random() * 5_000);
      await until("the new GA worker to answer", async () =>
        (await fetch(`http://127.0.0.1:${workerPort}/health`).catch(() => null))?.ok ? true : undefined,
      );
      await Promise.all([pause, sleep(3_000 + Math.random() * 5_000)]);
      if ((await live()) < 2) await submitNext();
      try {
        gaWorker().kill("SIGKILL");
        kills++;
      } catch {
        // between a worker and the next one: try again at the next moment
      }
    }
    await until("every chaos run to end", async () => ((await live()) === 0 ? true : undefined), 600_000);
    cron = false;
    await crons;

    const resumed = [];
    for (const r of runs) {
      const key = keys[r.body % 2]!;
      const done = (await call(`/api/v1/submissions/${r.id}`, { key })).body;
      expect(done.status, `${r.id}: ${JSON.stringify(done.error)}`).toBe("succeeded");
      expect(await outcome(key, done)).toEqual(twinOutcomes[r.body]);
      resumed.push(done.latest_run.resumes.count);
      const rows = ledgerRows([r.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.resumes).toBe(done.latest_run.resumes.count);
      expect(rows[0]!.amount_micro).toBe(-Math.round(done.credits_charged * 1_000_000));
    }
    expect(kills).toBeGreaterThanOrEqual(10);
    expect(resumed.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
  }, 1_200_000);
});
