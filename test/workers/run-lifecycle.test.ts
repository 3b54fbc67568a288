// The run lifecycle inside workerd: the runs queue consumer against the real GA worker process,
// every terminal path through the one transition place, the state rules, and the cron handler.
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_RESUMES } from "../../src/admission/limits";
import { dispatchState } from "../../src/do/dispatcher/client";
import type { RunMessage } from "../../src/env";
import worker from "../../src/index";
import { handleRunMessage } from "../../src/queues/runs";
import { reconcileRuns } from "../../src/queues/scheduled";
import { call, completeRun, createSubmission, env, getSubmission, json, newAccount, runToken, type TestAccount } from "../helpers/api";

let account: TestAccount;
beforeEach(async () => {
  account = await newAccount();
});

let messageSeq = 0;
/** Hands the consumer a message per run: its id alone (as an older build sent), or a whole message. */
async function deliver(runs: (string | RunMessage)[], attempts = 1) {
  const batch = createMessageBatch(
    "allele-runs",
    runs.map((run) => ({
      id: `msg-${++messageSeq}`,
      timestamp: new Date(),
      attempts,
      body: typeof run === "string" ? { run_id: run } : run,
    })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch as never, env);
  return getQueueResult(batch, ctx);
}

const run = (id: string) => env.DB.prepare("SELECT * FROM runs WHERE id = ?").bind(id).first<Record<string, any>>();
const ledgerRows = (runId: string) =>
  env.DB.prepare("SELECT count(*) AS n, coalesce(sum(amount_micro), 0) AS total FROM credit_ledger WHERE run_id = ?")
    .bind(runId)
    .first<{ n: number; total: number }>();
const balance = async () => {
  const row = await env.DB.prepare("SELECT free_credits_micro + paid_credits_micro AS b FROM accounts WHERE id = ?")
    .bind(account.id)
    .first<{ b: number }>();
  return row!.b;
};

async function queuedRun(overrides: Record<string, unknown> = {}) {
  const submissionId = await createSubmission(account.key, overrides);
  const runId = (await getSubmission(account.key, submissionId)).latest_run.id as string;
  return { submissionId, runId };
}

const SLOW = "import time\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.05)\n    return 1.0\n";

describe("runs queue consumer", () => {
  it("claims a queued run once, starts it on the worker, and acks duplicates", async () => {
    const { submissionId, runId } = await queuedRun({ fitness_func: SLOW, num_generations: 1000 });
    const first = await deliver([runId, runId]);
    expect(first.explicitAcks).toHaveLength(2);
    expect(first.retryMessages).toEqual([]);
    const second = await deliver([runId]);
    expect(second.explicitAcks).toHaveLength(1);
    const row = await run(runId);
    expect(row).toMatchObject({ status: "running", attempts: 1 });
    expect((await getSubmission(account.key, submissionId)).status).toBe("running");
    // The real worker has it: cancelling through the API stops it and bills what it used.
    const cancelled = await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" });
    expect(cancelled.status).toBe(202);
    const body = await json(cancelled);
    expect(body.status).toBe("cancelled");
    expect(body.cpu_seconds_used).toBeGreaterThanOrEqual(0);
    expect((await ledgerRows(runId))!.n).toBe(1);
  });

  it("drops a message whose submission was deleted or whose run was cancelled", async () => {
    const deleted = await queuedRun();
    expect((await call(`/api/v1/submissions/${deleted.submissionId}`, { key: account.key, method: "DELETE" })).status).toBe(204);
    const cancelled = await queuedRun();
    expect((await call(`/api/v1/submissions/${cancelled.submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    const result = await deliver([deleted.runId, cancelled.runId]);
    expect(result.explicitAcks).toHaveLength(2);
    expect(await run(deleted.runId)).toBeNull();
    expect(await run(cancelled.runId)).toMatchObject({ status: "cancelled", attempts: 0 });
  });

  it("gives an unstartable run back to the queue with a delay, and fails it after the last attempt", async () => {
    const { runId } = await queuedRun();
    const down = { ...env, RUNNER_URL: "http://127.0.0.1:9" };
    const batch = createMessageBatch("allele-runs", [{ id: "m1", timestamp: new Date(), attempts: 1, body: { run_id: runId } }]);
    const message = batch.messages[0]!;
    const retry = vi.spyOn(message, "retry");
    await handleRunMessage(down, message);
    expect(retry).toHaveBeenCalledWith({ delaySeconds: 5 });
    expect(await run(runId)).toMatchObject({ status: "queued", attempts: 1 });

    // Until the last attempt the delays grow to a minute: about six minutes in all.
    const later = createMessageBatch("allele-runs", [{ id: "m2", timestamp: new Date(), attempts: 9, body: { run_id: runId } }]);
    const laterRetry = vi.spyOn(later.messages[0]!, "retry");
    await handleRunMessage(down, later.messages[0]!);
    expect(laterRetry).toHaveBeenCalledWith({ delaySeconds: 60 });
    expect(await run(runId)).toMatchObject({ status: "queued" });

    const last = createMessageBatch("allele-runs", [{ id: "m3", timestamp: new Date(), attempts: 10, body: { run_id: runId } }]);
    await handleRunMessage(down, last.messages[0]!);
    expect(await run(runId)).toMatchObject({ status: "failed", error_code: "worker_unavailable" });
  });

  it("offers a run by the account and places its message names, then claims it; for a deleted or cancelled run, or a duplicate, the books keep nothing", async () => {
    const { submissionId, runId } = await queuedRun({ fitness_func: SLOW, num_generations: 1000 });
    const message = (id: string): RunMessage => ({ run_id: id, account_id: account.id, places: 1 });
    const first = await deliver([message(runId), message(runId)]);
    expect(first.explicitAcks).toHaveLength(2);
    expect(await run(runId)).toMatchObject({ status: "running", attempts: 1 });
    expect((await dispatchState(env)).placed).toContain(runId);
    const deleted = await queuedRun();
    expect((await call(`/api/v1/submissions/${deleted.submissionId}`, { key: account.key, method: "DELETE" })).status).toBe(204);
    const cancelled = await queuedRun();
    expect((await call(`/api/v1/submissions/${cancelled.submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    expect((await deliver([message(deleted.runId), message(cancelled.runId)])).explicitAcks).toHaveLength(2);
    expect(await run(cancelled.runId)).toMatchObject({ status: "cancelled", attempts: 0 });
    const books = await dispatchState(env);
    for (const id of [deleted.runId, cancelled.runId]) expect([...books.placed, ...books.waiting]).not.toContain(id);
    expect((await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    expect((await dispatchState(env)).placed).not.toContain(runId);
  });

  it("acks a malformed message", async () => {
    const batch = createMessageBatch("allele-runs", [{ id: "bad", timestamp: new Date(), attempts: 1, body: { nope: 1 } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch as never, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["bad"]);
  });
});

describe("terminal transitions: one place, exactly once", () => {
  it("a completion report ends the run once: result, files, one charge; a second report is 409", async () => {
    const { submissionId, runId } = await queuedRun();
    await deliver([runId]);
    const before = await balance();
    const [a, b] = await Promise.all([completeRun(runId), completeRun(runId)]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    expect((await completeRun(runId)).status).toBe(409); // late: the run is found ended
    // The files a report's end writes before the run's end is decided: only the winner's stay.
    const stored = new Set((await env.FILES.list({ prefix: "results/" })).objects.map((o) => o.key.split("/")[1]));
    const kept = await env.DB.prepare(`SELECT id FROM results WHERE id IN (${[...stored].map(() => "?").join(",") || "NULL"})`)
      .bind(...stored)
      .all();
    expect(kept.results.map((r) => r.id).sort()).toEqual([...stored].sort());
    const ledger = (await ledgerRows(runId))!;
    expect(ledger.n).toBe(1);
    expect(await balance()).toBe(before + ledger.total);
    const results = await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runId).all();
    expect(results.results).toHaveLength(1);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub).toMatchObject({ status: "succeeded", generations_completed: 4 });
    expect(sub.credits_charged).toBeCloseTo(-ledger.total / 1e6, 6);
  });

  it("a failed report records the error; cancel after it is 409 and charges nothing more", async () => {
    const { submissionId, runId } = await queuedRun();
    await deliver([runId]);
    expect(
      (await completeRun(runId, { status: "failed", error: { code: "code_error", message: "fitness_func line 2: boom" } })).status,
    ).toBe(204);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.status).toBe("failed");
    expect(sub.error).toEqual({ code: "code_error", message: "fitness_func line 2: boom" });
    expect((await call(`/api/v1/submissions/${submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(409);
    expect((await ledgerRows(runId))!.n).toBe(1);
  });

  it("an unreadable completion still ends the run (failed, internal_error) rather than leaving it running", async () => {
    const { submissionId, runId } = await queuedRun();
    await deliver([runId]);
    const res = await worker.fetch!(
      new Request(`https://allele.test/internal/v1/runs/${runId}/complete`, {
        method: "POST",
        headers: { Authorization: `Bearer ${await runToken(runId)}`, "Content-Type": "application/json" },
        body: '{"status": "succeeded"}',
      }) as never,
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(400);
    expect((await getSubmission(account.key, submissionId)).error.code).toBe("internal_error");
  });

  it("rejects a report with another run's token", async () => {
    const a = await queuedRun();
    const b = await queuedRun();
    const res = await completeRun(a.runId, {}, await runToken(b.runId));
    expect(res.status).toBe(401);
    expect((await run(a.runId))!.status).toBe("queued");
  });

  it("refuses a forged completion of a live run: guessed, empty or wrongly signed tokens (the run stays as it was)", async () => {
    const { runId } = await queuedRun();
    const forged = async (message: string) => {
      const key = await crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode("not-the-run-token-secret"),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
    };
    for (const token of ["0".repeat(64), "ab".repeat(32), "", await forged(`run:${runId}`)]) {
      const res = await completeRun(runId, {}, token);
      expect(res.status, token).toBe(401);
    }
    expect((await run(runId))!.status).toBe("queued");
  });

  it("delete of a live run bills it and removes submission and runs; the ledger row stays", async () => {
    const { submissionId, runId } = await queuedRun({ fitness_func: SLOW, num_generations: 1000 });
    await deliver([runId]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await call(`/api/v1/submissions/${submissionId}`, { key: account.key, method: "DELETE" })).status).toBe(204);
    expect(await run(runId)).toBeNull();
    expect((await ledgerRows(runId))!.n).toBe(1);
  });
});

describe("state rules", () => {
  it("reexecute and continue are 409 while a run is queued or running, and add runs after", async () => {
    const { submissionId, runId } = await queuedRun();
    const reexec = () => call(`/api/v1/submissions/${submissionId}/reexecute`, { key: account.key, method: "POST" });
    expect((await reexec()).status).toBe(409);
    await deliver([runId]);
    expect((await reexec()).status).toBe(409);
    await completeRun(runId);
    const resultId = (await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runId).first<{ id: string }>())!.id;
    // Two racing reexecutes: exactly one adds a run.
    const raced = await Promise.all([reexec(), reexec()]);
    expect(raced.map((r) => r.status).sort()).toEqual([202, 409]);
    const cont = await call(`/api/v1/results/${resultId}/continue`, { key: account.key, method: "POST" });
    expect(cont.status).toBe(409);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub).toMatchObject({ run_count: 2, status: "queued", latest_run: { kind: "reexecute" } });
  });

  it("continue rejects overriding num_genes, gene_type or sol_per_pop, and queues a continue run with the parent", async () => {
    const { submissionId, runId } = await queuedRun();
    await completeRun(runId);
    const resultId = (await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runId).first<{ id: string }>())!.id;
    for (const body of [{ num_genes: 3 }, { gene_type: "int" }, { sol_per_pop: 20 }]) {
      const res = await call(`/api/v1/results/${resultId}/continue`, { key: account.key, body });
      expect(res.status).toBe(400);
    }
    const ok = await call(`/api/v1/results/${resultId}/continue`, { key: account.key, body: { num_generations: 5 } });
    expect(ok.status).toBe(202);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.latest_run).toMatchObject({ kind: "continue", parent_result_id: resultId, status: "queued" });
    const newRun = (await run(sub.latest_run.id))!;
    expect(JSON.parse(newRun.parameters).num_generations).toBe(5);
  });
});

describe("cron: nothing stuck", () => {
  const age = (runId: string, column: string, ms: number) =>
    env.DB.prepare(`UPDATE runs SET ${column} = ? WHERE id = ?`)
      .bind(new Date(Date.now() - ms).toISOString(), runId)
      .run();

  it("resumes a silent run (its worker lost) up to MAX_RESUMES times, then fails it with worker_lost; safe to run twice", async () => {
    // A lost worker's run goes on from its last checkpoint (docs/architecture.md#durable-runs-issue-28).
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const { submissionId, runId } = await queuedRun();
    for (let resume = 1; resume <= MAX_RESUMES; resume++) {
      send.mockClear();
      await deliver([runId]);
      expect(await run(runId)).toMatchObject({ status: "running", attempts: resume });
      await age(runId, "heartbeat_at", 120_000);
      const [first, again] = [await reconcileRuns(env), await reconcileRuns(env)];
      expect(first.requeued).toBeGreaterThanOrEqual(1);
      expect(again.requeued).toBe(0);
      expect(send.mock.calls.filter(([m]) => (m as { run_id: string }).run_id === runId)).toHaveLength(1);
      expect(await run(runId)).toMatchObject({ status: "queued", attempts: resume });
      // The submission shows its run waiting again, not still running, and the resume is on the run.
      const waiting = await getSubmission(account.key, submissionId);
      expect(waiting.status).toBe("queued");
      expect(waiting.latest_run.resumes.count).toBe(resume);
      expect(waiting.latest_run.checkpoint).toBeNull();
    }
    await deliver([runId]);
    await age(runId, "heartbeat_at", 120_000);
    await reconcileRuns(env);
    await reconcileRuns(env);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.status).toBe("failed");
    expect(sub.error.code).toBe("worker_lost");
    expect((await ledgerRows(runId))!.n).toBe(1);
  });

  it("re-enqueues a run queued too long, once per period", async () => {
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const { runId } = await queuedRun();
    send.mockClear();
    await age(runId, "enqueued_at", 300_000);
    await reconcileRuns(env);
    await reconcileRuns(env);
    expect(send.mock.calls.filter(([m]) => (m as { run_id: string }).run_id === runId)).toHaveLength(1);
  });

  it("the scheduled entry point runs the reconciliation", async () => {
    const { runId } = await queuedRun();
    await age(runId, "enqueued_at", 300_000);
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const ctx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(send.mock.calls.some(([m]) => (m as { run_id: string }).run_id === runId)).toBe(true);
  });
});

describe("populations travel apart from the reports", () => {
  const internal = async (runId: string, path: string, init: RequestInit = {}) =>
    worker.fetch!(
      new Request(`https://allele.test/internal/v1/runs/${runId}/${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${await runToken(runId)}`, ...(init.headers as Record<string, string>) },
      }) as never,
      env,
      createExecutionContext(),
    );

  it("a PUT population before the report becomes the result's population.json, and a continue streams it back", async () => {
    const { submissionId, runId } = await queuedRun();
    await deliver([runId]);
    const population = JSON.stringify([
      [1, 2, 3, 4, 5],
      [0, 0, 0, 0, 0],
    ]);
    expect(
      (await internal(runId, "population", { method: "PUT", body: population, headers: { "Content-Type": "application/json" } })).status,
    ).toBe(204);
    expect((await completeRun(runId, { result: { population: undefined } })).status).toBe(204);
    const resultId = (await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runId).first<{ id: string }>())!.id;
    const row = await json(await call(`/api/v1/results/${resultId}`, { key: account.key }));
    const file = row.files.find((f: { name: string }) => f.name === "population.json");
    expect(file).toMatchObject({ content_type: "application/json", size_bytes: population.length });
    const download = await call(`/api/v1/results/${resultId}/files/population.json`, { key: account.key });
    expect(await download.text()).toBe(population);

    // A continue run gets it from its own endpoint, with its own token.
    expect((await call(`/api/v1/results/${resultId}/continue`, { key: account.key, method: "POST" })).status).toBe(202);
    const next = (await getSubmission(account.key, submissionId)).latest_run.id as string;
    expect((await internal(next, "initial-population")).status).toBe(409); // not running yet
    await env.DB.prepare("UPDATE runs SET status = 'running' WHERE id = ?").bind(next).run();
    const served = await internal(next, "initial-population");
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(population);
    expect((await internal(runId, "initial-population")).status).toBe(409); // the first run is over
  });

  it("refuses a population for a run that is not running, and drops an uploaded one when the run fails", async () => {
    const { runId } = await queuedRun();
    expect((await internal(runId, "population", { method: "PUT", body: "[[1]]" })).status).toBe(409);
    await deliver([runId]);
    expect((await internal(runId, "population", { method: "PUT", body: "[[1]]" })).status).toBe(204);
    expect(await env.FILES.head(`runs/${runId}/population.json`)).not.toBeNull();
    expect((await completeRun(runId, { status: "failed" })).status).toBe(204);
    expect(await env.FILES.head(`runs/${runId}/population.json`)).toBeNull();
  });
});
