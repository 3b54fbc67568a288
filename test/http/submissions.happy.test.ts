// Success paths of the submissions endpoints: create, list, get, delete, cancel, reexecute (docs/api.md#submissions-runs-results).
import { describe, expect, it, vi } from "vitest";
import {
  accountPerTest,
  BASE,
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  FITNESS,
  getSubmission,
  job,
  json,
  newRoomyAccount,
} from "../helpers/api";

const ID = /^[0-9A-Za-z]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

// A fresh account per test: each stays far inside the per-key and per-user rate windows.
const a = accountPerTest();

describe("POST /api/v1/submissions/", () => {
  it("answers 202 with the creation response (the interface's four fields and what the Vilvik SDK reads), and enqueues the first run", async () => {
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const res = await call("/api/v1/submissions/", { key: a.key, body: job({ name: "first job" }) });
    expect(res.status).toBe(202);
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    const body = await json(res);
    expect(body.id).toMatch(ID);
    const row = await getSubmission(a.key, body.id);
    expect(body).toEqual({
      id: body.id,
      status: "queued",
      name: "first job",
      description: "",
      submission_type: "new",
      created_at: row.created_at,
      status_url: `${BASE}/api/v1/submissions/${body.id}`,
      result_url: `${BASE}/api/v1/results/?submission_id=${body.id}`,
      request_id: res.headers.get("X-Request-Id"),
    });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toEqual({ run_id: row.latest_run.id, account_id: a.id, places: 1 });
  });

  it("also answers on the path without the trailing slash", async () => {
    const res = await call("/api/v1/submissions", { key: a.key, body: job() });
    expect(res.status).toBe(202);
  });

  it("accepts a charset parameter on the JSON content type", async () => {
    const res = await call("/api/v1/submissions/", {
      key: a.key,
      rawBody: JSON.stringify(job()),
      headers: { "Content-Type": "Application/JSON; charset=utf-8" },
    });
    expect(res.status).toBe(202);
  });
});

describe("GET /api/v1/submissions/{id}", () => {
  it("returns the full row of a queued submission, parameters with their defaults", async () => {
    const id = await createSubmission(a.key, { name: "full row", gene_type: "float", random_seed: 7 });
    const res = await call(`/api/v1/submissions/${id}`, { key: a.key });
    expect(res.status).toBe(200);
    const row = await json(res);
    expect(row).toMatchObject({
      id,
      name: "full row",
      status: "queued",
      source: "api",
      submission_type: "new",
      started_at: null,
      finished_at: null,
      execution_duration_ms: null,
      generations_completed: null,
      best_solution_fitness: null,
      run_count: 1,
      latest_run: { kind: "initial", status: "queued", parent_result_id: null },
      error: null,
      hit_time_cap: false,
      hit_memory_cap: false,
      credits_charged: 0,
      status_url: `${BASE}/api/v1/submissions/${id}`,
      result_url: `${BASE}/api/v1/results/?submission_id=${id}`,
    });
    expect(row.latest_run.id).toMatch(ID);
    expect(row.latest_run.id).not.toBe(id);
    for (const field of ["created_at", "queued_at", "updated_at"]) expect(row[field]).toMatch(ISO);
    expect(row.parameters).toEqual({
      num_generations: 20,
      num_parents_mating: 4,
      sol_per_pop: 10,
      num_genes: 5,
      init_range_low: -4,
      init_range_high: 4,
      sample_size: 100,
      fitness_func: FITNESS,
      fitness_func_entry: "fitness",
      gene_type: "float",
      random_seed: 7,
    });
  });

  it("shows the metrics, charge and status of a run that succeeded", async () => {
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    expect((await completeRun(runId, { fitness: -0.25 })).status).toBe(204);
    const row = await getSubmission(a.key, id);
    expect(row).toMatchObject({
      status: "succeeded",
      latest_run: { id: runId, kind: "initial", status: "succeeded", parent_result_id: null },
      execution_duration_ms: 700,
      cpu_seconds_used: 0.5,
      peak_memory_mb: 60,
      generations_completed: 4,
      best_solution_fitness: -0.25,
      error: null,
      // 0.5 CPU-s × 0.00005 + (60/1024 GB × 0.7 s) × 0.00001 = 0.00002541, rounded up to a micro-unit.
      credits_charged: 0.000026,
    });
    expect(row.finished_at).toMatch(ISO);
  });

  it("shows error.code and message of a run that failed", async () => {
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    const res = await completeRun(runId, {
      status: "failed",
      error: { code: "code_error", message: "line 4: ZeroDivisionError: division by zero" },
    });
    expect(res.status).toBe(204);
    const row = await getSubmission(a.key, id);
    expect(row.status).toBe("failed");
    expect(row.error).toEqual({ code: "code_error", message: "line 4: ZeroDivisionError: division by zero" });
    const results = await json(await call(`/api/v1/results/?submission_id=${id}`, { key: a.key }));
    expect(results.results).toEqual([]);
  });
});

describe("GET /api/v1/submissions/", () => {
  it("lists the caller's submissions as list items, newest first", async () => {
    const own = await newRoomyAccount();
    const first = await createSubmission(own.key, { name: "one" });
    await new Promise((r) => setTimeout(r, 5)); // distinct created_at
    const second = await createSubmission(own.key, { name: "two" });
    const res = await call("/api/v1/submissions/", { key: own.key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.next).toBeNull();
    expect(body.previous).toBeNull();
    expect(body.results.map((r: any) => r.id)).toEqual([second, first]);
    for (const item of body.results) {
      expect(Object.keys(item).sort()).toEqual(["created_at", "id", "name", "source", "status"]);
      expect(item).toMatchObject({ status: "queued", source: "api" });
      expect(item.created_at).toMatch(ISO);
    }
  });
});

describe("DELETE /api/v1/submissions/{id}", () => {
  it("answers 204 with an empty body and removes the submission and its runs", async () => {
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    const res = await call(`/api/v1/submissions/${id}`, { key: a.key, method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await expectError(await call(`/api/v1/submissions/${id}`, { key: a.key }), 404, "not_found");
    const list = await json(await call("/api/v1/submissions/?page_size=100", { key: a.key }));
    expect(list.results.map((r: any) => r.id)).not.toContain(id);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE id = ?").bind(runId).first("n")).toBe(0);
    // A second delete finds nothing.
    await expectError(await call(`/api/v1/submissions/${id}`, { key: a.key, method: "DELETE" }), 404, "not_found");
  });

  it("deletes a finished submission too", async () => {
    const id = await createSubmission(a.key);
    expect((await completeRun((await getSubmission(a.key, id)).latest_run.id, { status: "failed" })).status).toBe(204);
    expect((await call(`/api/v1/submissions/${id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    await expectError(await call(`/api/v1/submissions/${id}`, { key: a.key }), 404, "not_found");
  });
});

describe("POST /api/v1/submissions/{id}/cancel and /reexecute", () => {
  it("cancels a queued submission (202 with the row), then reexecutes it (run_count 2, kind reexecute)", async () => {
    const id = await createSubmission(a.key);
    const firstRun = (await getSubmission(a.key, id)).latest_run.id;

    const cancel = await call(`/api/v1/submissions/${id}/cancel`, { key: a.key, method: "POST" });
    expect(cancel.status).toBe(202);
    const cancelled = await json(cancel);
    expect(cancelled).toMatchObject({
      id,
      status: "cancelled",
      run_count: 1,
      latest_run: { id: firstRun, kind: "initial", status: "cancelled", parent_result_id: null },
      error: null,
    });
    expect(cancelled.finished_at).toMatch(ISO);
    expect((await getSubmission(a.key, id)).status).toBe("cancelled");

    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const re = await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, method: "POST" });
    expect(re.status).toBe(202);
    const accepted = await json(re);
    const row = await getSubmission(a.key, id);
    expect(accepted).toEqual({
      id,
      status: "queued",
      name: row.name,
      description: "",
      submission_type: "new",
      created_at: row.created_at,
      status_url: `${BASE}/api/v1/submissions/${id}`,
      result_url: `${BASE}/api/v1/results/?submission_id=${id}`,
      request_id: re.headers.get("X-Request-Id"),
    });
    expect(row).toMatchObject({
      status: "queued",
      run_count: 2,
      latest_run: { kind: "reexecute", status: "queued", parent_result_id: null },
    });
    expect(row.latest_run.id).not.toBe(firstRun);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toEqual({ run_id: row.latest_run.id, account_id: a.id, places: 1 });
  });

  it("reexecutes with parameter overrides applied to the new run only", async () => {
    const id = await createSubmission(a.key);
    await completeRun((await getSubmission(a.key, id)).latest_run.id);
    const res = await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: 7, random_seed: 3 } });
    expect(res.status).toBe(202);
    const row = await getSubmission(a.key, id);
    expect(row.run_count).toBe(2);
    expect(row.latest_run.kind).toBe("reexecute");
    const run = await env.DB.prepare("SELECT parameters FROM runs WHERE id = ?").bind(row.latest_run.id).first<{ parameters: string }>();
    expect(JSON.parse(run!.parameters)).toMatchObject({ num_generations: 7, random_seed: 3, num_genes: 5 });
  });

  it("an override changes only what it names: the defaults of creation do not reset stored values", async () => {
    const id = await createSubmission(a.key, { init_range_low: -1, init_range_high: 1, sample_size: 5 });
    await completeRun((await getSubmission(a.key, id)).latest_run.id);
    for (const body of [{}, { num_generations: 9 }]) {
      expect((await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body })).status).toBe(202);
      const row = await getSubmission(a.key, id);
      const run = await env.DB.prepare("SELECT parameters FROM runs WHERE id = ?").bind(row.latest_run.id).first<{ parameters: string }>();
      expect(JSON.parse(run!.parameters)).toMatchObject({ init_range_low: -1, init_range_high: 1, sample_size: 5 });
      await completeRun(row.latest_run.id);
    }
  });

  it("cancels a running submission", async () => {
    const id = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    // The worker took the run (what the queue consumer's claim does).
    await env.DB.batch([
      env.DB.prepare("UPDATE runs SET status = 'running', started_at = ? WHERE id = ?").bind(new Date().toISOString(), runId),
      env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(id),
    ]);
    const res = await call(`/api/v1/submissions/${id}/cancel`, { key: a.key, method: "POST" });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ id, status: "cancelled", latest_run: { id: runId, status: "cancelled" } });
  });
});
