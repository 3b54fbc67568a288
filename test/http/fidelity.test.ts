// PyGAD fidelity on the Worker's side (docs/api.md#creation-parameters): the forms stock PyGAD accepts, multi-objective results
// (rows, files, plots, lists, webhooks), warnings, the engine path, infinite fitness, failed runs'
// progress and the files the GA worker uploads before its report. Runs end through the internal report
// endpoint, as the GA worker ends them (the worker's side: container/tests/test_fidelity.py).
import { describe, expect, it } from "vitest";
import { liveView } from "../../src/dashboard/submissions/live";
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
  reportProgress,
  runningRun as runningAs,
  runToken,
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
    // Issue 26: every parameter of pygad.GA 3.9.2.
    ["nsga3 with its divisions", { parent_selection_type: "nsga3", nsga3_num_divisions: 4 }],
    ["tournament_nsga3", { parent_selection_type: "tournament_nsga3", nsga3_num_divisions: 2, K_tournament: 4 }],
    ["sbx with its eta", { crossover_type: "sbx", sbx_crossover_eta: 2.5 }],
    ["polynomial with its eta", { mutation_type: "polynomial", polynomial_mutation_eta: 5 }],
    ["gene_categorical for all genes", { gene_categorical: true, gene_space: [0, 1, 2], gene_type: "int" }],
    [
      "gene_categorical per gene (a range with a step, a list)",
      { gene_categorical: [true, false, false, false, true], gene_space: [{ low: 0, high: 4, step: 1 }, null, null, null, [1, 5]] },
    ],
    ["suppress_warnings", { suppress_warnings: true }],
    ["K_tournament over sol_per_pop (PyGAD clips it and warns)", { parent_selection_type: "tournament", K_tournament: 11 }],
    ["a gene_space range in reverse (PyGAD takes either order)", { gene_space: { low: 3, high: 1 } }],
    ["adaptive mutation with a pair", { mutation_type: "adaptive", mutation_probability: [0.4, 0.1] }],
    [
      "a custom crossover with its entry",
      {
        crossover_type: "import numpy\n\ndef mix(parents, offspring_size, ga):\n    return numpy.zeros(offspring_size)\n",
        crossover_type_entry: "mix",
      },
    ],
    [
      "a custom parent selection and mutation",
      {
        parent_selection_type:
          "def pick(fitness, num_parents, ga):\n    return ga.population[:num_parents].copy(), list(range(num_parents))\n",
        parent_selection_type_entry: "pick",
        mutation_type: "def shake(offspring, ga):\n    return offspring\n",
        mutation_type_entry: "shake",
      },
    ],
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

describe("population statistics per generation", () => {
  const history = [
    { generation: 0, best: -3, mean: -9.5, median: -8, worst: -21 },
    { generation: 1, best: -1, mean: -4.25, median: -3.5, worst: null },
    { generation: 3, best: -0.5, mean: -0.75, median: -0.6, worst: -1.5 },
  ];

  it("a result keeps population_history; fitness_history.csv gains mean, median and worst columns", async () => {
    const { submissionId, runId } = await runningRun();
    // Live progress carries the population's statistics: the trail keeps them for the chart.
    expect(
      (await reportProgress(runId, { generations_completed: 2, best_solution_fitness: -1, population: [-1, -2, -2.5, -4] })).status,
    ).toBe(204);
    const trail = await env.DB.prepare("SELECT progress_trail FROM runs WHERE id = ?").bind(runId).first<{ progress_trail: string }>();
    expect(JSON.parse(trail!.progress_trail)).toEqual([[2, -1, null, null, [-1, -2, -2.5, -4]]]);
    expect((await completeRun(runId, { result: { population_history: history } })).status).toBe(204);
    const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results;
    const r = await result(item.id);
    expect(r.population_history).toEqual(history);
    // A generation the bounded history does not hold has empty cells.
    expect(await fileText(item.id, "fitness_history.csv")).toBe(
      "generation,best_fitness,mean_fitness,median_fitness,worst_fitness\n" +
        "0,-3,-9.5,-8,-21\n1,-1,-4.25,-3.5,\n2,-0.5,,,\n3,-0.5,-0.75,-0.6,-1.5\n",
    );
  });

  it("a report's points (every generation since the last report) are appended to the trail as they are, bounded", async () => {
    const { runId } = await runningRun();
    const trail = async () =>
      JSON.parse(
        (await env.DB.prepare("SELECT progress_trail FROM runs WHERE id = ?").bind(runId).first<{ progress_trail: string }>())!
          .progress_trail,
      );
    const point = (g: number) => [g, 1 - g, null, null, [1 - g, -1 - g, -1 - g, -2 - g]];
    const report = (from: number, to: number) =>
      reportProgress(runId, {
        generations_completed: to,
        best_solution_fitness: 1 - to,
        population: [1 - to, -1 - to, -1 - to, -2 - to],
        points: Array.from({ length: to - from + 1 }, (_, i) => point(from + i)),
      });
    expect((await report(0, 3)).status).toBe(204); // generation 0 first
    expect((await report(4, 7)).status).toBe(204);
    expect(await trail()).toEqual(Array.from({ length: 8 }, (_, g) => point(g)));
    // A heartbeat without points (an older worker's report) appends its own generation's point as before.
    expect((await reportProgress(runId, { generations_completed: 8, best_solution_fitness: -8 })).status).toBe(204);
    expect((await trail()).at(-1)).toEqual([8, -8]);
    // Past 2,000 points the older ones are thinned evenly (the first kept), the newest 500 kept whole.
    for (let from = 9; from < 9 + 3 * 2000; from += 2000) expect((await report(from, from + 1999)).status).toBe(204);
    const bounded: number[][] = await trail();
    expect(bounded.length).toBeLessThanOrEqual(2000);
    expect(bounded[0]![0]).toBe(0);
    expect(bounded.at(-1)![0]).toBe(6008);
    expect(bounded.slice(-500).map((p) => p[0])).toEqual(Array.from({ length: 500 }, (_, i) => 5509 + i));
    const generations = bounded.map((p) => p[0]!);
    expect(generations).toEqual([...generations].sort((a, b) => a - b));
    // More than a report may carry, or a malformed point: unreadable, nothing appended.
    expect((await reportProgress(runId, { generations_completed: 9, best_solution_fitness: 1, points: [["x", 1]] })).status).toBe(400);
    expect((await trail()).length).toBe(bounded.length);
  });

  it("a report without it (an older worker) stores null, and the CSV keeps its old columns", async () => {
    const { submissionId, runId } = await runningRun();
    expect((await completeRun(runId)).status).toBe(204);
    const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results;
    expect((await result(item.id)).population_history).toBeNull();
    expect((await fileText(item.id, "fitness_history.csv")).split("\n")[0]).toBe("generation,best_fitness");
  });

  it("fitness.svg draws the population's band from worst to best, its mean and median, only when the result has them", async () => {
    const full = [
      { generation: 0, best: -3, mean: -9.5, median: -8, worst: -21 },
      { generation: 1, best: -1, mean: -4.25, median: -3.5, worst: -9 },
      { generation: 2, best: -0.5, mean: -0.75, median: -0.6, worst: -1.5 },
      { generation: 3, best: -0.5, mean: -0.7, median: -0.6, worst: -1 },
    ];
    const { submissionId, runId } = await runningRun();
    expect((await completeRun(runId, { result: { population_history: full } })).status).toBe(204);
    const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results;
    const svg = await fileText(item.id, "fitness.svg");
    expect(svg.match(/<path class="band" [^>]*>/g)).toHaveLength(1);
    expect(svg.match(/<polyline class="mean" /g)).toHaveLength(1);
    expect(svg.match(/<polyline class="median" /g)).toHaveLength(1);
    expect(svg).toContain("population worst to best");
    // The band spans the worst value: the y axis reaches -21.
    expect(svg).toContain(">-21<");
    // A generation without a finite worst breaks the band (here: two pieces of one point each, so none).
    const { submissionId: s2, runId: r2 } = await runningRun();
    expect((await completeRun(r2, { result: { population_history: history } })).status).toBe(204);
    const [gapped] = (await json(await call(`/api/v1/results/?submission_id=${s2}`, { key: a.key }))).results;
    expect(await fileText(gapped.id, "fitness.svg")).not.toContain('class="band"');
    // Without statistics (an older worker's report): no band, no mean or median, no legend.
    const { submissionId: s3, runId: r3 } = await runningRun();
    expect((await completeRun(r3)).status).toBe(204);
    const [plain] = (await json(await call(`/api/v1/results/?submission_id=${s3}`, { key: a.key }))).results;
    const old = await fileText(plain.id, "fitness.svg");
    expect(old).not.toMatch(/class="(band|mean|median)"/);
    expect(old).not.toContain("population worst to best");
  });

  it("a malformed population_history makes the report unreadable (the run still ends)", async () => {
    const { runId } = await runningRun();
    const bad = [{ generation: 0, best: "x", mean: 1, median: 1, worst: 1 }];
    expect((await completeRun(runId, { result: { population_history: bad } })).status).toBe(400);
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
    // As PyGAD gives them: best_solution()'s objective values, and PyGAD's history; the maxima beside it.
    const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key: a.key }))).results;
    expect(item).toMatchObject({ best_solution_fitness: [0.9, -0.1], num_objectives: 2 });
    const r = await result(item.id);
    expect(r).toMatchObject({
      best_solution_fitness: [0.9, -0.1],
      num_objectives: 2,
      best_solution_objectives: [0.9, -0.1],
      pareto_front_size: 3,
      best_solutions_fitness: TWO_OBJECTIVES.best_solutions_fitness,
      objective_maxima: TWO_OBJECTIVES.objective_maxima,
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
      "generation,objective_0,objective_1,max_objective_0,max_objective_1\n" +
        "0,0.5,-2,0.6,-1.5\n1,0.7,-1,0.8,-0.9\n2,0.9,-0.1,0.95,-0.05\n3,0.95,-0.1,0.97,-0.05\n",
    );
    const scatter = await fileText(item.id, "pareto_front.svg");
    expect(scatter).toMatch(/^<svg /);
    expect(scatter.match(/<circle /g)).toHaveLength(3);
    expect(scatter).toContain("objective 0");
    const history = await fileText(item.id, "fitness.svg");
    // One panel per objective, each with PyGAD's history and the population maximum (dashed).
    expect(history.match(/<polyline /g)).toHaveLength(4);
    expect(history.match(/<polyline [^>]*stroke-dasharray/g)).toHaveLength(2);
    expect(history).toContain("Objective values of the best solution per generation (PyGAD's history)");
    expect(history).toContain("population maximum");
    const summary = JSON.parse(await fileText(item.id, "result.json"));
    expect(summary).toMatchObject({
      num_objectives: 2,
      best_solution_fitness: [0.9, -0.1],
      best_solution_objectives: [0.9, -0.1],
      best_solutions_fitness: TWO_OBJECTIVES.best_solutions_fitness,
      objective_maxima: TWO_OBJECTIVES.objective_maxima,
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
          best_solution_fitness: [1, 2, 3],
          best_solution_objectives: [1, 2, 3],
          best_solutions_fitness: [[1, 2, 3]],
          objective_maxima: [[1, 3, 3]],
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

describe("every parameter of pygad.GA 3.9.2: what PyGAD's constructor refuses is refused here, naming the field", () => {
  const refused: [string, Record<string, unknown>, number, string, string][] = [
    ["nsga3 without its divisions", { parent_selection_type: "nsga3" }, 400, "validation_failed", "nsga3_num_divisions"],
    ["adaptive mutation without a pair", { mutation_type: "adaptive" }, 400, "validation_failed", "mutation_type"],
    ["a categorical gene without a finite gene space", { gene_categorical: true }, 400, "validation_failed", "gene_categorical"],
    [
      "a categorical gene over a range without a step",
      { gene_categorical: [false, true, false, false, false], gene_space: [null, { low: 0, high: 3 }, null, null, null] },
      400,
      "validation_failed",
      "gene_categorical",
    ],
    [
      "gene_categorical of the wrong length",
      { gene_categorical: [true], gene_space: [0, 1] },
      400,
      "validation_failed",
      "gene_categorical",
    ],
    ["a gene_space range with a step in reverse", { gene_space: { low: 3, high: 1, step: 1 } }, 400, "validation_failed", "gene_space"],
    ["sbx_crossover_eta not positive", { crossover_type: "sbx", sbx_crossover_eta: 0 }, 400, "validation_failed", "sbx_crossover_eta"],
    ["nsga3_num_divisions 0", { parent_selection_type: "nsga3", nsga3_num_divisions: 0 }, 400, "validation_failed", "nsga3_num_divisions"],
    ["a misspelt crossover", { crossover_type: "sbxx" }, 400, "validation_failed", "crossover_type"],
    ["a logger", { logger: "INFO" }, 400, "validation_failed", "logger"],
    [
      "a custom operator without its entry",
      { crossover_type: "def mix(parents, offspring_size, ga):\n    return parents\n" },
      422,
      "entry_symbol_required",
      "crossover_type_entry",
    ],
    [
      "one of PyGAD's names with an entry",
      { crossover_type: "sbx", crossover_type_entry: "mix" },
      422,
      "entry_symbol_not_found",
      "crossover_type_entry",
    ],
  ];

  it.each(refused)("%s", async (_label, overrides, status, code, field) => {
    const err = await expectError(await post(job(overrides)), status, code);
    const named = err.details.field ?? failedFields(err);
    expect([named].flat(), JSON.stringify(err)).toContain(field);
  });

  it("says where a run's log is when logger is given, and refuses it in overrides too", async () => {
    const err = await expectError(await post(job({ logger: { level: "DEBUG" } })), 400, "validation_failed");
    expect(JSON.stringify(err.details)).toContain("a run's log is its captured output");
    const id = await createSubmission(a.key);
    await finishSubmission(a.key, id);
    await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { logger: "INFO" } }),
      400,
      "validation_failed",
    );
  });

  it("a custom operator is code everywhere code is: stored with its entry, taken as an override, shown as code", async () => {
    const crossover = "import numpy\n\ndef mix(parents, offspring_size, ga):\n    return numpy.zeros(offspring_size)\n";
    const { resultId } = await newResult(a.key, { crossover_type: crossover, crossover_type_entry: "mix" });
    const r = await result(resultId);
    expect(r.parameters).toMatchObject({ crossover_type: crossover, crossover_type_entry: "mix" });
    // A continue may swap it for one of PyGAD's names, or for other code.
    const back = await call(`/api/v1/results/${resultId}/continue`, { key: a.key, body: { crossover_type: "two_points" } });
    expect(back.status).toBe(202);
  });
});

describe("initial_population at creation", () => {
  const POPULATION = Array.from({ length: 10 }, (_, i) => [i, 1 - i, 0.5, 1.5 * i, 2]);

  it("is stored apart, shown as has_initial_population, and served to the run that starts from it", async () => {
    const { submissionId, runId } = await runningRun({ initial_population: POPULATION });
    const row = await getSubmission(a.key, submissionId);
    expect(row.has_initial_population).toBe(true);
    expect(row.parameters).not.toHaveProperty("initial_population");
    const served = await call(`/internal/v1/runs/${runId}/initial-population`, {
      headers: { Authorization: `Bearer ${await runToken(runId)}` },
    });
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual(POPULATION);
    // Without one: false, and nothing to serve.
    const { submissionId: plain, runId: plainRun } = await runningRun();
    expect((await getSubmission(a.key, plain)).has_initial_population).toBe(false);
    const none = await call(`/internal/v1/runs/${plainRun}/initial-population`, {
      headers: { Authorization: `Bearer ${await runToken(plainRun)}` },
    });
    expect(none.status).toBe(404);
  });

  it("a reexecute starts from it again and cannot change its shape or types; deleting the submission removes it", async () => {
    const id = await createSubmission(a.key, { initial_population: POPULATION });
    await finishSubmission(a.key, id);
    const key = (await env.DB.prepare("SELECT initial_population_key AS k FROM submissions WHERE id = ?").bind(id).first<{ k: string }>())!
      .k;
    expect(await env.FILES.head(key)).not.toBeNull();
    for (const field of ["sol_per_pop", "num_genes", "gene_type"]) {
      const body = { sol_per_pop: 12, num_genes: 6, gene_type: "int" }[field];
      const err = await expectError(
        await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { [field]: body } }),
        400,
        "validation_failed",
      );
      expect(failedFields(err)).toEqual([field]);
    }
    expect((await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: 5 } })).status).toBe(202);
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    const run = await env.DB.prepare("SELECT start_population_key AS k FROM runs WHERE id = ?").bind(runId).first<{ k: string }>();
    expect(run!.k).toBe(key);
    expect((await call(`/api/v1/submissions/${id}`, { key: a.key, method: "DELETE" })).status).toBe(204);
    expect(await env.FILES.head(key)).toBeNull();
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ["fewer rows than sol_per_pop", { initial_population: POPULATION.slice(1) }, "has 9 solutions"],
    ["a row of the wrong length", { initial_population: POPULATION.map((r, i) => (i === 3 ? r.slice(1) : r)) }, "row 3 has 4 values"],
    ["a value an integer type cannot hold", { gene_type: "uint8", initial_population: POPULATION }, "does not fit gene type uint8"],
    [
      "a value float16 would make infinite",
      { gene_type: "float16", initial_population: POPULATION.map((r) => [...r.slice(0, 4), 1e6]) },
      "float16",
    ],
    ["not a list of rows", { initial_population: [1, 2, 3] }, ""],
  ];

  it.each(refused)("refuses %s, naming initial_population", async (_label, overrides, words) => {
    const err = await expectError(await post(job(overrides)), 400, "validation_failed");
    expect(failedFields(err).map((f) => f.split(".")[0])).toContain("initial_population");
    expect(JSON.stringify(err.details)).toContain(words);
  });

  it("takes a body past 256 KiB only for a start population (to 8 MiB)", async () => {
    const genes = 1000;
    const big = Array.from({ length: 40 }, (_, i) => Array.from({ length: genes }, (_, g) => i + g / 1000));
    const res = await post(job({ sol_per_pop: 40, num_genes: genes, initial_population: big }));
    expect(JSON.stringify(job({ initial_population: big })).length).toBeGreaterThan(256 * 1024);
    expect(res.status, await res.clone().text()).toBe(202);
    const padded = job({
      description: "x".repeat(1900),
      name: "n",
      on_stop: `# ${"y".repeat(60 * 1024)}\ndef s(ga, f):\n    pass\n`,
      on_stop_entry: "s",
    });
    const padding = { ...padded, on_start: padded.on_stop, on_start_entry: "s", on_fitness: padded.on_stop, on_fitness_entry: "s" };
    const many = { ...padding, on_parents: padded.on_stop, on_parents_entry: "s", on_crossover: padded.on_stop, on_crossover_entry: "s" };
    expect(JSON.stringify(many).length).toBeGreaterThan(256 * 1024);
    await expectError(await post(many), 413, "payload_too_large");
  });
});

describe("a multi-objective run's progress", () => {
  it("keeps both series' points in its trail, and the live chart draws them per objective", async () => {
    const { runId } = await runningRun({ parent_selection_type: "nsga2" });
    for (const g of [1, 2]) {
      const res = await reportProgress(runId, {
        generations_completed: g,
        best_solution_fitness: null,
        best_solution_objectives: [g, -g],
        best_objectives: [g + 1, -g + 1],
      });
      expect(res.status).toBe(204);
    }
    const row = await env.DB.prepare("SELECT progress_trail AS t FROM runs WHERE id = ?").bind(runId).first<{ t: string }>();
    expect(JSON.parse(row!.t)).toEqual([
      [1, null, [2, 0], [1, -1]],
      [2, null, [3, -1], [2, -2]],
    ]);
    const panels = liveView(
      { status: "running", parameters: { num_generations: 20 } } as never,
      {
        id: runId,
        kind: "initial",
        generationsCompleted: 2,
        parameters: { num_generations: 20 },
        bestSolutionFitness: null,
        progressTrail: JSON.parse(row!.t),
        startedAt: null,
        finishedAt: null,
        errorCode: null,
      } as never,
    );
    expect(panels.best_objectives).toEqual([2, -2]); // the best solution's values, as PyGAD's history
    expect(panels.panels.map((p) => p.series.map((x) => [x.label.includes("population maximum"), x.points]))).toEqual([
      [
        [
          false,
          [
            [1, 1],
            [2, 2],
          ],
        ],
        [
          true,
          [
            [1, 2],
            [2, 3],
          ],
        ],
      ],
      [
        [
          false,
          [
            [1, -1],
            [2, -2],
          ],
        ],
        [
          true,
          [
            [1, 0],
            [2, -1],
          ],
        ],
      ],
    ]);
  });
});
