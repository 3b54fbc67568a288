// Durable runs inside workerd (docs/architecture.md#durable-runs-issue-28): a checkpoint is stored per
// run under a key the server chose and only that run's token reads it; it is capped; an older one never
// replaces a newer; a drained run handed back goes back in line at once with its usage kept for the end;
// cancel and delete win over a resume; the checkpoint goes with the run's end; billing is one ledger row.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { reconcileRuns } from "../../src/queues/scheduled";
import {
  BASE,
  call,
  completeRun,
  createSubmission,
  getSubmission,
  newAccount,
  newResult,
  runToken,
  type TestAccount,
} from "../helpers/api";
import { WebClient } from "../helpers/web";

let account: TestAccount;
beforeEach(async () => {
  account = await newAccount();
});

const run = (id: string) => env.DB.prepare("SELECT * FROM runs WHERE id = ?").bind(id).first<Record<string, any>>();

/** A run of a new submission made `running` as a claim would (no worker is asked). */
async function runningRun() {
  const submissionId = await createSubmission(account.key, {});
  const runId = (await getSubmission(account.key, submissionId)).latest_run.id as string;
  const now = new Date().toISOString();
  await env.DB.prepare("UPDATE runs SET status = 'running', started_at = ?, heartbeat_at = ?, attempts = attempts + 1 WHERE id = ?")
    .bind(now, now, runId)
    .run();
  await env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(submissionId).run();
  return { submissionId, runId };
}

async function internal(runId: string, path: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${init.token ?? (await runToken(runId))}`);
  return worker.fetch(new Request(`${BASE}/internal/v1/runs/${runId}${path}`, { ...init, headers }), env);
}

function putCheckpoint(runId: string, bytes: Uint8Array, generation: number, extra: Record<string, string> = {}, token?: string) {
  return internal(runId, "/checkpoint", {
    method: "PUT",
    body: bytes,
    token,
    headers: {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(bytes.byteLength),
      "X-Allele-Generation": String(generation),
      "X-Allele-Cpu-Seconds": "1.5",
      "X-Allele-Wall-Ms": "2000",
      "X-Allele-Peak-Mb": "64",
      ...extra,
    },
  });
}

const METRICS = { cpu_seconds_used: 3, peak_memory_mb: 80, execution_duration_ms: 4000, hit_time_cap: false, hit_memory_cap: false };

describe("checkpoints", () => {
  it("are stored under the run's own key, read back only with the run's token, and recorded on the run", async () => {
    const { submissionId, runId } = await runningRun();
    const bytes = new TextEncoder().encode("any bytes: the Worker never parses a checkpoint");
    expect((await putCheckpoint(runId, bytes, 12)).status).toBe(204);
    expect(await run(runId)).toMatchObject({ checkpoint_generation: 12, checkpoint_cpu_seconds: 1.5, checkpoint_wall_ms: 2000 });
    const object = await env.FILES.get(`checkpoints/${runId}`);
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(bytes);
    const back = await internal(runId, "/checkpoint");
    expect(back.status).toBe(200);
    expect(new Uint8Array(await back.arrayBuffer())).toEqual(bytes);
    // Another run's token reads nothing of this run, and writes nothing to it.
    const other = await runningRun();
    expect((await internal(runId, "/checkpoint", { token: await runToken(other.runId) })).status).toBe(401);
    expect((await putCheckpoint(runId, new Uint8Array([1]), 99, {}, await runToken(other.runId))).status).toBe(401);
    expect((await internal(other.runId, "/checkpoint")).status).toBe(404);
    // The API shows the last checkpoint on the run.
    expect((await getSubmission(account.key, submissionId)).latest_run.checkpoint).toMatchObject({ generation: 12 });
  });

  it("an older checkpoint never replaces a newer one's record; no generation or length is a 400; past the cap a 400", async () => {
    const { runId } = await runningRun();
    expect((await putCheckpoint(runId, new Uint8Array([1, 2]), 20)).status).toBe(204);
    expect((await putCheckpoint(runId, new Uint8Array([3]), 10)).status).toBe(409);
    expect((await run(runId))!.checkpoint_generation).toBe(20);
    expect(new Uint8Array(await (await env.FILES.get(`checkpoints/${runId}`))!.arrayBuffer())).toEqual(new Uint8Array([1, 2]));
    expect((await putCheckpoint(runId, new Uint8Array([1]), 21, { "X-Allele-Generation": "soon" })).status).toBe(400);
    // A premium run's cap is its memory cap (2048 MB): a larger declared length is refused before any byte is stored.
    const huge = await internal(runId, "/checkpoint", {
      method: "PUT",
      body: new Uint8Array([1]),
      headers: { "Content-Length": String(3 * 1024 ** 3), "X-Allele-Generation": "22" },
    }).catch(() => null);
    if (huge) expect(huge.status).toBe(400);
    expect((await run(runId))!.checkpoint_generation).toBe(20);
  });
});

describe("resumes", () => {
  it("a drained run handed back is queued at once with its resume recorded, and billed once at its end with every segment", async () => {
    const { submissionId, runId } = await runningRun();
    expect((await putCheckpoint(runId, new Uint8Array([9]), 30)).status).toBe(204);
    const suspended = await internal(runId, "/suspend", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metrics: METRICS, checkpointed: true }),
    });
    expect(suspended.status).toBe(204);
    const row = await run(runId);
    expect(row).toMatchObject({ status: "queued", prior_cpu_seconds: 3, prior_wall_ms: 4000, prior_peak_mb: 80 });
    expect(JSON.parse(row!.resumes)).toHaveLength(1);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.status).toBe("queued");
    expect(sub.latest_run.resumes.count).toBe(1);
    // Its next segment ends it: one ledger row, the segments' CPU summed, resumes noted.
    await env.DB.prepare("UPDATE runs SET status = 'running', attempts = attempts + 1 WHERE id = ?").bind(runId).run();
    expect((await completeRun(runId, { metrics: { ...METRICS, cpu_seconds_used: 2 } })).status).toBe(204);
    const ledger = await env.DB.prepare("SELECT cpu_seconds, resumes FROM credit_ledger WHERE run_id = ?").bind(runId).all();
    expect(ledger.results).toEqual([{ cpu_seconds: 5, resumes: 1 }]);
    expect((await getSubmission(account.key, submissionId)).cpu_seconds_used).toBe(5);
    // The checkpoint went with the run's end.
    expect(await env.FILES.get(`checkpoints/${runId}`)).toBeNull();
  });

  /** A running run with a checkpoint, silent past the timeout: the sweep puts it back in line to resume. */
  async function resumedRun() {
    const started = await runningRun();
    expect((await putCheckpoint(started.runId, new Uint8Array([7]), 15)).status).toBe(204);
    await env.DB.prepare("UPDATE runs SET heartbeat_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 120_000).toISOString(), started.runId)
      .run();
    await reconcileRuns(env);
    expect((await run(started.runId))!.status).toBe("queued");
    return started;
  }

  it("a cancel during a resume wins: the run is never resumed or started again, its reports are refused", async () => {
    const { submissionId, runId } = await resumedRun();
    const cancelled = await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" });
    expect(cancelled.status).toBe(202);
    expect((await run(runId))!.status).toBe("cancelled");
    // A late report of the lost worker, or of the drained one, changes nothing.
    expect((await putCheckpoint(runId, new Uint8Array([8]), 16)).status).toBe(409);
    const late = await internal(runId, "/suspend", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metrics: METRICS, checkpointed: true }),
    });
    expect(late.status).toBe(409);
    await reconcileRuns(env);
    expect((await run(runId))!.status).toBe("cancelled");
    expect(await env.FILES.get(`checkpoints/${runId}`)).toBeNull();
  });

  it("a delete during a resume wins: the run and its checkpoint are gone", async () => {
    const { submissionId, runId } = await resumedRun();
    const deleted = await call(`/api/v1/submissions/${submissionId}`, { key: account.key, method: "DELETE" });
    expect(deleted.status).toBeLessThan(300);
    expect(await run(runId)).toBeNull();
    expect((await internal(runId, "/checkpoint")).status).toBe(409);
    expect(await env.FILES.get(`checkpoints/${runId}`)).toBeNull();
  });
});

describe("the dashboard", () => {
  it("shows a resumed run's resumes on its submission page and on its result's page", async () => {
    const { submissionId, resultId } = await newResult(account.key);
    const runId = (await getSubmission(account.key, submissionId)).latest_run.id as string;
    const at = ["2026-05-01T12:00:00.000Z", "2026-05-01T12:05:00.000Z"];
    await env.DB.prepare("UPDATE runs SET resumes = ? WHERE id = ?").bind(JSON.stringify(at), runId).run();
    await env.DB.prepare("UPDATE results SET resumes = ? WHERE id = ?").bind(JSON.stringify(at), resultId).run();
    const web = new WebClient();
    expect((await web.signInWithKey(account.key)).status).toBe(303);
    const page = await (await web.request(`/submissions/${submissionId}`)).text();
    expect(page).toContain("Resumed 2 times after a lost worker");
    const result = await (await web.request(`/results/${resultId}`)).text();
    expect(result).toContain("2 times from a checkpoint after a lost worker");
    const plain = await (await web.request(`/submissions/${(await newResult(account.key)).submissionId}`)).text();
    expect(plain).not.toContain("after a lost worker");
  });
});
