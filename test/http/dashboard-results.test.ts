// The dashboard's pages of what PyGAD fidelity added, inside workerd (docs/dashboard.md#results):
// multi-objective results (objectives, front, per-objective history, a continue chain of them), warnings
// with counts and the constraint notice, the engine path, an infinite best fitness, a failed run's
// progress, live progress of several objectives, the public page's share of it, and a submission with
// more runs than a D1 statement binds. Runs end through the internal report endpoint, as the GA worker ends them.
import { describe, expect, it } from "vitest";
import {
  call,
  completeRun,
  env,
  getSubmission,
  json,
  newAccount,
  newResult,
  reportProgress,
  runningRun,
  stageFile,
  TWO_OBJECTIVE_IMPORT,
  TWO_OBJECTIVES,
  twoObjectiveImport,
} from "../helpers/api";
import { WebClient } from "../helpers/web";

const TWO =
  "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";

async function signedIn(key: string) {
  const web = new WebClient();
  expect((await web.signInWithKey(key)).status).toBe(303);
  return web;
}

/** The JSON a page embeds for its client script (`<script type="application/json" id=…>`). */
function embedded(html: string, id: string): any {
  const m = new RegExp(`<script type="application/json" id="${id}">(.*?)</script>`, "s").exec(html);
  if (!m) throw new Error(`no embedded ${id}`);
  return JSON.parse(m[1]!);
}

/** The page's text without tags (entities of the few characters the tests look for decoded). */
const textOf = (html: string) =>
  html
    .replace(/<script[^>]*>.*?<\/script>/gs, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

/** A two-objective report with its final population inline (so the result can be continued). */
const REPORT = {
  ...TWO_OBJECTIVES,
  population: [
    [0.1, -0.2, 0.3, 0, 0.05],
    [1, 2, 3, 4, 5],
  ],
};

/** A finished two-objective run of `key`'s: its front uploaded before the report, as the GA worker does. */
async function twoObjectiveResult(key: string, overrides: Record<string, unknown> = {}) {
  const { submissionId, runId } = await runningRun(key, { fitness_func: TWO, parent_selection_type: "nsga2", name: "zdt", ...overrides });
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
  expect((await completeRun(runId, { result: REPORT, engine: "pygad:multi-objective" })).status).toBe(204);
  const [item] = (await json(await call(`/api/v1/results/?submission_id=${submissionId}`, { key }))).results;
  return { submissionId, resultId: item.id as string };
}

describe("a multi-objective result", () => {
  it("of an import shows as a run's: its objectives, the front computed from its population, a panel per objective", async () => {
    const account = await newAccount();
    const created = await json(
      await call("/api/v1/imports", { key: account.key, body: twoObjectiveImport({ best_solution_generation: 9 }) }),
    );
    const web = await signedIn(account.key);
    const html = await (await web.request(`/results/${created.result_id}`)).text();
    const text = textOf(html);
    expect(text).not.toContain("Peak memory"); // an import measured nothing here: no key numbers
    expect(text).toContain("Objectives 2, all maximised");
    expect(text).toContain("Best solution's objectives -1, -5");
    expect(text).toContain("Pareto front 4 solutions");
    const { objectives, front } = TWO_OBJECTIVE_IMPORT;
    expect(embedded(html, "front-chart")).toEqual({ objectives: front.map((i) => objectives[i]), best: [-1, -5] });
    const chart = embedded(html, "result-chart");
    expect(chart.panels.map((p: any) => p.title)).toEqual(["objective 0", "objective 1"]);
    expect(chart.panels[1].series[0].points.slice(0, 2)).toEqual([
      [0, -7],
      [1, -6.6],
    ]);
    // Its curves are PyGAD's history (the best solution's values), and the page says so.
    expect(text).toContain("Objective values of the best solution per generation (PyGAD's history, imported)");
    expect(text).toContain("An imported run's curves are PyGAD's own history");
    expect(text).not.toContain("over the population; the values may come from different solutions");
    // The list can be filtered to imports, as the API's source filter can.
    const list = await (await web.request("/submissions?source=import")).text();
    expect(list).toContain('<option value="import" selected');
    expect(list).toContain(`/submissions/${created.id}`);
  });

  it("shows its objectives, front size, the front chart's data and a panel per objective; the lists say '2 objectives'", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await twoObjectiveResult(account.key);
    const web = await signedIn(account.key);
    const html = await (await web.request(`/results/${resultId}`)).text();
    const text = textOf(html);
    // What the run cost, first on the page: the report's metrics and the credits they cost.
    expect(text).toContain("Runtime 700 ms CPU 0.50 s Peak memory 60 MB Credits 0.000026");
    expect(text.indexOf("Runtime 700 ms")).toBeLessThan(text.indexOf("Objectives 2, all maximised"));
    expect(text).toContain("Objectives 2, all maximised");
    expect(text).toContain("Best solution's objectives 0.9, -0.1");
    expect(text).toContain("Pareto front 3 solutions");
    // A front-aware summary in place of "found in generation": spread and hypervolume.
    expect(text).toContain("Front spread objective 0: 0.75; objective 1: 0.45");
    expect(text).toContain("Hypervolume 0.350875 (reference point 0.125, -0.545)");
    expect(text).not.toContain("Found in generation");
    expect(text).toContain("Engine stock PyGAD (multi-objective) pygad:multi-objective");
    expect(text).not.toContain("Best fitness —");
    // PyGAD's history, and each objective's maximum over the population beside it (dashed).
    expect(text).toContain(
      "Objective values of the best solution per generation (PyGAD's history); dashed, each objective's maximum over the population (the values may come from different solutions)",
    );
    expect(text).not.toContain("An imported run's curves");
    expect(embedded(html, "front-chart")).toEqual({ objectives: TWO_OBJECTIVES.pareto_front.objectives, best: [0.9, -0.1] });
    const chart = embedded(html, "result-chart");
    expect(chart.panels.map((p: any) => [p.title, p.yLabel])).toEqual([
      ["objective 0", "best objective 0"],
      ["objective 1", "best objective 1"],
    ]);
    expect(chart.panels[1].series[0].points).toEqual([
      [0, -2],
      [1, -1],
      [2, -0.1],
      [3, -0.1],
    ]);
    expect(chart.panels[1].series[1]).toMatchObject({
      dash: true,
      points: [
        [0, -1.5],
        [1, -0.9],
        [2, -0.05],
        [3, -0.05],
      ],
    });
    expect(chart.panels[1].series[1].label).toContain("population maximum");
    // The table of the front and of the history says the same for screen readers.
    expect(text).toContain("The front as a table");
    expect(text).toMatch(/objective 1 this result \(\w+\) 1 -1/);
    const list = textOf(await (await web.request("/results")).text());
    expect(list).toContain("zdt 2 objectives");
    const submissions = textOf(await (await web.request("/submissions")).text());
    expect(submissions).toContain("zdt succeeded 4 of 20 2 objectives none api");
    const detail = textOf(await (await web.request(`/submissions/${submissionId}`)).text());
    expect(detail).toContain("best objectives 0.9, -0.1");
  });

  it("a continue chain of multi-objective results: each objective's panel overlays the chain, the continued curve after its parent's", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await twoObjectiveResult(account.key);
    const web = await signedIn(account.key);
    expect((await web.post(`/results/${resultId}/continue`, { num_generations: "2", payment: "credits" })).status).toBe(303);
    const runId = (await getSubmission(account.key, submissionId)).latest_run.id;
    await env.DB.prepare("UPDATE runs SET status = 'running' WHERE id = ?").bind(runId).run();
    const continued = {
      ...REPORT,
      best_solutions_fitness: [
        [0.95, -0.1],
        [0.97, -0.08],
        [0.99, -0.05],
      ],
      best_solution_fitness: [0.99, -0.05],
      best_solution_objectives: [0.99, -0.05],
      objective_maxima: [
        [0.97, -0.05],
        [0.98, -0.04],
        [0.99, -0.02],
      ],
    };
    expect((await completeRun(runId, { result: continued })).status).toBe(204);
    const second = (await json(await call(`/api/v1/results/?submission_id=${submissionId}&ordering=-created_at`, { key: account.key })))
      .results[0].id;
    const html = await (await web.request(`/results/${second}`)).text();
    const chart = embedded(html, "result-chart");
    expect(chart.panels).toHaveLength(2);
    // Per panel the two results' histories, then their population maxima (dashed).
    for (const panel of chart.panels) expect(panel.series.map((x: any) => Boolean(x.dash))).toEqual([false, false, true, true]);
    expect(chart.panels[0].series[1].points).toEqual([
      [4, 0.95],
      [5, 0.97],
      [6, 0.99],
    ]);
    expect(chart.panels[0].series[3].points).toEqual([
      [4, 0.97],
      [5, 0.98],
      [6, 0.99],
    ]);
    // The continued run uploaded no pareto_front.json: its front is the result's own SVG instead.
    expect(html).not.toContain('id="front-chart"');
    expect(html).toContain(`src="/results/${second}/files/pareto_front.svg"`);
    // The submission page draws both results the same way.
    const page = await (await web.request(`/submissions/${submissionId}`)).text();
    expect(embedded(page, "results-chart").panels.map((p: any) => p.series.length)).toEqual([4, 4]);
  });

  it("live progress of several objectives: the trail keeps each objective's best and the chart has a panel per objective", async () => {
    const account = await newAccount();
    const { submissionId, runId } = await runningRun(account.key, { fitness_func: TWO, parent_selection_type: "nsga2" });
    for (const [g, objectives] of [
      [1, [0.5, -2]],
      [1, [0.5, -2]], // a heartbeat without a new generation adds no point
      [3, [0.7, -1, 5, 6, 7, 8, 9, 10]], // past 6 objectives only the first 6 are kept
    ] as [number, number[]][]) {
      expect(
        (await reportProgress(runId, { generations_completed: g, best_solution_fitness: null, best_objectives: objectives })).status,
      ).toBe(204);
    }
    expect((await reportProgress(runId, { generations_completed: 4, best_solution_fitness: null, best_objectives: [1, "x"] })).status).toBe(
      400,
    );
    const web = await signedIn(account.key);
    const live = await json(await web.request(`/submissions/${submissionId}/live`));
    expect(live).toMatchObject({
      status: "running",
      generations_completed: 3,
      best_solution_fitness: null,
      best_objectives: [0.7, -1, 5, 6, 7, 8],
    });
    const stored = await env.DB.prepare("SELECT progress_trail FROM runs WHERE id = ?").bind(runId).first<{ progress_trail: string }>();
    expect(JSON.parse(stored!.progress_trail)).toEqual([
      [1, null, [0.5, -2]],
      [3, null, [0.7, -1, 5, 6, 7, 8]],
    ]);
    expect(live.points).toBe(2);
    expect(live.panels).toHaveLength(6);
    expect(live.panels[1].series[0].points).toEqual([
      [1, -2],
      [3, -1],
    ]);
    const html = await (await web.request(`/submissions/${submissionId}`)).text();
    expect(textOf(html)).toContain("best objectives 0.7, -1, 5, 6, 7, 8");
    expect(embedded(html, "progress-chart").panels).toHaveLength(6);
    // A single objective's reports stay as they were: one panel of the best fitness.
    const one = await runningRun(account.key);
    await reportProgress(one.runId, { generations_completed: 2, best_solution_fitness: -0.5 });
    const single = await json(await web.request(`/submissions/${one.submissionId}/live`));
    expect(single).toMatchObject({ points: 1, best_objectives: null });
    const singleStored = await env.DB.prepare("SELECT progress_trail FROM runs WHERE id = ?")
      .bind(one.runId)
      .first<{ progress_trail: string }>();
    expect(JSON.parse(singleStored!.progress_trail)).toEqual([[2, -0.5]]);
    expect(single.panels).toEqual([
      { title: "", yLabel: "best fitness", series: [{ label: `run ${one.runId} (live)`, points: [[2, -0.5]] }] },
    ]);
  });

  it("a report's points (every generation since the last) are appended in order; past 2,000 the older ones are thinned", async () => {
    const account = await newAccount();
    const { runId } = await runningRun(account.key);
    const points = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [from + i, (from + i) / 2]);
    const trail = async () =>
      JSON.parse(
        (await env.DB.prepare("SELECT progress_trail FROM runs WHERE id = ?").bind(runId).first<{ progress_trail: string }>())!
          .progress_trail,
      ) as number[][];
    for (const [from, to] of [
      [0, 3],
      [3, 10],
    ])
      expect(
        (await reportProgress(runId, { generations_completed: to - 1, best_solution_fitness: -(to - 1), points: points(from, to) })).status,
      ).toBe(204);
    expect(await trail()).toEqual(points(0, 10));
    // 1,995 more: 2,005 in all, past the bound: the newest 500 as they are, the 1,505 older thinned to 1,000 (the first kept).
    expect(
      (await reportProgress(runId, { generations_completed: 2004, best_solution_fitness: -2004, points: points(10, 2005) })).status,
    ).toBe(204);
    const thinned = await trail();
    expect(thinned).toHaveLength(1500);
    expect(thinned[0]).toEqual([0, 0]);
    expect(thinned.slice(-500)).toEqual(points(1505, 2005));
    const older = thinned.slice(0, 1000).map((p) => p[0]!);
    expect(older.every((g, i) => i === 0 || g > older[i - 1]!)).toBe(true);
    // Appended again in SQL while it fits.
    expect(
      (await reportProgress(runId, { generations_completed: 2006, best_solution_fitness: -2006, points: points(2005, 2007) })).status,
    ).toBe(204);
    expect((await trail()).slice(-3)).toEqual(points(2004, 2007));
  });
});

describe("warnings, constraint violations, the engine, infinite fitness and failed runs", () => {
  it("warnings with their counts on the result, the submission and its list row; the constraint notice; the engine in words", async () => {
    const account = await newAccount();
    const warnings = [
      { message: "UserWarning: mutation_percent_genes selects fewer than one gene.", count: 1 },
      { message: "UserWarning: no value of gene 0 satisfies its constraint after 100 attempts", count: 41 },
    ];
    const { submissionId, resultId } = await newResult(
      account.key,
      {
        name: "constrained",
        gene_constraint: "constraints = [lambda s, v: [x for x in v if x > 100], None, None, None, None]\n",
        gene_constraint_entry: "constraints",
      },
      { warnings, engine: "accelerated:sss+none+random=pygad", result: { constraint_violations: [{ gene: 0, value: 0.1 }] } },
    );
    const web = await signedIn(account.key);
    const html = await (await web.request(`/results/${resultId}`)).text();
    const text = textOf(html);
    expect(text).toContain("Warnings 2 different, 42 in all");
    expect(text).toContain("UserWarning: no value of gene 0 satisfies its constraint after 100 attempts 41");
    expect(text).toContain("The best solution violates its gene_constraint at gene 0 (value 0.1)");
    expect(text).toContain("Gene constraints violated at 1 gene");
    expect(text).toContain(
      "Engine accelerated — selection sss, crossover none, mutation random (stock PyGAD) accelerated:sss+ none+ random=pygad",
    ); // breakable after each +
    expect(html).toContain('<a href="#warnings">42</a>');
    const detail = textOf(await (await web.request(`/submissions/${submissionId}`)).text());
    expect(detail).toContain("Warnings of the latest run 2 different, 42 in all");
    const list = await (await web.request("/submissions")).text();
    expect(list).toContain(`<a href="/submissions/${submissionId}#warnings" class="warn-count">42</a>`);
    // A job with gene_constraint whose best solution satisfies it says so; without warnings, none.
    const clean = await newResult(
      account.key,
      { gene_constraint: "constraints = [None, None, None, None, None]\n", gene_constraint_entry: "constraints" },
      { result: { constraint_violations: [] } },
    );
    const cleanText = textOf(await (await web.request(`/results/${clean.resultId}`)).text());
    expect(cleanText).toContain("Gene constraints all satisfied");
    expect(cleanText).toContain("Warnings none");
    expect(cleanText).not.toContain("violates its gene_constraint");
  });

  it("an infinite best fitness is +∞ on the result (from result.json), 'infinite' in the lists; the curve's infinite generations are named", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await newResult(
      account.key,
      { name: "unbounded" },
      { result: { best_solution_fitness: "inf", best_solutions_fitness: [-3, -1, "inf", "inf"] } },
    );
    const web = await signedIn(account.key);
    const html = await (await web.request(`/results/${resultId}`)).text();
    const text = textOf(html);
    expect(text).toContain("Best fitness +∞");
    expect(text).toContain("The best fitness was +∞ at generations 2–3 (not drawn: the curve breaks there).");
    expect(text).toMatch(/this result \(\w+\) 2 \+∞/); // the table
    expect(embedded(html, "result-chart").panels[0].series[0].points).toEqual([
      [0, -3],
      [1, -1],
      [2, null],
      [3, null],
    ]);
    expect(textOf(await (await web.request("/results")).text())).toContain("unbounded infinite");
    expect(textOf(await (await web.request("/submissions")).text())).toContain("unbounded succeeded 4 of 20 infinite");
    expect(textOf(await (await web.request(`/submissions/${submissionId}`)).text())).toContain("best fitness infinite");
  });

  it("a failed run that kept its progress: generations and best fitness so far on the row and the page, its progress reports drawn", async () => {
    const account = await newAccount();
    const { submissionId, runId } = await runningRun(account.key, { name: "breaks", num_generations: 30 });
    await reportProgress(runId, { generations_completed: 2, best_solution_fitness: -1.5 });
    await reportProgress(runId, { generations_completed: 4, best_solution_fitness: -0.75 });
    await completeRun(runId, {
      status: "failed",
      error: { code: "code_error", message: "fitness_func line 5: ValueError: boom" },
      progress: { generations_completed: 5, best_solution_fitness: -0.5 },
      warnings: [{ message: "RuntimeWarning: overflow", count: 3 }],
    });
    const web = await signedIn(account.key);
    const html = await (await web.request(`/submissions/${submissionId}`)).text();
    const text = textOf(html);
    expect(text).toContain("failed · generation 5 of 30 · best fitness -0.5");
    expect(text).toContain(
      "The run failed: fitness_func line 5: ValueError: boom [code_error] — after 5 generations, best fitness -0.5 so far.",
    );
    expect(text).toContain(`How far run ${runId} got before it failed`);
    expect(embedded(html, "progress-chart").panels[0].series[0].points).toEqual([
      [2, -1.5],
      [4, -0.75],
    ]);
    expect(text).toContain("Warnings of the latest run 3 ");
    expect(text).toContain(`run ${runId} 2 -1.5`);
    expect(textOf(await (await web.request("/submissions")).text())).toContain("breaks failed 5 of 30 -0.5 (so far) 3");
  });
});

describe("the public page of a shared multi-objective result", () => {
  it("shows the objectives, front and curves, the constraint notice and the engine; not the warnings' texts, code or logs", async () => {
    const account = await newAccount();
    const { resultId } = await twoObjectiveResult(account.key);
    await env.DB.prepare("UPDATE results SET warnings = ?, constraint_violations = ? WHERE id = ?")
      .bind(
        JSON.stringify([{ message: "UserWarning: secret path /home/ada/data.csv", count: 2 }]),
        JSON.stringify([{ gene: 1, value: -0.2 }]),
        resultId,
      )
      .run();
    const web = await signedIn(account.key);
    await web.post(`/results/${resultId}/share`, { is_shared: "true" });
    const anon = new WebClient();
    const page = await anon.request(`/shared/${resultId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const text = textOf(html);
    expect(text).toContain("Best solution's objectives 0.9, -0.1");
    expect(text).toContain("Pareto front 3 solutions");
    expect(text).toContain("Engine stock PyGAD (multi-objective)");
    expect(text).toContain("The best solution violates its gene_constraint at gene 1");
    expect(text).toContain("Warnings 2");
    expect(text).toContain("their texts are not shared");
    expect(text).not.toContain("secret path");
    expect(text).not.toContain("numpy");
    expect(embedded(html, "shared-front")).toEqual({ objectives: TWO_OBJECTIVES.pareto_front.objectives, best: [0.9, -0.1] });
    expect(embedded(html, "shared-chart").panels).toHaveLength(2);
    for (const name of ["pareto_front.json", "pareto_front.svg", "fitness_history.csv"])
      expect((await anon.request(`/shared/${resultId}/files/${name}`)).status, name).toBe(200);
    for (const name of ["result.json", "population.json", "logs.txt"])
      expect((await anon.request(`/shared/${resultId}/files/${name}`)).status, name).toBe(404);
  });
});

describe("a submission with many runs", () => {
  it("its page and its results' pages load with more runs than a D1 statement binds parameters (results by submission, not by run ids)", async () => {
    const account = await newAccount();
    const { submissionId, resultId } = await newResult(account.key);
    const {
      results: [first],
    } = await json(await call(`/api/v1/submissions/?page_size=1`, { key: account.key }));
    expect(first.id).toBe(submissionId);
    // 120 more runs of the submission (reexecutes that failed at once), made straight in D1.
    const run = await env.DB.prepare("SELECT * FROM runs WHERE submission_id = ?").bind(submissionId).first<Record<string, unknown>>();
    const statements = Array.from({ length: 120 }, (_, i) =>
      env.DB.prepare(
        "INSERT INTO runs (id, submission_id, account_id, kind, status, parameters, queued_at, enqueued_at, created_at, updated_at) VALUES (?, ?, ?, 'reexecute', 'failed', ?, ?, ?, ?, ?)",
      ).bind(
        `run${String(i).padStart(9, "0")}`,
        submissionId,
        account.id,
        run!.parameters,
        run!.queued_at,
        run!.queued_at,
        `2100-01-01T00:00:${String(i % 60).padStart(2, "0")}.${String(i).padStart(3, "0")}Z`,
        run!.updated_at,
      ),
    );
    await env.DB.batch(statements);
    const web = await signedIn(account.key);
    expect((await web.request(`/submissions/${submissionId}`)).status).toBe(200);
    expect((await web.request(`/results/${resultId}`)).status).toBe(200);
  });
});
