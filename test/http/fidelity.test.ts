// PyGAD fidelity on the Worker's side (docs/api.md#creation-parameters): the forms stock PyGAD accepts, multi-objective results
// (rows, files, plots, lists, webhooks), warnings, the engine path, infinite fitness, failed runs'
// progress and the files the GA worker uploads before its report. Runs end through the internal report
// endpoint, as the GA worker ends them (the worker's side: container/tests/test_fidelity.py).
import { describe, expect, it } from "vitest";
import {
  accountPerTest,
  call,
  completeRun,
  createSubmission,
  env,
  expectError,
  failedFields,
  finishSubmission,
  getSubmission,
  job,
  json,
  newResult,
  runningRun as runningAs,
  stageFile,
  TWO_OBJECTIVES,
} from "../helpers/api";

const a = accountPerTest();

const post = (body: Record<string, unknown>) => call("/api/v1/submissions/", { key: a.key, body });
const result = async (id: string) => json(await call(`/api/v1/results/${id}`, { key: a.key }));
const file = async (resultId: string, name: string) => call(`/api/v1/results/${resultId}/files/${name}`, { key: a.key });
const fileText = async (resultId: string, name: string) => (await file(resultId, name)).text();

const runningRun = (overrides: Record<string, unknown> = {}) => runningAs(a.key, overrides);

describe("forms stock PyGAD 3.9.2 accepts", () => {
  const accepted: [string, Record<string, unknown>][] = [
    ["stop_criteria time_N", { stop_criteria: "time_2.5" }],
    ["stop_criteria evaluations_N", { stop_criteria: "evaluations_500" }],
    ["stop_criteria with an exponent threshold", { stop_criteria: ["reach_1e-3", "reach_-2.5E+1", "saturate_1e2", "time_.5"] }],
    ["stop_criteria reach with one threshold per objective", { stop_criteria: "reach_1_0.5", parent_selection_type: "nsga2" }],
    [
      "per-gene random_mutation_min_val / max_val",
      { random_mutation_min_val: [-1, -2, 0, 0, 1], random_mutation_max_val: [1, 2, 0, 0.5, 1] },
    ],
    ["random_mutation_min_val equal to max_val", { random_mutation_min_val: 0.5, random_mutation_max_val: 0.5 }],
    ["random_mutation bounds in either order", { random_mutation_min_val: 1, random_mutation_max_val: -1 }],
    ["init_range equal bounds, and per gene", { init_range_low: [0, 0, 1, 1, 2], init_range_high: [0, 1, 1, 2, 2] }],
    ["gene_type with a precision", { gene_type: ["float", 2] }],
    ["gene_type float without a precision", { gene_type: ["float", null] }],
    ["gene_type per gene", { gene_type: ["int", "float", ["float", 1], "float32", "uint8"] }],
    ["gene_type a numpy type", { gene_type: "int16" }],
    ["save_solutions and save_best_solutions", { save_solutions: true, save_best_solutions: true }],
    ["nsga2", { parent_selection_type: "nsga2" }],
    ["tournament_nsga2 with K_tournament", { parent_selection_type: "tournament_nsga2", K_tournament: 3 }],
  ];

  it.each(accepted)("%s: 202, stored as given", async (_label, overrides) => {
    const res = await post(job(overrides));
    expect(res.status, await res.clone().text()).toBe(202);
    const row = await getSubmission(a.key, (await json(res)).id);
    expect(row.parameters).toMatchObject(overrides);
  });

  it("reports every failing stop criterion and gene type problem by field", async () => {
    const err = await expectError(
      await post(
        job({ stop_criteria: ["reach_x"], gene_type: ["int", 3], save_solutions: true, num_generations: 100_000, sol_per_pop: 10 }),
      ),
      400,
      "validation_failed",
    );
    expect(failedFields(err).sort()).toEqual(["gene_type", "save_solutions", "stop_criteria.0"].sort());
    const messages = err.details.fields.map((f: { message: string }) => f.message).join("\n");
    expect(messages).toContain('"x" is not a number');
    expect(messages).toContain("only a float type takes a precision");
    expect(messages).toContain("at most 1000000");
  });

  it("the save_solutions cap holds for a continue's merged parameters too", async () => {
    const { resultId } = await newResult(a.key, { save_solutions: true, num_generations: 10 });
    const err = await expectError(
      await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { num_generations: 100_000 } }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toContain("save_solutions");
  });
});

describe("a multi-objective result", () => {
  it("carries its objectives, front and per-objective history; its files hold the front (uploaded) and its plots", async () => {
    const { submissionId, runId } = await runningRun({ parent_selection_type: "nsga2" });
    const front = {
      num_objectives: 2,
      objectives: TWO_OBJECTIVES.pareto_front.objectives,
      solutions: [
        [1, 2, 3, 4, 5],
        [0, 0, 0, 0, 0],
        [5, 4, 3, 2, 1],
      ],
    };
    expect((await stageFile(runId, "pareto_front.json", JSON.stringify(front))).status).toBe(204);
    expect((await stageFile(runId, "pareto_front.csv", "index,objective_0,objective_1,gene_0\n0,0.9,-0.1,1\n", "text/csv")).status).toBe(
      204,
    );
    expect((await completeRun(runId, { result: TWO_OBJECTIVES })).status).toBe(204);
    const row = await getSubmission(a.key, submissionId);
    expect(row).toMatchObject({ status: "succeeded", best_solution_fitness: null, error: null });
    const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results;
    expect(item).toMatchObject({ best_solution_fitness: null, num_objectives: 2 });
    const r = await result(item.id);
    expect(r).toMatchObject({
      best_solution_fitness: null,
      num_objectives: 2,
      best_solution_objectives: [0.9, -0.1],
      pareto_front_size: 3,
      best_solutions_fitness: TWO_OBJECTIVES.best_solutions_fitness,
    });
    const names = r.files.map((f: { name: string }) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "pareto_front.json",
        "pareto_front.csv",
        "pareto_front.svg",
        "fitness.svg",
        "fitness_history.csv",
        "result.json",
      ]),
    );
    expect(JSON.parse(await fileText(item.id, "pareto_front.json"))).toEqual(front);
    expect((await file(item.id, "pareto_front.csv")).headers.get("Content-Type")).toBe("text/csv");
    expect(await fileText(item.id, "fitness_history.csv")).toBe(
      "generation,objective_0,objective_1\n0,0.5,-2\n1,0.7,-1\n2,0.9,-0.1\n3,0.95,-0.1\n",
    );
    const scatter = await fileText(item.id, "pareto_front.svg");
    expect(scatter).toMatch(/^<svg /);
    expect(scatter.match(/<circle /g)).toHaveLength(3);
    expect(scatter).toContain("objective 0");
    const history = await fileText(item.id, "fitness.svg");
    expect(history.match(/<polyline /g)).toHaveLength(2); // one panel per objective
    const summary = JSON.parse(await fileText(item.id, "result.json"));
    expect(summary).toMatchObject({
      num_objectives: 2,
      best_solution_fitness: null,
      best_solution_objectives: [0.9, -0.1],
      pareto_front_size: 3,
    });
    expect(summary).not.toHaveProperty("pareto_front");
  });

  it("with three objectives plots the front in parallel coordinates", async () => {
    const objectives = [
      [1, 2, 3],
      [3, 2, 1],
      [2, 3, 1],
    ];
    const { resultId } = await newResult(
      a.key,
      {},
      {
        result: {
          ...TWO_OBJECTIVES,
          best_solution_objectives: [1, 2, 3],
          best_solutions_fitness: [[1, 2, 3]],
          num_objectives: 3,
          pareto_front: { size: 3, objectives },
        },
      },
    );
    const svg = await fileText(resultId, "pareto_front.svg");
    expect(svg.match(/<polyline /g)).toHaveLength(3);
    expect(svg).toContain("objective 2");
  });

  it("orders and filters by best_solution_fitness as documented: null, the lowest", async () => {
    const { submissionId: multi } = await newResult(a.key, { name: "multi" }, { result: TWO_OBJECTIVES });
    const { submissionId: single } = await newResult(a.key, { name: "single" }, { fitness: -5 });
    const names = async (query: string) =>
      (await json(await call(`/api/v1/results/?${query}`, { key: a.key }))).results.map((r: { submission_id: string }) => r.submission_id);
    expect(await names("ordering=-best_solution_fitness")).toEqual([single, multi]);
    expect(await names("ordering=best_solution_fitness")).toEqual([multi, single]);
    expect(await names("min_fitness=-1000")).toEqual([single]);
  });

  it("webhook events carry the objectives (decimal strings) and the front's size", async () => {
    const { runId } = await runningRun();
    expect((await completeRun(runId, { result: { ...TWO_OBJECTIVES, best_solution_objectives: [1.5e-7, -2] } })).status).toBe(204);
    const events = await env.DB.prepare("SELECT type, data FROM events WHERE run_id = ? ORDER BY type")
      .bind(runId)
      .all<{ type: string; data: string }>();
    const byType = Object.fromEntries(events.results.map((e) => [e.type, JSON.parse(e.data)]));
    for (const type of ["submission.succeeded", "result.completed"]) {
      expect(byType[type]).toMatchObject({
        best_solution_fitness: null,
        num_objectives: 2,
        best_solution_objectives: ["0.00000015", "-2"],
        pareto_front_size: 3,
      });
    }
  });

  it("refuses a report whose objective vectors are not numbers", async () => {
    const { runId } = await runningRun();
    const res = await completeRun(runId, { result: { ...TWO_OBJECTIVES, best_solutions_fitness: [["a", 1]] } });
    expect(res.status).toBe(400);
  });
});

describe("files the GA worker uploads before its report", () => {
  it("saved solutions become the result's files", async () => {
    const { submissionId, runId } = await runningRun({ save_solutions: true, save_best_solutions: true });
    const saved = JSON.stringify([{ generation: 0, solutions: [[1, 2, 3, 4, 5]], fitness: [-55] }]);
    const best = JSON.stringify([{ generation: 0, solution: [1, 2, 3, 4, 5], fitness: -55 }]);
    expect((await stageFile(runId, "solutions.json", saved)).status).toBe(204);
    expect((await stageFile(runId, "best_solutions.json", best)).status).toBe(204);
    expect((await completeRun(runId)).status).toBe(204);
    const resultId = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results[0].id;
    expect(await fileText(resultId, "solutions.json")).toBe(saved);
    expect(await fileText(resultId, "best_solutions.json")).toBe(best);
  });

  it("refuses names it does not know, runs that are not running and other runs' tokens", async () => {
    const { runId } = await runningRun();
    expect((await stageFile(runId, "secrets.json", "{}")).status).toBe(404);
    expect((await stageFile(runId, "pareto_front.json", "{}", "application/json", "0".repeat(64))).status).toBe(401);
    const queued = (await getSubmission(a.key, await createSubmission(a.key))).latest_run.id;
    expect((await stageFile(queued, "pareto_front.json", "{}")).status).toBe(409);
  });

  it("a run that ends without a result leaves none of its uploads behind", async () => {
    const { runId } = await runningRun();
    await stageFile(runId, "pareto_front.json", "{}");
    await stageFile(runId, "population.json", "[[1]]");
    expect((await completeRun(runId, { status: "failed" })).status).toBe(204);
    expect(await env.FILES.head(`runs/${runId}/pareto_front.json`)).toBeNull();
    expect(await env.FILES.head(`runs/${runId}/population.json`)).toBeNull();
  });
});

describe("warnings, engine and constraint violations", () => {
  const WARNINGS = [
    { message: "UserWarning: mutation_percent_genes selects fewer than one gene. mutation_num_genes is set to 1.", count: 1 },
    { message: "UserWarning: No value satisfied the constraint for the gene at index 0 with value 0.31", count: 27 },
  ];

  it("are shown on the result, in result.json and (warnings) on the submission row", async () => {
    const { submissionId, resultId } = await newResult(
      a.key,
      {},
      { warnings: WARNINGS, engine: "accelerated:sss+none+random", result: { constraint_violations: [{ gene: 0, value: 0.31 }] } },
    );
    expect((await getSubmission(a.key, submissionId)).warnings).toEqual(WARNINGS);
    const r = await result(resultId);
    expect(r).toMatchObject({
      warnings: WARNINGS,
      engine: "accelerated:sss+none+random",
      constraint_violations: [{ gene: 0, value: 0.31 }],
    });
    expect(JSON.parse(await fileText(resultId, "result.json"))).toMatchObject({
      warnings: WARNINGS,
      engine: "accelerated:sss+none+random",
    });
  });

  it("a run without warnings shows an empty list; without gene_constraint, constraint_violations is null", async () => {
    const { submissionId, resultId } = await newResult(a.key);
    expect((await getSubmission(a.key, submissionId)).warnings).toEqual([]);
    expect(await result(resultId)).toMatchObject({ warnings: [], constraint_violations: null });
  });

  it("a failed run's warnings are on the submission row", async () => {
    const submissionId = await createSubmission(a.key);
    await finishSubmission(a.key, submissionId, { status: "failed", warnings: WARNINGS });
    expect((await getSubmission(a.key, submissionId)).warnings).toEqual(WARNINGS);
  });
});

describe("a failed run's progress and an infinite best fitness", () => {
  it("a failed run keeps the progress it made (generations completed, best fitness)", async () => {
    const submissionId = await createSubmission(a.key);
    await finishSubmission(a.key, submissionId, { status: "failed", progress: { generations_completed: 5, best_solution_fitness: -0.25 } });
    expect(await getSubmission(a.key, submissionId)).toMatchObject({
      status: "failed",
      generations_completed: 5,
      best_solution_fitness: -0.25,
    });
  });

  it("an infinite best fitness: null in rows, inf in the files, marked in the plot", async () => {
    const { submissionId, resultId } = await newResult(
      a.key,
      {},
      { fitness: "inf" as unknown as number, result: { best_solutions_fitness: [-3, -1, "inf", "inf"] } },
    );
    expect((await getSubmission(a.key, submissionId)).best_solution_fitness).toBeNull();
    const r = await result(resultId);
    expect(r).toMatchObject({ best_solution_fitness: null, best_solutions_fitness: [-3, -1, null, null] });
    expect(await fileText(resultId, "fitness_history.csv")).toBe("generation,best_fitness\n0,-3\n1,-1\n2,inf\n3,inf\n");
    expect(JSON.parse(await fileText(resultId, "result.json")).best_solution_fitness).toBe("inf");
    const svg = await fileText(resultId, "fitness.svg");
    expect(svg).toContain("<polyline "); // the finite generations
    expect(svg.match(/<polygon /g)).toHaveLength(2); // a +inf marker per infinite generation
  });
});
