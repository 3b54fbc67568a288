// Results: get, patch, delete (with its R2 files), file downloads, continue, and what deleting a
// submission leaves (docs/api.md#submissions-runs-results). Results come from runs ended through the internal report endpoint.
import { describe, expect, it, vi } from "vitest";
import {
  accountPerTest,
  BASE,
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  failedFields,
  finishSubmission,
  getSubmission,
  json,
  newResult,
} from "../helpers/api";

const FILES: [string, string][] = [
  ["best_solution.csv", "text/csv"],
  ["fitness.svg", "image/svg+xml"],
  ["fitness_history.csv", "text/csv"],
  ["population.json", "application/json"],
  ["result.json", "application/json"],
];
const r2Key = (resultId: string, name: string) => `results/${resultId}/${name}`;

// A fresh account per test: each stays far inside the per-key and per-user rate windows.
const a = accountPerTest();

describe("GET /api/v1/results/{id}", () => {
  it("returns the full row with genes, fitness history and file links", async () => {
    const submissionId = await createSubmission(a.key, { name: "for results" });
    const runId = (await getSubmission(a.key, submissionId)).latest_run.id;
    const resultId = await finishSubmission(a.key, submissionId, { fitness: -0.125 });
    const res = await call(`/api/v1/results/${resultId}`, { key: a.key });
    expect(res.status).toBe(200);
    const r = await json(res);
    expect(r).toMatchObject({
      id: resultId,
      submission_id: submissionId,
      run_id: runId,
      name: "for results",
      is_shared: false,
      best_solution_fitness: -0.125,
      generations_completed: 4,
      best_solution: [0.1, -0.2, 0.3, 0, 0.05],
      best_solution_generation: 3,
      best_solutions_fitness: [-3, -1, -0.125, -0.125],
      stopped_reason: "completed",
      parameters: { num_generations: 20, num_genes: 5, fitness_func_entry: "fitness" },
    });
    expect(r.created_at).toMatch(/Z$/);
    expect(r.files.map((f: any) => [f.name, f.content_type])).toEqual(FILES);
    for (const f of r.files) {
      expect(f.url).toBe(`${BASE}/api/v1/results/${resultId}/files/${f.name}`);
      expect(f.size_bytes).toBeGreaterThan(0);
    }
  });

  it("stores a non-finite fitness (reported as null) as null", async () => {
    const { resultId } = await newResult(a.key, {}, { fitness: null });
    const r = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(r.best_solution_fitness).toBeNull();
    expect(r.best_solutions_fitness).toEqual([-3, -1, null, null]);
  });
});

describe("GET /api/v1/results/{id}/files/{name}", () => {
  it("downloads every file with its content type and the size the row announces", async () => {
    const { resultId } = await newResult(a.key, {}, { fitness: -0.5 });
    const r = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    for (const f of r.files) {
      const res = await call(`/api/v1/results/${resultId}/files/${f.name}`, { key: a.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe(f.content_type);
      expect(res.headers.get("Content-Disposition")).toBe(`attachment; filename="${f.name}"`);
      expect(res.headers.get("X-Request-Id")).toBeTruthy();
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(bytes.byteLength).toBe(f.size_bytes);
    }
    const history = await (await call(`/api/v1/results/${resultId}/files/fitness_history.csv`, { key: a.key })).text();
    expect(history).toBe("generation,best_fitness\n0,-3\n1,-1\n2,-0.5\n3,-0.5\n");
    const population = await json(await call(`/api/v1/results/${resultId}/files/population.json`, { key: a.key }));
    expect(population).toEqual([
      [0.1, -0.2, 0.3, 0, 0.05],
      [1, 2, 3, 4, 5],
    ]);
    const summary = await json(await call(`/api/v1/results/${resultId}/files/result.json`, { key: a.key }));
    expect(summary).toMatchObject({ result_id: resultId, best_solution_fitness: -0.5 });
    expect(summary.population).toBeUndefined();
  });

  it.each(["nope.txt", "RESULT.JSON", "..%2Fresult.json", "result.json%00", "%E2%98%83"])(
    "an unknown file name %s is 404",
    async (name) => {
      const { resultId } = await newResult(a.key);
      await expectError(await call(`/api/v1/results/${resultId}/files/${name}`, { key: a.key }), 404, "not_found");
    },
  );
});

describe("PATCH /api/v1/results/{id}", () => {
  it("changes name and/or is_shared and answers with the full row", async () => {
    const { resultId } = await newResult(a.key);
    const res = await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body: { name: "Renamed ✓", is_shared: true } });
    expect(res.status).toBe(200);
    const row = await json(res);
    expect(row).toMatchObject({ id: resultId, name: "Renamed ✓", is_shared: true });
    expect(row.files).toHaveLength(5);

    const only = await json(await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body: { is_shared: false } }));
    expect(only).toMatchObject({ name: "Renamed ✓", is_shared: false });
    expect(await json(await call(`/api/v1/results/${resultId}`, { key: a.key }))).toMatchObject({ name: "Renamed ✓", is_shared: false });
    const surrogate = await expectError(
      await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body: { name: "x\ud800" } }),
      400,
      "validation_failed",
    );
    expect(surrogate.details.fields[0].field).toBe("name");
    const empty = await json(await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body: { name: "" } }));
    expect(empty.name).toBe("");
  });

  it.each([
    ["an empty object", {}, "body"],
    ["is_shared as a string", { is_shared: "yes" }, "is_shared"],
    ["is_shared null", { is_shared: null }, "is_shared"],
    ["name too long", { name: "n".repeat(201) }, "name"],
    ["name a number", { name: 3 }, "name"],
    ["a read-only field", { best_solution_fitness: 100 }, "best_solution_fitness"],
    ["an array body", [], "body"],
  ])("%s is 400", async (_label, body, field) => {
    const { resultId } = await newResult(a.key);
    const err = await expectError(
      await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toContain(field);
  });

  it("malformed JSON is 400 and a non-JSON body 415", async () => {
    const { resultId } = await newResult(a.key);
    const patch = (rawBody: string, type: string) =>
      call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", rawBody, headers: { "Content-Type": type } });
    await expectError(await patch("{", "application/json"), 400, "malformed_json");
    await expectError(await patch("name=x", "application/x-www-form-urlencoded"), 415, "unsupported_media_type");
  });
});

describe("DELETE /api/v1/results/{id}", () => {
  it("removes the result and its R2 objects, and leaves the submission", async () => {
    const { submissionId, resultId } = await newResult(a.key);
    for (const [name] of FILES) expect(await env.FILES.get(r2Key(resultId, name))).not.toBeNull();

    const res = await call(`/api/v1/results/${resultId}`, { key: a.key, method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");

    for (const [name] of FILES) expect(await env.FILES.get(r2Key(resultId, name))).toBeNull();
    expect(await env.DB.prepare("SELECT count(*) AS n FROM result_files WHERE result_id = ?").bind(resultId).first("n")).toBe(0);
    await expectError(await call(`/api/v1/results/${resultId}`, { key: a.key }), 404, "not_found");
    await expectError(await call(`/api/v1/results/${resultId}/files/result.json`, { key: a.key }), 404, "not_found");
    await expectError(await call(`/api/v1/results/${resultId}`, { key: a.key, method: "DELETE" }), 404, "not_found");
    const sub = await getSubmission(a.key, submissionId);
    expect(sub.status).toBe("succeeded");
    const list = await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }));
    expect(list.results).toEqual([]);
  });
});

describe("DELETE of a submission keeps its results", () => {
  it("the results, their files and the results list stay; continuing one is 409", async () => {
    const { submissionId, resultId } = await newResult(a.key);
    expect((await call(`/api/v1/submissions/${submissionId}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    await expectError(await call(`/api/v1/submissions/${submissionId}`, { key: a.key }), 404, "not_found");

    const r = await json(await call(`/api/v1/results/${resultId}`, { key: a.key }));
    expect(r).toMatchObject({ id: resultId, submission_id: submissionId });
    expect((await call(`/api/v1/results/${resultId}/files/population.json`, { key: a.key })).status).toBe(200);
    const list = await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }));
    expect(list.results.map((x: any) => x.id)).toEqual([resultId]);

    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    await expectError(await call(`/api/v1/results/${resultId}/continue`, { key: a.key, method: "POST" }), 409, "invalid_state");
    expect(send).not.toHaveBeenCalled();
    // And the result can still be renamed and deleted.
    expect((await call(`/api/v1/results/${resultId}`, { key: a.key, method: "PATCH", body: { name: "orphan" } })).status).toBe(200);
    expect((await call(`/api/v1/results/${resultId}`, { key: a.key, method: "DELETE" })).status).toBe(204);
  });
});

describe("POST /api/v1/results/{id}/continue", () => {
  it("adds a continue run to the same submission (202, kind continue, parent_result_id)", async () => {
    const { submissionId, resultId } = await newResult(a.key);
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const res = await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { num_generations: 9 } });
    expect(res.status).toBe(202);
    const accepted = await json(res);
    const sub = await getSubmission(a.key, submissionId);
    expect(accepted).toEqual({
      id: submissionId,
      status: "queued",
      name: sub.name,
      description: "",
      submission_type: "new",
      created_at: sub.created_at,
      status_url: `${BASE}/api/v1/submissions/${submissionId}`,
      result_url: `${BASE}/api/v1/results/?submission_id=${submissionId}`,
      request_id: res.headers.get("X-Request-Id"),
    });
    expect(sub).toMatchObject({
      status: "queued",
      run_count: 2,
      latest_run: { kind: "continue", status: "queued", parent_result_id: resultId },
    });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0]![0]).toEqual({ run_id: sub.latest_run.id, account_id: a.id, places: 1 });
    const run = await env.DB.prepare("SELECT parameters FROM runs WHERE id = ?").bind(sub.latest_run.id).first<{ parameters: string }>();
    expect(JSON.parse(run!.parameters)).toMatchObject({ num_generations: 9, num_genes: 5 });

    // While that run is live, another continue (or a reexecute) is 409.
    await expectError(await call(`/api/v1/results/${resultId}/continue`, { key: a.key, method: "POST" }), 409, "invalid_state");
    await expectError(await call(`/api/v1/submissions/${submissionId}/reexecute`, { key: a.key, method: "POST" }), 409, "invalid_state");
    expect(send).toHaveBeenCalledTimes(1);

    // The continue run's own result belongs to the same submission: two results now.
    expect((await completeRun(sub.latest_run.id, { fitness: 0.5 })).status).toBe(204);
    const list = await json(await call(`/api/v1/results/?submission_id=${submissionId}&ordering=created_at`, { key: a.key }));
    expect(list.results).toHaveLength(2);
    expect(list.results[0].id).toBe(resultId);
    expect(list.results[1].best_solution_fitness).toBe(0.5);
  });

  it.each([
    ["num_genes", { num_genes: 6 }],
    ["gene_type", { gene_type: "int" }],
    ["sol_per_pop", { sol_per_pop: 12 }],
    ["an unknown field", { nope: 1 }],
  ])("cannot override %s (400)", async (_label, body) => {
    const { resultId } = await newResult(a.key);
    const err = await expectError(await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body }), 400, "validation_failed");
    expect(failedFields(err)).toContain(Object.keys(body)[0]);
  });

  it("an override over the tier cap is 403 and adds no run", async () => {
    const { submissionId, resultId } = await newResult(a.key);
    await expectError(
      await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { num_generations: 10_001 } }),
      403,
      "tier_limit_exceeded",
    );
    expect((await getSubmission(a.key, submissionId)).run_count).toBe(1);
  });

  it("an unknown result is 404", async () => {
    await expectError(await call(`/api/v1/results/AAAAAAAAAAAA/continue`, { key: a.key, method: "POST" }), 404, "not_found");
  });
});

describe("the internal report endpoint the tests drive", () => {
  it("refuses a bad token (401) and a second completion (409)", async () => {
    const submissionId = await createSubmission(a.key);
    const runId = (await getSubmission(a.key, submissionId)).latest_run.id;
    await expectError(await completeRun(runId, {}, "0".repeat(64)), 401, "unauthorized");
    expect((await getSubmission(a.key, submissionId)).status).toBe("queued");
    expect((await completeRun(runId)).status).toBe(204);
    await expectError(await completeRun(runId), 409, "invalid_state");
    const list = await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }));
    expect(list.results).toHaveLength(1);
  });
});
