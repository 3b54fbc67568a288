// Data files end to end (docs/api.md#data-files), against `wrangler dev` and the real GA worker: a CSV
// uploaded as a data file is read at /data/<name> by a fitness function (with the csv module; pandas
// too); its listing deleted, a continue of the submission still reads it; a burst of ten runs of one
// file downloads it once (the GA worker's /health counts its downloads); a sweep's children read the
// file of its base.
import { describe, expect, inject, it } from "vitest";
import { baseUrl, call, job, newAccount, waitForStatus } from "./client";

const CSV = "job,duration\na,3\nb,5\nc,2\nd,7\n";
// The fitness reads the table once, with the csv module, and counts what it read into the result.
const READS_CSV = [
  "import csv",
  "with open('/data/jobs.csv', newline='') as handle:",
  "    JOBS = list(csv.DictReader(line for line in handle if not line.startswith('#')))",
  "TOTAL = sum(int(job['duration']) for job in JOBS)",
  "print('read', len(JOBS), 'jobs of', TOTAL)",
  "",
  "def fitness(ga, solution, idx):",
  "    return -abs(float(solution.sum()) - TOTAL)",
  "",
].join("\n");

async function upload(key: string, name: string, content: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append("file", new Blob([content], { type: "text/csv" }), name);
  const res = await fetch(`${baseUrl()}/api/v1/data-files`, { method: "POST", headers: { Authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json() };
}

const workerHealth = async () =>
  (await (await fetch(`${inject("workerUrl")}/health`)).json()) as { data_cache: { downloads: number; hits: number } };

async function latestResult(key: string, submissionId: string) {
  const list = await call(`/api/v1/results/?submission_id=${submissionId}`, { key });
  return (await call(`/api/v1/results/${list.body.results[0].id}`, { key })).body;
}

describe("data files in real runs", () => {
  it("a fitness function reads /data/<name>; after the listing is deleted a continue still reads it", async () => {
    const { key } = await newAccount();
    const uploaded = await upload(key, "jobs.csv", CSV);
    expect(uploaded.status).toBe(201);
    const created = await call("/api/v1/submissions/", {
      key,
      body: job({ num_genes: 3, num_generations: 20, random_seed: 3, fitness_func: READS_CSV, data_files: [uploaded.body.id] }),
    });
    expect(created.status).toBe(202);
    const done = await waitForStatus(key, created.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.logs).toContain("read 4 jobs of 17");
    const result = await latestResult(key, created.body.id);
    expect(result.parameters.data_files).toEqual([uploaded.body.id]);

    expect((await call(`/api/v1/data-files/${uploaded.body.id}`, { key, method: "DELETE" })).status).toBe(204);
    expect((await call(`/api/v1/data-files/${uploaded.body.id}`, { key })).status).toBe(404);
    const continued = await call(`/api/v1/results/${result.id}/continue`, { key, body: { num_generations: 10 } });
    expect(continued.status).toBe(202);
    const again = await waitForStatus(key, created.body.id, (s) => s === "succeeded" || s === "failed");
    expect(again.status, JSON.stringify(again.error)).toBe("succeeded");
    expect(again.latest_run.kind).toBe("continue");
    expect(again.logs).toContain("read 4 jobs of 17");
  });

  it("pandas reads the same CSV at /data/<name>", async () => {
    const { key } = await newAccount();
    const uploaded = await upload(key, "jobs.csv", CSV);
    const withPandas = [
      "import pandas",
      "JOBS = pandas.read_csv('/data/jobs.csv')",
      "print('pandas read', len(JOBS), 'jobs of', int(JOBS['duration'].sum()))",
      "",
      "def fitness(ga, solution, idx):",
      "    return -abs(float(solution.sum()) - float(JOBS['duration'].sum()))",
      "",
    ].join("\n");
    const created = await call("/api/v1/submissions/", {
      key,
      body: job({ num_genes: 3, num_generations: 5, fitness_func: withPandas, data_files: [uploaded.body.id] }),
    });
    expect(created.status).toBe(202);
    const done = await waitForStatus(key, created.body.id, undefined, 180_000);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.logs).toContain("pandas read 4 jobs of 17");
  }, 240_000);

  it("a run that writes to /data/<name> or looks around is refused, and sees only its own files", async () => {
    const { key } = await newAccount();
    const mine = await upload(key, "mine.csv", "x\n");
    await upload(key, "other.csv", "y\n");
    const probe = [
      "import os",
      "def attempt(action):",
      "    try:",
      "        action()",
      "        return 'allowed'",
      "    except OSError as exc:",
      "        return type(exc).__name__",
      "print('listing', sorted(os.listdir('/data')))",
      "print('write', attempt(lambda: open('/data/mine.csv', 'a').write('z')))",
      "print('create', attempt(lambda: open('/data/new.csv', 'w').close()))",
      "def fitness(ga, solution, idx):",
      "    return 0.0",
      "",
    ].join("\n");
    const created = await call("/api/v1/submissions/", {
      key,
      body: job({ num_generations: 2, fitness_func: probe, data_files: [mine.body.id] }),
    });
    const done = await waitForStatus(key, created.body.id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.logs).toContain("listing ['mine.csv']");
    expect(done.logs).not.toContain("write allowed");
    expect(done.logs).not.toContain("create allowed");
  });

  it("a sweep whose base names a data file: every child reads it, and a continue of a child after the listing is deleted", async () => {
    const { key } = await newAccount();
    const uploaded = await upload(key, "jobs.csv", CSV);
    const { name: _name, ...base } = job({ num_genes: 3, num_generations: 10, fitness_func: READS_CSV, data_files: [uploaded.body.id] });
    const created = await call("/api/v1/sweeps", { key, body: { name: "with data", base, grid: { sol_per_pop: [8, 12] }, seeds: 2 } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    expect(created.body.submissions).toHaveLength(4);
    for (const child of created.body.submissions) {
      const done = await waitForStatus(key, child.id, undefined, 180_000);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(done.logs).toContain("read 4 jobs of 17");
    }
    expect((await call(`/api/v1/data-files/${uploaded.body.id}`, { key, method: "DELETE" })).status).toBe(204);
    const first = created.body.submissions[0].id;
    const result = await latestResult(key, first);
    expect((await call(`/api/v1/results/${result.id}/continue`, { key, body: { num_generations: 5 } })).status).toBe(202);
    const again = await waitForStatus(key, first, (s) => s === "succeeded" || s === "failed");
    expect(again.status, JSON.stringify(again.error)).toBe("succeeded");
    expect(again.latest_run.kind).toBe("continue");
    expect(again.logs).toContain("read 4 jobs of 17");
  }, 300_000);

  it("a burst of ten runs reading one file downloads it once", async () => {
    const { id, key } = await newAccount();
    // Room for ten queued runs at once.
    await call(`/admin/v1/accounts/${id}`, {
      method: "PATCH",
      token: inject("adminToken"),
      body: { overrides: { concurrent_submissions: 20, inflight_api_runs: 20 } },
    });
    const unique = `${CSV}# ${crypto.randomUUID()}\n`; // bytes no earlier test brought into the cache
    const uploaded = await upload(key, "jobs.csv", unique);
    const before = (await workerHealth()).data_cache;
    const ids = [];
    for (let n = 0; n < 10; n++) {
      const created = await call("/api/v1/submissions/", {
        key,
        body: job({ num_genes: 3, num_generations: 5, random_seed: n, fitness_func: READS_CSV, data_files: [uploaded.body.id] }),
      });
      expect(created.status).toBe(202);
      ids.push(created.body.id);
    }
    for (const id of ids) {
      const done = await waitForStatus(key, id, undefined, 180_000);
      expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      expect(done.logs).toContain("read 4 jobs of 17");
    }
    const after = (await workerHealth()).data_cache;
    expect(after.downloads - before.downloads).toBe(1);
    expect(after.hits - before.hits).toBe(9);
  }, 300_000);
});
