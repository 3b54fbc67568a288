// Capacity-aware, fair dispatch (docs/architecture.md "Capacity and fair share"): this project's
// platform has one place (RUN_CAPACITY=1) and its GA worker one place (WORKER_CONCURRENCY=1).
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { dispatchState } from "../../src/do/dispatcher/client";
import type { Dispatcher } from "../../src/do/dispatcher/object";
import type { RunMessage } from "../../src/env";
import worker from "../../src/index";
import { call, completeRun, createSubmission, env, getSubmission, newAccount, type TestAccount } from "../helpers/api";
import { WebClient } from "../helpers/web";

let messageSeq = 0;
/** Hands the consumer a message per run: a run id alone (as an older build sent), a grant, or a whole message. */
async function deliver(runs: (string | RunMessage)[], bindings: object = env, granted = false) {
  const batch = createMessageBatch(
    "allele-runs",
    runs.map((run) => ({
      id: `msg-${++messageSeq}`,
      timestamp: new Date(),
      attempts: 1,
      body: typeof run !== "string" ? run : granted ? { run_id: run, granted } : { run_id: run },
    })),
  );
  const ctx = createExecutionContext();
  await worker.queue!(batch as never, bindings as never);
  return getQueueResult(batch, ctx);
}

const runRow = (id: string) =>
  env.DB.prepare("SELECT status, attempts, error_code FROM runs WHERE id = ?")
    .bind(id)
    .first<{ status: string; attempts: number; error_code: string | null }>();
const SLOW = "import time\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.05)\n    return 1.0\n";

async function queuedRun(account: TestAccount, overrides: Record<string, unknown> = {}) {
  const submissionId = await createSubmission(account.key, overrides);
  return { submissionId, runId: (await getSubmission(account.key, submissionId)).latest_run.id as string };
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await read();
  }
  return value;
}

/** Waits until the GA worker holds no place (a cancelled run's child frees its places once it is gone). */
async function workerIdle() {
  const health = () => fetch(`${env.RUNNER_URL}/health`).then((r) => r.json() as Promise<{ in_use: number }>);
  expect((await until(health, (h) => h.in_use === 0)).in_use).toBe(0);
}

let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = [await newAccount(), await newAccount()];
});

describe("the Dispatcher's books (one instance of its own, one place)", () => {
  const books = (name: string) => (env.DISPATCHER as DurableObjectNamespace<Dispatcher>).getByName(name);

  it("gives places round-robin across accounts, FIFO within one", async () => {
    const d = books("round-robin");
    expect((await d.offer({ runId: "A1", accountId: "acctA", places: 1 }, 1)).startNow).toBe(true);
    for (const [runId, accountId] of [
      ["A2", "acctA"],
      ["A3", "acctA"],
      ["B1", "acctB"],
      ["C1", "acctC"],
    ] as const) {
      expect((await d.offer({ runId, accountId, places: 1 }, 1)).startNow).toBe(false);
    }
    expect((await d.state(1)).waiting).toEqual(["B1", "C1", "A2", "A3"]);
    const order = [];
    for (const ended of ["A1", "B1", "C1", "A2"]) order.push(...(await d.release(ended, 1)));
    expect(order).toEqual(["B1", "C1", "A2", "A3"]);
  });

  it("gives the next free place to an account that arrives late with a single run", async () => {
    const d = books("late-comer");
    await d.offer({ runId: "A1", accountId: "acctA", places: 1 }, 1);
    for (const [runId, accountId] of [
      ["A2", "acctA"],
      ["A3", "acctA"],
      ["B1", "acctB"],
      ["B2", "acctB"],
    ] as const)
      await d.offer({ runId, accountId, places: 1 }, 1);
    expect(await d.release("A1", 1)).toEqual(["B1"]);
    expect(await d.release("B1", 1)).toEqual(["A2"]);
    await d.offer({ runId: "Z1", accountId: "acctZ", places: 1 }, 1); // late, one run: next in line
    expect((await d.state(1)).waiting).toEqual(["Z1", "B2", "A3"]);
    expect(await d.release("A2", 1)).toEqual(["Z1"]);
  });

  it("keeps a run's turn when it is offered twice, and drops it when it is released while waiting", async () => {
    const d = books("idempotent");
    await d.offer({ runId: "X1", accountId: "acctX", places: 1 }, 1);
    await d.offer({ runId: "Y1", accountId: "acctY", places: 1 }, 1);
    await d.offer({ runId: "Y1", accountId: "acctY", places: 1 }, 1);
    await d.offer({ runId: "Z1", accountId: "acctZ", places: 1 }, 1);
    expect((await d.state(1)).waiting).toEqual(["Y1", "Z1"]);
    await d.release("Y1", 1); // cancelled while waiting
    expect(await d.release("X1", 1)).toEqual(["Z1"]);
  });

  it("a run with N parallel fitness workers takes N places; the next in turn waits for its places and nobody jumps ahead", async () => {
    const d = books("places");
    expect((await d.offer({ runId: "A1", accountId: "acctA", places: 2 }, 4)).startNow).toBe(true);
    expect((await d.offer({ runId: "B1", accountId: "acctB", places: 3 }, 4)).startNow).toBe(false); // 2 free
    expect((await d.offer({ runId: "C1", accountId: "acctC", places: 1 }, 4)).startNow).toBe(false); // behind B1
    expect(await d.state(4)).toMatchObject({ in_use: 2, placed: ["A1"], waiting: ["B1", "C1"] });
    expect(await d.release("A1", 4)).toEqual(["B1", "C1"]);
    expect(await d.state(4)).toMatchObject({ in_use: 4, waiting: [] });
    // More workers than the platform has places: the run takes them all, once they are free.
    await d.offer({ runId: "D1", accountId: "acctD", places: 8 }, 4);
    expect(await d.release("B1", 4)).toEqual([]);
    expect(await d.release("C1", 4)).toEqual(["D1"]);
    expect(await d.state(4)).toMatchObject({ in_use: 4, placed: ["D1"] });
  });
});

describe("runs wait for a place and start when one frees", () => {
  it("a second run stays queued (not started, no cap running) until the first ends, then starts", async () => {
    const first = await queuedRun(a, { fitness_func: SLOW, num_generations: 1000 });
    await deliver([first.runId]);
    expect((await runRow(first.runId))!.status).toBe("running");

    const second = await queuedRun(b);
    await deliver([second.runId]);
    expect(await runRow(second.runId)).toMatchObject({ status: "queued", attempts: 0 });
    expect((await getSubmission(b.key, second.submissionId)).status).toBe("queued");
    expect((await dispatchState(env)).waiting).toContain(second.runId);

    // The first run's end gives its place to the second; the grant travels on the runs queue (inside
    // the test pool, the test hands the queue's message to the consumer, as for every other message).
    await call(`/api/v1/submissions/${first.submissionId}/cancel`, { key: a.key, method: "POST" });
    expect(await dispatchState(env)).toEqual({ capacity: 1, in_use: 1, placed: [second.runId], waiting: [] });
    await deliver([second.runId], env, true);
    expect(await runRow(second.runId)).toMatchObject({ status: "running", attempts: 1 });
    await completeRun(second.runId); // inside the test pool reports go nowhere: the test delivers it
    expect((await runRow(second.runId))!.status).toBe("succeeded");
  }, 30_000);

  it("a run's parallel_processing workers are the places it asks for", async () => {
    const wide = { ...env, RUN_CAPACITY: "3" };
    const run = await queuedRun(a, { fitness_func: SLOW, num_generations: 1000, parallel_processing: ["process", 2] });
    await workerIdle();
    await deliver([run.runId], wide);
    expect(await runRow(run.runId)).toMatchObject({ status: "running" });
    expect(await dispatchState(wide as never)).toMatchObject({ in_use: 2, placed: [run.runId] });
    await call(`/api/v1/submissions/${run.submissionId}/cancel`, { key: a.key, method: "POST" });
    expect(await dispatchState(env)).toMatchObject({ in_use: 0, placed: [] });
  }, 30_000);

  it("a website run with parallel_processing N takes N places too (paid by the plan or with credits)", async () => {
    const wide = { ...env, RUN_CAPACITY: "3" };
    const web = new WebClient();
    expect((await web.signInWithKey(a.key)).status).toBe(303);
    const created = await web.post("/submissions/new", {
      num_generations: "1000",
      sol_per_pop: "8",
      num_parents_mating: "4",
      num_genes: "3",
      fitness_func: SLOW,
      fitness_func_entry: "fitness",
      parallel_processing: '["process", 2]',
      payment: "plan",
    });
    expect(created.status).toBe(303);
    const submissionId = created.headers.get("Location")!.split("/").pop()!;
    const runId = (await getSubmission(a.key, submissionId)).latest_run.id as string;
    await workerIdle();
    await deliver([runId], wide);
    expect(await runRow(runId)).toMatchObject({ status: "running" });
    expect(await dispatchState(wide as never)).toMatchObject({ in_use: 2, placed: [runId] });
    await call(`/api/v1/submissions/${submissionId}/cancel`, { key: a.key, method: "POST" });
    expect(await dispatchState(env)).toMatchObject({ in_use: 0, placed: [] });
  }, 30_000);

  it("cancel and delete of a waiting run work, and its turn is dropped", async () => {
    const holder = await queuedRun(a, { fitness_func: SLOW, num_generations: 1000 });
    await deliver([holder.runId]);
    const cancelled = await queuedRun(b);
    const deleted = await queuedRun(b);
    await deliver([cancelled.runId, deleted.runId]);
    expect((await dispatchState(env)).waiting).toEqual(expect.arrayContaining([cancelled.runId, deleted.runId]));
    expect((await call(`/api/v1/submissions/${cancelled.submissionId}/cancel`, { key: b.key, method: "POST" })).status).toBe(202);
    expect((await call(`/api/v1/submissions/${deleted.submissionId}`, { key: b.key, method: "DELETE" })).status).toBe(204);
    expect((await getSubmission(b.key, cancelled.submissionId)).status).toBe("cancelled");
    const state = await dispatchState(env);
    expect(state.waiting).not.toContain(cancelled.runId);
    expect(state.waiting).not.toContain(deleted.runId);
    await call(`/api/v1/submissions/${holder.submissionId}/cancel`, { key: a.key, method: "POST" });
  });

  it("a message naming the run's account and places puts it in line without reading it first; a late one for a cancelled or deleted run leaves no turn behind", async () => {
    const holder = await queuedRun(a, { fitness_func: SLOW, num_generations: 1000 });
    await deliver([{ run_id: holder.runId, account_id: a.id, places: 1 }]);
    expect(await runRow(holder.runId)).toMatchObject({ status: "running", attempts: 1 });
    const waiting = await queuedRun(b);
    const cancelled = await queuedRun(b);
    const deleted = await queuedRun(b);
    expect((await call(`/api/v1/submissions/${cancelled.submissionId}/cancel`, { key: b.key, method: "POST" })).status).toBe(202);
    expect((await call(`/api/v1/submissions/${deleted.submissionId}`, { key: b.key, method: "DELETE" })).status).toBe(204);
    const late = await deliver([waiting, cancelled, deleted].map((r) => ({ run_id: r.runId, account_id: b.id, places: 1 })));
    expect(late.explicitAcks).toHaveLength(3);
    expect(await dispatchState(env)).toMatchObject({ placed: [holder.runId], waiting: [waiting.runId] });
    expect(await runRow(waiting.runId)).toMatchObject({ status: "queued", attempts: 0 });
    expect((await call(`/api/v1/submissions/${waiting.submissionId}`, { key: b.key, method: "DELETE" })).status).toBe(204);
    await call(`/api/v1/submissions/${holder.submissionId}/cancel`, { key: a.key, method: "POST" });
    expect(await dispatchState(env)).toMatchObject({ placed: [], waiting: [] });
  });

  it("a worker without room never fails a run: it waits at the head of the line and starts later", async () => {
    const holder = await queuedRun(a, { fitness_func: SLOW, num_generations: 1000 });
    await deliver([holder.runId]);
    // The Worker's books say two places, the GA worker has one: its start is refused with 503 at_capacity.
    const overbooked = { ...env, RUN_CAPACITY: "2" };
    const waiting = await queuedRun(b);
    const result = await deliver([waiting.runId], overbooked);
    expect(result.explicitAcks).toHaveLength(1);
    expect(await runRow(waiting.runId)).toMatchObject({ status: "queued", error_code: null });
    expect((await dispatchState(env)).waiting[0]).toBe(waiting.runId);

    await call(`/api/v1/submissions/${holder.submissionId}/cancel`, { key: a.key, method: "POST" });
    // Places are offered again after the short pause that follows a refusal.
    const state = await until(
      () => dispatchState(env),
      (s) => s.placed.includes(waiting.runId),
    );
    expect(state.placed).toEqual([waiting.runId]);
    // The Worker's books free the holder's place at its cancel; the GA worker once its child is gone
    // (on a loaded machine, later): the granted start comes when it has room, as the queue's would.
    await workerIdle();
    await deliver([waiting.runId], env, true);
    expect(await runRow(waiting.runId)).toMatchObject({ status: "running", error_code: null });
    await completeRun(waiting.runId);
    expect((await runRow(waiting.runId))!.status).toBe("succeeded");
  }, 30_000);
});
