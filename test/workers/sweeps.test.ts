// A sweep's children waiting for slots, inside workerd (docs/api.md#sweeps): admission passes racing each
// other never admit more children than there are slots nor one child twice, a pass that died after taking
// a slot is finished by the next, the cron admits what waits and ends what was not ended, a sweep's end
// and its event happen once whoever races for them, a cancel racing an admission leaves nothing running,
// and the platform queue and the credit gate hold children back without losing them.
import { describe, expect, it } from "vitest";
import { admitChild } from "../../src/admission/admission";
import { admitWaiting, finishSweep } from "../../src/domain/sweep-progress";
import { reconcileSweeps } from "../../src/queues/scheduled";
import { getAccount } from "../../src/storage/accounts";
import { getDb } from "../../src/storage/db";
import { admin, call, env, json, newAccount, type TestAccount } from "../helpers/api";
import { childRuns, createSweep, getSweep, sweepBody, sweepEvents } from "../helpers/sweeps";

const overrides = (a: TestAccount, o: Record<string, number | null>) =>
  admin(`/accounts/${a.id}`, { method: "PATCH", body: { overrides: o } });
const usage = async (a: TestAccount) => (await json(await call("/api/v1/account", { key: a.key }))).usage;
const admittedIndexes = async (sweepId: string) =>
  (await childRuns(sweepId)).filter((r) => r.status !== "queued" || r.awaiting_slot === 0).map((r) => r.sweep_index);

/** A sweep of 8 children on an account with 2 slots: children 0 and 1 admitted, 6 waiting. */
async function twoSlotSweep() {
  const a = await newAccount();
  await overrides(a, { concurrent_submissions: 2 });
  const sweep = await createSweep(a.key, sweepBody({ seeds: 2 }));
  expect(await admittedIndexes(sweep.id)).toEqual([0, 1]);
  return { a, sweep };
}

describe("admission passes", () => {
  it("racing passes admit as many children as slots freed, each once, in order", async () => {
    const { a, sweep } = await twoSlotSweep();
    // Three more slots, without a run's end to start a pass: eight passes race for them.
    await overrides(a, { concurrent_submissions: 5 });
    const admitted = await Promise.all(Array.from({ length: 8 }, () => admitWaiting(env, a.id)));
    expect(admitted.reduce((s, n) => s + n, 0)).toBe(3);
    expect(await admittedIndexes(sweep.id)).toEqual([0, 1, 2, 3, 4]);
    expect((await usage(a)).concurrent_submissions).toBe(5);
    const platform = await env.DB.prepare(
      "SELECT count(*) AS n FROM runs r JOIN submissions s ON s.id = r.submission_id WHERE s.sweep_id = ? AND r.status = 'queued' AND r.awaiting_slot = 0",
    )
      .bind(sweep.id)
      .first<{ n: number }>();
    expect(platform!.n).toBe(5);
  });

  it("a pass that died after taking a child's slot is finished by the next, without a second slot", async () => {
    const { a, sweep } = await twoSlotSweep();
    await overrides(a, { concurrent_submissions: 3 });
    const next = (await childRuns(sweep.id))[2]!;
    const account = (await getAccount(getDb(env.DB), a.id))!;
    // The slot is taken in the account's gate; D1 never hears of it (the Worker died there).
    const run = await env.DB.prepare("SELECT parameters FROM runs WHERE id = ?").bind(next.id).first<{ parameters: string }>();
    expect(await admitChild(env, account, JSON.parse(run!.parameters), next.id, "credits")).toBeNull();
    expect((await usage(a)).concurrent_submissions).toBe(3);
    expect((await childRuns(sweep.id))[2]!.awaiting_slot).toBe(1);
    // The next pass finds it first in line, holding its slot: admitted, nothing more taken.
    expect(await admitWaiting(env, a.id)).toBe(1);
    expect(await admittedIndexes(sweep.id)).toEqual([0, 1, 2]);
    expect((await usage(a)).concurrent_submissions).toBe(3);
  });

  it("the cron admits children whose slots freed without a pass", async () => {
    const { a, sweep } = await twoSlotSweep();
    await overrides(a, { concurrent_submissions: 4 });
    const done = await reconcileSweeps(env);
    expect(done.admitted).toBeGreaterThanOrEqual(2);
    expect(await admittedIndexes(sweep.id)).toEqual([0, 1, 2, 3]);
  });

  it("a full platform queue holds children back; the slot goes back; they are admitted once it drains", async () => {
    const { a, sweep } = await twoSlotSweep();
    await overrides(a, { concurrent_submissions: 4 });
    const queued = (await env.DB.prepare("SELECT queued, cap FROM platform_queue WHERE id = 1").first<{ queued: number; cap: number }>())!;
    await env.DB.prepare("UPDATE platform_queue SET queued = cap WHERE id = 1").run();
    try {
      expect(await admitWaiting(env, a.id)).toBe(0);
      expect(await admittedIndexes(sweep.id)).toEqual([0, 1]);
      expect((await usage(a)).concurrent_submissions).toBe(2);
      expect((await getSweep(a.key, sweep.id)).waiting_on).toMatchObject({ code: "capacity_exceeded" });
    } finally {
      await env.DB.prepare("UPDATE platform_queue SET queued = ? WHERE id = 1").bind(queued.queued).run();
    }
    expect(await admitWaiting(env, a.id)).toBe(2);
    expect(await admittedIndexes(sweep.id)).toEqual([0, 1, 2, 3]);
  });

  it("below the negative-balance cap children wait (the sweep says why) and go on once credits are topped up", async () => {
    const { a, sweep } = await twoSlotSweep();
    await admin(`/accounts/${a.id}/credits`, { body: { amount: -102 } });
    await overrides(a, { concurrent_submissions: 4 });
    expect(await admitWaiting(env, a.id)).toBe(0);
    expect((await getSweep(a.key, sweep.id)).waiting_on).toMatchObject({ code: "insufficient_credits" });
    await admin(`/accounts/${a.id}/credits`, { body: { amount: 10 } });
    expect(await admitWaiting(env, a.id)).toBe(2);
    expect((await getSweep(a.key, sweep.id)).waiting_on).toMatchObject({ code: "capacity_exceeded" });
  });
});

describe("the sweep's end", () => {
  /** Every child ended behind the Worker's back (a run's end whose follow-up never ran). */
  async function endChildrenSilently(sweepId: string) {
    await env.DB.prepare(
      `UPDATE runs SET status = 'failed', awaiting_slot = 0, finished_at = ?, error_code = 'worker_lost'
       WHERE submission_id IN (SELECT id FROM submissions WHERE sweep_id = ?)`,
    )
      .bind(new Date().toISOString(), sweepId)
      .run();
  }

  it("racing ends end it once and write its event once", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    await endChildrenSilently(sweep.id);
    const won = await Promise.all(Array.from({ length: 6 }, () => finishSweep(env, sweep.id)));
    expect(won.filter(Boolean)).toHaveLength(1);
    expect((await sweepEvents(a.id)).results).toHaveLength(1);
    expect((await getSweep(a.key, sweep.id)).status).toBe("completed");
  });

  it("the cron ends a sweep whose last child's end did not end it, and only once", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    await endChildrenSilently(sweep.id);
    expect((await reconcileSweeps(env)).ended).toBeGreaterThanOrEqual(1);
    await reconcileSweeps(env);
    expect((await sweepEvents(a.id)).results).toHaveLength(1);
    const deliveries = await env.DB.prepare("SELECT count(*) AS n FROM deliveries WHERE account_id = ?").bind(a.id).first<{ n: number }>();
    expect(deliveries!.n).toBe(0); // no webhook registered
    expect((await getSweep(a.key, sweep.id)).counts.failed).toBe(4);
  });

  it("a live child keeps it running", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    expect(await finishSweep(env, sweep.id)).toBe(false);
    expect((await getSweep(a.key, sweep.id)).status).toBe("running");
  });

  it("its event is delivered to a subscribed webhook", async () => {
    const a = await newAccount();
    await env.DB.prepare(
      "INSERT INTO webhooks (id, account_id, url, events, is_active, description, secret, created_at, updated_at) VALUES (?, ?, ?, ?, 1, '', ?, ?, ?)",
    )
      .bind(
        "hook00000001",
        a.id,
        "https://example.com/hook",
        JSON.stringify(["sweep.completed"]),
        "s".repeat(64),
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
      )
      .run();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    await endChildrenSilently(sweep.id);
    await finishSweep(env, sweep.id);
    const delivery = await env.DB.prepare("SELECT event_type, status, enqueued_at, body FROM deliveries WHERE account_id = ?")
      .bind(a.id)
      .first<{ event_type: string; status: string; enqueued_at: string | null; body: string }>();
    expect(delivery).toMatchObject({ event_type: "sweep.completed", status: "pending" });
    expect(delivery!.enqueued_at).not.toBeNull();
    expect(JSON.parse(delivery!.body)).toMatchObject({ event_type: "sweep.completed", data: { sweep_id: sweep.id, failed: 4 } });
  });
});

describe("cancel racing admission", () => {
  it("leaves every child ended and no slot held, whichever comes first", async () => {
    const { a, sweep } = await twoSlotSweep();
    await overrides(a, { concurrent_submissions: 6 });
    await Promise.all([
      admitWaiting(env, a.id),
      call(`/api/v1/sweeps/${sweep.id}/cancel`, { key: a.key, method: "POST" }),
      admitWaiting(env, a.id),
    ]);
    await admitWaiting(env, a.id);
    expect((await childRuns(sweep.id)).map((r) => r.status)).toEqual(Array(8).fill("cancelled"));
    expect((await usage(a)).concurrent_submissions).toBe(0);
    expect((await getSweep(a.key, sweep.id)).status).toBe("cancelled");
    expect((await sweepEvents(a.id)).results).toHaveLength(1);
  });
});

describe("a deletion that stopped midway", () => {
  it("is finished by the cron", async () => {
    const a = await newAccount();
    const sweep = await createSweep(a.key, sweepBody({ seeds: 1 }));
    await env.DB.prepare("UPDATE sweeps SET status = 'deleting', updated_at = '2000-01-01T00:00:00.000Z' WHERE id = ?")
      .bind(sweep.id)
      .run();
    expect((await call(`/api/v1/sweeps/${sweep.id}`, { key: a.key })).status).toBe(404);
    expect((await reconcileSweeps(env)).deleted).toBeGreaterThanOrEqual(1);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM submissions WHERE sweep_id = ?").bind(sweep.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect((await usage(a)).concurrent_submissions).toBe(0);
  });
});
