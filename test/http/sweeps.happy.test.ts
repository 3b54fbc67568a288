// POST/GET /api/v1/sweeps and cancel/delete, as a client sees them (docs/api.md#sweeps): the children and
// their seeds, the children waiting for the account's slots and admitted as runs end, the statistics of a
// finished sweep (held to scipy's values), its one `sweep.completed` event, the list, cancel and delete.
import { describe, expect, it } from "vitest";
import { call, completeRun, createSubmission, env, FITNESS, getSubmission, json, latestRunId, newAccount } from "../helpers/api";
import { childRuns, createSweep, finishChildren, getSweep, sweepBody, sweepEvents } from "../helpers/sweeps";

describe("POST /api/v1/sweeps", () => {
  it("creates one queued submission per combination × seed, seed-major, each with its own random_seed", async () => {
    const a = await newAccount();
    const res = await call("/api/v1/sweeps", { key: a.key, body: sweepBody({ base: { ...sweepBody().base, random_seed: 7 } }) });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body).toMatchObject({ status: "running", children: 12, name: "grid" });
    expect(body.status_url).toBe(`https://allele.test/api/v1/sweeps/${body.id}`);
    expect(body.request_id).toBe(res.headers.get("X-Request-Id"));
    // Seed 0 of every combination, then seed 1, …; the seeds are base.random_seed, +1, +2 for every combination.
    expect(body.submissions.map((s: any) => s.combination)).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    expect(body.submissions.map((s: any) => s.random_seed)).toEqual([7, 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9]);
    const child = await getSubmission(a.key, body.submissions[6].id);
    // Combination 2 is sol_per_pop 20 with mutation_probability 0.1 (the first parameter varies slowest).
    expect(child.parameters).toMatchObject({ sol_per_pop: 20, mutation_probability: 0.1, random_seed: 8, num_generations: 20 });
    expect(child.parameters.fitness_func).toBe(FITNESS);
    expect(child).toMatchObject({ status: "queued", sweep_id: body.id, source: "api" });
    expect(child.name).toBe("grid · sol_per_pop=20, mutation_probability=0.1 · seed 8");
  });

  it("derives the seeds from the sweep's id when base.random_seed is not given", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body.id)));
    const first = new DataView(digest.buffer).getUint32(0);
    expect(body.submissions.map((s: any) => s.random_seed)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2].map((j) => (first + j) % 2 ** 32));
    expect((await getSweep(a.key, body.id)).seed_base).toBe(first);
  });

  it("admits as many children as the account has slots; the others wait, off the platform queue", async () => {
    const a = await newAccount(); // Premium: 5 concurrent submissions
    const queuedBefore = (await env.DB.prepare("SELECT queued FROM platform_queue").first<{ queued: number }>())!.queued;
    const body = await createSweep(a.key);
    const runs = await childRuns(body.id);
    expect(runs.map((r) => r.awaiting_slot)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    expect((await env.DB.prepare("SELECT queued FROM platform_queue").first<{ queued: number }>())!.queued - queuedBefore).toBe(5);
    expect((await getSubmission(a.key, runs[0]!.submission_id)).queued_reason).toBe("platform_place");
    expect((await getSubmission(a.key, runs[5]!.submission_id)).queued_reason).toBe("account_slot");
    const account = await json(await call("/api/v1/account", { key: a.key }));
    expect(account.usage.concurrent_submissions).toBe(5);
    expect(account.usage.daily_quota_used).toBe(12); // every child's unit, taken with the sweep
    expect(account.limits.max_sweep_children).toBe(200);
    const sweep = await getSweep(a.key, body.id);
    expect(sweep.counts).toEqual({ queued: 12, running: 0, succeeded: 0, failed: 0, cancelled: 0, waiting: 7 });
    expect(sweep.waiting_on).toMatchObject({ code: "capacity_exceeded" });
  });

  it("admits the next waiting child, in order, when a run of the account ends", async () => {
    const a = await newAccount();
    const single = await createSubmission(a.key); // holds one of the 5 slots
    const body = await createSweep(a.key);
    expect((await childRuns(body.id)).map((r) => r.awaiting_slot)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    // A child's end frees a slot for the next child in the sweep's order…
    expect((await completeRun((await childRuns(body.id))[2]!.id)).status).toBe(204);
    expect((await childRuns(body.id)).map((r) => r.awaiting_slot)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    // …and so does the end of another submission of the account.
    expect((await completeRun(await latestRunId(a.key, single), { status: "failed" })).status).toBe(204);
    expect((await childRuns(body.id)).map((r) => r.awaiting_slot)).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
  });
});

describe("GET /api/v1/sweeps/{id}: the statistics of a finished sweep", () => {
  // Final best fitness per combination (rows) and seed (columns). Combination 3 has the highest median.
  const FIT = [
    [-1.0, -2.0, -3.0],
    [-0.5, -0.6, -0.35],
    [-0.12, -0.25, -0.4],
    [-0.1, -0.2, -0.3],
  ];

  it("summarises each combination, names the best and tests every other against it (scipy's values)", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key);
    await finishChildren(body.id, 4, (c, s) => FIT[c]![s]!);
    const sweep = await getSweep(a.key, body.id);
    expect(sweep.status).toBe("completed");
    expect(sweep.ended_at).not.toBeNull();
    expect(sweep.counts).toEqual({ queued: 0, running: 0, succeeded: 12, failed: 0, cancelled: 0, waiting: 0 });
    expect(sweep.best_combination).toBe(3);
    expect(sweep.combinations.map((c: any) => c.parameters)).toEqual([
      { sol_per_pop: 10, mutation_probability: 0.1 },
      { sol_per_pop: 10, mutation_probability: 0.2 },
      { sol_per_pop: 20, mutation_probability: 0.1 },
      { sol_per_pop: 20, mutation_probability: 0.2 },
    ]);
    const best = sweep.combinations[3];
    expect(best.is_best).toBe(true);
    expect(best.comparison).toBeNull();
    expect(best.statistics).toMatchObject({ n: 3, min: -0.3, max: -0.1, median: -0.2, mean_execution_duration_ms: 700 });
    expect(best.statistics.q1).toBeCloseTo(-0.25, 12);
    expect(best.statistics.q3).toBeCloseTo(-0.15, 12);
    expect(best.statistics.mean_credits_charged).toBeGreaterThan(0);
    expect(best.runs).toHaveLength(3);
    expect(best.runs[0]).toMatchObject({ status: "succeeded", best_solution_fitness: -0.1, waiting: false });
    expect(best.runs[0].result_id).toEqual(expect.any(String));
    // scipy.stats.mannwhitneyu(other, best): (U, p) = (0, 0.1), (0, 0.1), (3, 0.7); exact (3 against 3, no ties).
    expect(sweep.combinations.slice(0, 3).map((c: any) => [c.comparison.u, c.comparison.p_value, c.comparison.method])).toEqual([
      [0, 0.1, "exact"],
      [0, 0.1, "exact"],
      [3, expect.closeTo(0.7, 12), "exact"],
    ]);
    expect(sweep.combinations[2].comparison).toMatchObject({ significant: false, verdict: "no evidence of a difference at 5 %" });
    expect(sweep.combinations[2].statistics.median).toBe(-0.25);
    expect(sweep.credits_charged).toBeGreaterThan(0);
  });

  it("fires sweep.completed once, when the last child ends", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key, sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 1 }));
    const runs = await childRuns(body.id);
    expect((await completeRun(runs[0]!.id, { fitness: -1 })).status).toBe(204);
    expect((await sweepEvents(a.id)).results).toHaveLength(0);
    expect((await completeRun(runs[1]!.id, { status: "failed" })).status).toBe(204);
    const events = (await sweepEvents(a.id)).results;
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.data)).toEqual({
      sweep_id: body.id,
      name: "grid",
      status: "completed",
      children: 2,
      succeeded: 1,
      failed: 1,
      cancelled: 0,
      best_combination: 0,
    });
    // A late, duplicated report changes nothing.
    expect((await completeRun(runs[1]!.id)).status).toBe(409);
    expect((await sweepEvents(a.id)).results).toHaveLength(1);
  });
});

describe("GET /api/v1/sweeps", () => {
  it("lists the account's sweeps newest first with their counts, and pages", async () => {
    const a = await newAccount();
    const first = await createSweep(a.key, sweepBody({ name: "one", grid: { sol_per_pop: [10] }, seeds: 1 }));
    const second = await createSweep(a.key, sweepBody({ name: "two", grid: { sol_per_pop: [10, 20] }, seeds: 2 }));
    const page = await json(await call("/api/v1/sweeps?page_size=1", { key: a.key }));
    expect(page.results).toHaveLength(1);
    expect(page.results[0]).toMatchObject({ id: second.id, name: "two", status: "running", source: "api", children: 4 });
    expect(page.results[0].counts.queued).toBe(4);
    expect(page.next).toMatch(/^\?cursor=/);
    const next = await json(await call(`/api/v1/sweeps${page.next}`, { key: a.key }));
    expect(next.results.map((s: any) => s.id)).toEqual([first.id]);
    expect((await json(await call("/api/v1/sweeps?status=completed", { key: a.key }))).results).toEqual([]);
  });
});

describe("POST /api/v1/sweeps/{id}/cancel and DELETE", () => {
  it("cancels every child: the waiting ones never start, the admitted ones are cancelled; one event tells", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key);
    const before = await childRuns(body.id);
    await completeRun(before[0]!.id, { fitness: -1 });
    const res = await call(`/api/v1/sweeps/${body.id}/cancel`, { key: a.key, method: "POST" });
    expect(res.status).toBe(202);
    const sweep = await json(res);
    expect(sweep).toMatchObject({ status: "cancelled", cancel_requested: true });
    expect(sweep.counts).toEqual({ queued: 0, running: 0, succeeded: 1, failed: 0, cancelled: 11, waiting: 0 });
    const runs = await childRuns(body.id);
    expect(runs.filter((r) => r.status === "cancelled")).toHaveLength(11);
    // Never started: no time, no charge, one ledger row each (zero), no slot held.
    const waited = await env.DB.prepare(
      "SELECT r.started_at, r.credits_charged_micro, (SELECT count(*) FROM credit_ledger l WHERE l.run_id = r.id) AS ledger FROM runs r WHERE r.id = ?",
    )
      .bind(runs[11]!.id)
      .first();
    expect(waited).toEqual({ started_at: null, credits_charged_micro: 0, ledger: 1 });
    expect((await json(await call("/api/v1/account", { key: a.key }))).usage.concurrent_submissions).toBe(0);
    expect((await getSubmission(a.key, runs[11]!.submission_id)).status).toBe("cancelled");
    // The children's own cancel events are not sent; the sweep's end is.
    const types = (await env.DB.prepare("SELECT type FROM events WHERE account_id = ?").bind(a.id).all<{ type: string }>()).results;
    expect(types.map((t) => t.type).sort()).toEqual(["result.completed", "submission.succeeded", "sweep.completed"]);
    expect(JSON.parse((await sweepEvents(a.id)).results[0]!.data)).toMatchObject({ status: "cancelled", succeeded: 1, cancelled: 11 });
    const again = await call(`/api/v1/sweeps/${body.id}/cancel`, { key: a.key, method: "POST" });
    expect(again.status).toBe(409);
  });

  it("deletes the sweep and its children; their results stay, and nothing is sent", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key, sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 1 }));
    const runs = await childRuns(body.id);
    await completeRun(runs[0]!.id, { fitness: -1 });
    const resultId = (await env.DB.prepare("SELECT id FROM results WHERE run_id = ?").bind(runs[0]!.id).first<{ id: string }>())!.id;
    const res = await call(`/api/v1/sweeps/${body.id}`, { key: a.key, method: "DELETE" });
    expect(res.status).toBe(204);
    expect((await call(`/api/v1/sweeps/${body.id}`, { key: a.key })).status).toBe(404);
    expect((await call(`/api/v1/submissions/${runs[1]!.submission_id}`, { key: a.key })).status).toBe(404);
    expect((await call(`/api/v1/results/${resultId}`, { key: a.key })).status).toBe(200);
    expect((await sweepEvents(a.id)).results).toHaveLength(0);
    expect((await json(await call("/api/v1/account", { key: a.key }))).usage.concurrent_submissions).toBe(0);
    expect((await json(await call("/api/v1/sweeps", { key: a.key }))).results).toEqual([]);
  });

  it("a child cancelled on its own ends like any submission, and the sweep goes on", async () => {
    const a = await newAccount();
    const body = await createSweep(a.key, sweepBody({ grid: { sol_per_pop: [10, 20] }, seeds: 1 }));
    const runs = await childRuns(body.id);
    expect((await call(`/api/v1/submissions/${runs[0]!.submission_id}/cancel`, { key: a.key, method: "POST" })).status).toBe(202);
    expect((await getSweep(a.key, body.id)).status).toBe("running");
    await completeRun(runs[1]!.id, { fitness: -2 });
    const sweep = await getSweep(a.key, body.id);
    expect(sweep).toMatchObject({ status: "completed", best_combination: 1 });
    expect(sweep.combinations[0].statistics.n).toBe(0);
  });
});

describe("Idempotency-Key", () => {
  it("replays the first answer and creates one sweep", async () => {
    const a = await newAccount();
    const headers = { "Idempotency-Key": crypto.randomUUID() };
    const first = await createSweep(a.key, sweepBody(), headers);
    const again = await call("/api/v1/sweeps", { key: a.key, body: sweepBody(), headers });
    expect(again.status).toBe(202);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(again)).id).toBe(first.id);
    expect((await json(await call("/api/v1/sweeps", { key: a.key }))).results).toHaveLength(1);
  });
});
