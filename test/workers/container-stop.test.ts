// A container's stop signal inside workerd (docs/architecture.md#durable-runs-issue-28): a GaRunner
// instance whose container stops while its run's segment lives hands the run back at once, and the runs
// queue's consumer resumes it exactly as the silent-run sweep does. GaRunner (a Container) cannot be
// constructed here without a container runtime, so these drive the handling it delegates to —
// RunSegment (src/runner/segment.ts) on a real Durable Object's storage — and the real consumer, D1 and
// queues, in the order GaRunner calls them (docs/testing.md).
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_RESUMES } from "../../src/admission/limits";
import type { RunMessage } from "../../src/env";
import worker from "../../src/index";
import { reconcileRuns } from "../../src/queues/scheduled";
import { RunSegment } from "../../src/runner/segment";
import { call, completeRun, createSubmission, env, getSubmission, json, newAccount, type TestAccount } from "../helpers/api";
import { holdDeliveryQueue, queuedIds } from "../helpers/deliveries";
import { type FakeNet, fakeNet } from "../helpers/net";

const HOOK = "https://hooks.example.com";
let account: TestAccount;
let net: FakeNet;
let deliveries: ReturnType<typeof holdDeliveryQueue>;
let sent: ReturnType<typeof vi.spyOn>;

beforeEach(async () => {
  account = await newAccount();
  net = fakeNet({ dns: { "hooks.example.com": ["93.184.215.14"] }, receivers: { [HOOK]: () => new Response("ok") } });
  deliveries = holdDeliveryQueue();
  sent = vi.spyOn(env.RUNS_QUEUE, "send");
});
afterEach(() => {
  net.restore();
  deliveries.mockRestore();
  sent.mockRestore();
});

const run = (id: string) => env.DB.prepare("SELECT * FROM runs WHERE id = ?").bind(id).first<Record<string, any>>();

/** A run made `running` as a claim would (attempt 1 unless told), with a checkpoint recorded at generation 12. */
async function runningRun(attempts = 1) {
  const submissionId = await createSubmission(account.key, {});
  const runId = (await getSubmission(account.key, submissionId)).latest_run.id as string;
  const now = new Date().toISOString();
  await env.DB.prepare(
    "UPDATE runs SET status = 'running', started_at = ?, heartbeat_at = ?, attempts = ?, checkpoint_generation = 12, checkpoint_cpu_seconds = 1.5, checkpoint_wall_ms = 2000, checkpoint_peak_mb = 64 WHERE id = ?",
  )
    .bind(now, now, attempts, runId)
    .run();
  await env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(submissionId).run();
  return { submissionId, runId };
}

/** A GaRunner instance's storage (a real Durable Object's), and its segment record as GaRunner drives it. */
function instance() {
  const stub = env.IP_RATE_LIMIT.getByName(`container-stop-${crypto.randomUUID()}`);
  return <T>(step: (segment: RunSegment) => Promise<T>) =>
    runInDurableObject(stub, (_object: unknown, state: DurableObjectState) => step(new RunSegment(state.storage)));
}

/** GaRunner.startRun's record: a claim begins, the container is up and given the run (attempt). */
async function started(runId: string, attempt = 1) {
  const segment = instance();
  await segment((s) => s.begin(runId));
  await segment((s) => s.live(attempt));
  return segment;
}

/** The `lost` messages the instance put on the runs queue. */
const sentMessages = (): RunMessage[] => sent.mock.calls.map((call: unknown[]) => call[0] as RunMessage);
const lostMessages = () => sentMessages().filter((m) => m.lost);

/** Hands messages to the runs queue's consumer, as the platform does. */
async function deliver(messages: RunMessage[]) {
  const batch = createMessageBatch(
    "allele-runs",
    messages.map((body, i) => ({ id: `lost-${crypto.randomUUID()}-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch as never, env);
  return getQueueResult(batch, ctx);
}

const resumedEvents = async (runId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE run_id = ? AND type = 'run.resumed'").bind(runId).first<{ n: number }>())!
    .n;

/** What a resume leaves on the run, the fields both paths must leave alike. */
const resumeState = async (runId: string) => {
  const r = (await run(runId))!;
  return {
    status: r.status,
    attempts: r.attempts,
    resumes: JSON.parse(r.resumes ?? "[]").length,
    prior: [r.prior_cpu_seconds, r.prior_wall_ms, r.prior_peak_mb],
    checkpoint: [r.checkpoint_generation, r.checkpoint_cpu_seconds, r.checkpoint_wall_ms, r.checkpoint_peak_mb],
    started_at: r.started_at,
    heartbeat_at: r.heartbeat_at,
  };
};

describe("a container's stop signal (GaRunner.onStop → RunSegment.stopped → the runs consumer)", () => {
  it("a live segment's stop resumes its run at once, exactly as the silent-run sweep leaves a lost run; run.resumed queued", async () => {
    const hook = await call("/api/v1/webhooks", { key: account.key, body: { url: `${HOOK}/in`, events: ["run.resumed"] } });
    expect(hook.status).toBe(201);
    const { submissionId, runId } = await runningRun();
    const segment = await started(runId);
    // The container stops: one `lost` message naming the run and its segment.
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    expect(lostMessages()).toEqual([{ run_id: runId, lost: { attempt: 1 } }]);
    sent.mockClear();
    const result = await deliver([{ run_id: runId, lost: { attempt: 1 } }]);
    expect(result.explicitAcks).toHaveLength(1);
    // Back in line from its checkpoint, its resume recorded and the segment's usage up to it kept; put on the queue again.
    expect(await resumeState(runId)).toMatchObject({ status: "queued", attempts: 1, resumes: 1, prior: [1.5, 2000, 64] });
    expect(sentMessages()).toEqual([{ run_id: runId, account_id: account.id, places: 1 }]);
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.status).toBe("queued");
    expect(sub.latest_run.resumes.count).toBe(1);
    expect(await resumedEvents(runId)).toBe(1);
    const hookId = (await json(hook)).id;
    const queued = await env.DB.prepare("SELECT id FROM deliveries WHERE webhook_id = ? AND event_type = 'run.resumed'").bind(hookId).all();
    expect(queued.results).toHaveLength(1);
    expect(queuedIds(deliveries)).toContain((queued.results[0] as { id: string }).id);

    // The sweep's resume of a twin lost by silence leaves the same.
    const twin = await runningRun();
    await env.DB.prepare("UPDATE runs SET heartbeat_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 600_000).toISOString(), twin.runId)
      .run();
    await reconcileRuns(env);
    const [byStop, bySweep] = [await resumeState(runId), await resumeState(twin.runId)];
    expect(bySweep).toEqual(byStop);
    expect(await resumedEvents(twin.runId)).toBe(1);
  });

  it("a second stop resumes nothing more; a duplicate message, or the sweep after, resumes it once", async () => {
    const { runId } = await runningRun();
    const segment = await started(runId);
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(false);
    expect(lostMessages()).toHaveLength(1);
    await deliver([lostMessages()[0]!, lostMessages()[0]!]);
    await deliver([lostMessages()[0]!]);
    await env.DB.prepare("UPDATE runs SET heartbeat_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 600_000).toISOString(), runId)
      .run();
    await reconcileRuns(env);
    expect(await resumeState(runId)).toMatchObject({ status: "queued", resumes: 1 });
    expect(await resumedEvents(runId)).toBe(1);
  });

  it("a cancelled segment's stop sends nothing; a stop after its run ended, or was cancelled or deleted, changes nothing", async () => {
    // GaRunner.cancelRun ends the segment before destroying the container.
    const cancelled = await runningRun();
    const segment = await started(cancelled.runId);
    await segment((s) => s.end());
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(false);
    expect(lostMessages()).toEqual([]);

    // The instance did not see the end (its worker reported it through the outbound handler): the message
    // comes, and the run stays as it ended.
    const ended = await runningRun();
    const endedSegment = await started(ended.runId);
    const complete = await completeRun(ended.runId);
    expect(complete.status).toBe(204);
    expect(await endedSegment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    await deliver(lostMessages());
    expect(await resumeState(ended.runId)).toMatchObject({ status: "succeeded", resumes: 0 });
    expect(await resumedEvents(ended.runId)).toBe(0);

    // A cancel that came before the stop's message wins; a deleted run is left gone.
    sent.mockClear();
    const raced = await runningRun();
    const racedSegment = await started(raced.runId);
    expect(await racedSegment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    expect((await call(`/api/v1/submissions/${raced.submissionId}/cancel`, { key: account.key, method: "POST" })).status).toBe(202);
    const deleted = await runningRun();
    const deletedSegment = await started(deleted.runId);
    expect(await deletedSegment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    expect((await call(`/api/v1/submissions/${deleted.submissionId}`, { key: account.key, method: "DELETE" })).status).toBeLessThan(300);
    const result = await deliver(lostMessages());
    expect(result.explicitAcks).toHaveLength(2);
    expect((await run(raced.runId))!.status).toBe("cancelled");
    expect(await run(deleted.runId)).toBeNull();
    expect(await resumedEvents(raced.runId)).toBe(0);
  });

  it("a stop of an earlier segment leaves the run's later segment alone; a new claim's start forgets the segment before", async () => {
    // The run was resumed and claimed again (attempt 2) on the same instance: the old container's stop
    // event comes late, or arrives as the new start begins.
    const { runId } = await runningRun(2);
    await deliver([{ run_id: runId, lost: { attempt: 1 } }]);
    expect(await resumeState(runId)).toMatchObject({ status: "running", attempts: 2, resumes: 0 });
    const segment = await started(runId, 1);
    await segment((s) => s.begin(runId));
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(false);
    await segment((s) => s.live(2));
    expect(await segment((s) => s.stopped(env.RUNS_QUEUE))).toBe(true);
    expect(lostMessages()).toEqual([{ run_id: runId, lost: { attempt: 2 } }]);
  });

  it("past MAX_RESUMES a lost segment fails the run with worker_lost, billed once, as the sweep does", async () => {
    const { submissionId, runId } = await runningRun();
    const times = Array.from({ length: MAX_RESUMES }, (_, i) => new Date(Date.now() - (i + 1) * 60_000).toISOString());
    await env.DB.prepare("UPDATE runs SET resumes = ? WHERE id = ?").bind(JSON.stringify(times), runId).run();
    const segment = await started(runId);
    await segment((s) => s.stopped(env.RUNS_QUEUE));
    await deliver(lostMessages());
    await deliver(lostMessages());
    const sub = await getSubmission(account.key, submissionId);
    expect(sub.status).toBe("failed");
    expect(sub.error.code).toBe("worker_lost");
    const ledger = await env.DB.prepare("SELECT count(*) AS n FROM credit_ledger WHERE run_id = ?").bind(runId).first<{ n: number }>();
    expect(ledger!.n).toBe(1);
  });
});
