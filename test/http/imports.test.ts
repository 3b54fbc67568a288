// POST /api/v1/imports: a pygad.GA run made elsewhere, as the Vilvik SDK sends it (docs/api.md#imports).
import { beforeAll, describe, expect, it } from "vitest";
import { claimRun } from "../../src/domain/runs";
import {
  admin,
  BASE,
  call,
  env,
  expectError,
  finishSubmission,
  getSubmission,
  importBody,
  json,
  newAccount,
  runToken,
  type TestAccount,
  TWO_OBJECTIVE_IMPORT,
  twoObjectiveImport,
} from "../helpers/api";

const { population, objectives, history, front } = TWO_OBJECTIVE_IMPORT;

let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  [a, b] = [await newAccount(), await newAccount()];
});

const post = (key: string, body: unknown, headers: Record<string, string> = {}) => call("/api/v1/imports", { key, body, headers });
const rows = async (accountId: string) => {
  const n = (table: string) =>
    env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`).bind(accountId).first<{ n: number }>();
  return { submissions: (await n("submissions"))!.n, runs: (await n("runs"))!.n, results: (await n("results"))!.n };
};
const stored = async () => (await env.FILES.list({ prefix: "results/" })).objects.length;

describe("imports", () => {
  it("creates a succeeded submission (source import) with one uncharged run and its result, and starts nothing", async () => {
    const before = (await json(await call("/api/v1/account", { key: a.key }))).balances.total;
    const queued = (await env.DB.prepare("SELECT queued FROM platform_queue WHERE id = 1").first<{ queued: number }>())!.queued;
    const res = await post(a.key, importBody({ name: "pushed", description: "from my laptop" }));
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toMatchObject({ status: "succeeded", source: "import" });
    expect(created.status_url).toBe(`${BASE}/api/v1/submissions/${created.id}`);
    expect(created.result_url).toBe(`${BASE}/api/v1/results/${created.result_id}`);

    const row = await getSubmission(a.key, created.id);
    expect(row).toMatchObject({
      name: "pushed",
      description: "from my laptop",
      source: "import",
      status: "succeeded",
      run_count: 1,
      credits_charged: 0,
      generations_completed: 10,
      best_solution_fitness: -0.1025,
    });
    expect(row.latest_run).toMatchObject({ kind: "import", status: "succeeded" });
    // The stored parameters are those a submission would store: what the run kept locally dropped, code merged in,
    // K_tournament only for tournament selection; PyGAD's other parameters (its operators' etas) kept, as a creation would.
    expect(row.parameters).toMatchObject({ num_genes: 4, sol_per_pop: 8, fitness_func_entry: "fitness", mutation_num_genes: 1 });
    expect(row.parameters).toMatchObject({ sbx_crossover_eta: 30, polynomial_mutation_eta: 20 });
    for (const dropped of ["save_solutions", "K_tournament"]) expect(row.parameters).not.toHaveProperty(dropped);

    const result = await json(await call(`/api/v1/results/${created.result_id}`, { key: a.key }));
    expect(result).toMatchObject({
      submission_id: created.id,
      name: "pushed",
      stopped_reason: "imported",
      best_solution_fitness: -0.1025,
      best_solution_generation: 9,
      generations_completed: 10,
    });
    expect(result.best_solution).toEqual(importBody().result.best_solution);
    expect(result.files.map((f: { name: string }) => f.name).sort()).toEqual([
      "best_solution.csv",
      "fitness.svg",
      "fitness_history.csv",
      "population.json",
      "result.json",
    ]);
    const population = await call(`/api/v1/results/${created.result_id}/files/population.json`, { key: a.key });
    expect(await population.json()).toEqual(importBody().result.population);
    const summary = await json(await call(`/api/v1/results/${created.result_id}/files/result.json`, { key: a.key }));
    expect(summary.origin).toEqual({ client: "sdk", sdk_version: "0.5.7", python_version: "3.11.2" });

    const listed = await json(await call("/api/v1/submissions?source=import", { key: a.key }));
    expect(listed.results.map((s: { id: string }) => s.id)).toContain(created.id);
    expect((await json(await call("/api/v1/account", { key: a.key }))).balances.total).toBe(before);
    expect((await env.DB.prepare("SELECT queued FROM platform_queue WHERE id = 1").first<{ queued: number }>())!.queued).toBe(queued);
    expect(
      (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE submission_id = ?").bind(created.id).first<{ n: number }>())!.n,
    ).toBe(0);
  });

  it("the imported result can be continued: the new run starts from the imported population", async () => {
    const created = await json(await post(a.key, importBody()));
    const res = await call(`/api/v1/results/${created.result_id}/continue`, { key: a.key, body: { num_generations: 5 } });
    expect(res.status).toBe(202);
    const row = await getSubmission(a.key, created.id);
    expect(row.latest_run).toMatchObject({ kind: "continue", status: "queued", parent_result_id: created.result_id });
    expect(row.run_count).toBe(2);
    // What the GA worker fetches to start the continued run, once it has taken the run.
    const runId = row.latest_run.id;
    expect(await claimRun(env, runId)).not.toBeNull();
    const start = await call(`/internal/v1/runs/${runId}/initial-population`, {
      headers: { Authorization: `Bearer ${await runToken(runId)}` },
    });
    expect(start.status).toBe(200);
    expect(await start.json()).toEqual(importBody().result.population);
    // An import sent without its population is inspectable but has nothing to continue from.
    const bare = importBody();
    delete (bare.result as Record<string, unknown>).population;
    const withoutPopulation = await json(await post(a.key, bare));
    await expectError(
      await call(`/api/v1/results/${withoutPopulation.result_id}/continue`, { key: a.key, method: "POST" }),
      409,
      "invalid_state",
    );
  });

  it("another account's imported submission and result are 404 (get, continue)", async () => {
    const created = await json(await post(a.key, importBody()));
    await expectError(await call(`/api/v1/submissions/${created.id}`, { key: b.key }), 404, "not_found");
    await expectError(await call(`/api/v1/results/${created.result_id}`, { key: b.key }), 404, "not_found");
    await expectError(await call(`/api/v1/results/${created.result_id}/continue`, { key: b.key, method: "POST" }), 404, "not_found");
  });

  it("refuses a bad body naming the field as the body holds it, and writes nothing", async () => {
    const c = await newAccount();
    const files = await stored();
    const cases: [unknown, number, string, string][] = [
      [importBody({ ga_parameters: { num_genes: "four" } }), 400, "validation_failed", "ga_parameters.num_genes"],
      [importBody({ ga_parameters: { custom_gene_type: "[int, float]" } }), 400, "validation_failed", "ga_parameters.custom_gene_type"],
      [importBody({ ga_parameters: { gene_type: "numpy.complex64" } }), 400, "validation_failed", "ga_parameters.gene_type"],
      [importBody({ ga_parameters: { gene_type: "custom" } }), 400, "validation_failed", "ga_parameters.custom_gene_type"],
      [
        importBody({ ga_parameters: { gene_type: "custom", custom_gene_type: "[float, numpy.complex64]" } }),
        400,
        "validation_failed",
        "ga_parameters.custom_gene_type",
      ],
      [
        importBody({ ga_parameters: { gene_type: "custom", custom_gene_type: "[float, 2" } }),
        400,
        "validation_failed",
        "ga_parameters.custom_gene_type",
      ],
      [
        importBody({ ga_parameters: { gene_type: "custom", custom_gene_type: "[int, float]" } }),
        400,
        "validation_failed",
        "ga_parameters.gene_type", // two types for four genes: the creation rules name gene_type
      ],
      [importBody({ ga_parameters: { num_parents_mating: 9 } }), 400, "validation_failed", "ga_parameters.num_parents_mating"],
      [importBody({ code: { fitness_func: undefined } }), 400, "validation_failed", "code.fitness_func"],
      [importBody({ code: { on_stop: "def done(ga, f):\n    pass\n" } }), 422, "entry_symbol_required", "code.on_stop_entry"],
      [importBody({ code: { fitness_func_entry: "missing" } }), 422, "entry_symbol_not_found", "code.fitness_func_entry"],
      [importBody({ code: { fitness_func: "x".repeat(64 * 1024 + 1) } }), 413, "payload_too_large", "code.fitness_func"],
      [importBody({ result: { best_solution: [1, 2] } }), 400, "validation_failed", "result.best_solution"],
      [importBody({ result: { population: [[1, 2, 3, 4]] } }), 400, "validation_failed", "result.population"],
      [importBody({ result: { generations_completed: 11 } }), 400, "validation_failed", "result.generations_completed"],
      // Several objectives: every fitness a list of as many values as result.best_solution_fitness.
      [importBody({ result: { best_solution_fitness: [1, 2] } }), 400, "validation_failed", "result.best_solutions_fitness.0"],
      [importBody({ result: { best_solution_fitness: [1, 2] } }), 400, "validation_failed", "result.last_generation_fitness.0"],
      [
        twoObjectiveImport({ best_solutions_fitness: history.map((h, g) => (g === 3 ? [...h, 0] : h)) }),
        400,
        "validation_failed",
        "result.best_solutions_fitness.3",
      ],
      [
        twoObjectiveImport({ best_solutions_fitness: history.map((h, g) => (g === 4 ? null : h)) }),
        400,
        "validation_failed",
        "result.best_solutions_fitness.4",
      ],
      [
        twoObjectiveImport({ last_generation_fitness: objectives.map((o, i) => (i === 2 ? o[0] : o)) }),
        400,
        "validation_failed",
        "result.last_generation_fitness.2",
      ],
      [twoObjectiveImport({ last_generation_fitness: objectives.slice(1) }), 400, "validation_failed", "result.last_generation_fitness"],
      [twoObjectiveImport({ best_solution_fitness: [] }), 400, "validation_failed", "result.best_solution_fitness"],
      [
        twoObjectiveImport({ best_solution_fitness: Array.from({ length: 1001 }, () => 1) }),
        400,
        "validation_failed",
        "result.best_solution_fitness",
      ],
      [twoObjectiveImport({ best_solution_fitness: [-1, "-5"] }), 400, "validation_failed", "result.best_solution_fitness"],
      [twoObjectiveImport({ best_solution_fitness: -1 }), 400, "validation_failed", "result.best_solutions_fitness.0"],
      [importBody({ origin: { note: "x".repeat(201) } }), 400, "validation_failed", "origin.note"],
      [importBody({ extra: 1 }), 400, "validation_failed", "extra"],
    ];
    for (const [body, status, code, field] of cases) {
      const err = await expectError(await post(c.key, body), status, code);
      const named = err.details.field ?? err.details.fields?.map((f: { field: string }) => f.field);
      expect([named].flat(), JSON.stringify(err)).toContain(field);
    }
    await expectError(
      await call("/api/v1/imports", { key: c.key, rawBody: "{", headers: { "Content-Type": "application/json" } }),
      400,
      "malformed_json",
    );
    // A non-finite objective as Python's json.dumps (the SDK's) writes it: not JSON, and the answer says
    // where it is (was malformed_json; now non_finite_number with the path).
    for (const token of ["NaN", "Infinity", "-Infinity"]) {
      const raw = JSON.stringify(twoObjectiveImport()).replace('"best_solution_fitness":[-1,-5]', `"best_solution_fitness":[-1,${token}]`);
      expect(raw).toContain(token);
      const err = await expectError(
        await call("/api/v1/imports", { key: c.key, rawBody: raw, headers: { "Content-Type": "application/json" } }),
        400,
        "non_finite_number",
      );
      expect(err.details).toEqual({ path: "$.result.best_solution_fitness[1]", value: token });
    }
    await expectError(
      await call("/api/v1/imports", { key: c.key, rawBody: "{}", headers: { "Content-Type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    const huge = importBody({ result: { last_generation_fitness: Array.from({ length: 1_100_000 }, () => -0.123456) } });
    const tooLarge = await expectError(await post(c.key, huge), 413, "payload_too_large");
    expect(tooLarge.message).toContain("result.population");
    expect(tooLarge.details.limit_bytes).toBe(8 * 1024 * 1024);
    expect(await rows(c.id)).toEqual({ submissions: 0, runs: 0, results: 0 });
    expect(await stored()).toBe(files);
  });

  it("imports a run of several objectives as a multi-objective result: its objectives, per-objective history and the front of its final population", async () => {
    const res = await post(a.key, twoObjectiveImport({ best_solution_generation: 7 }), {});
    expect(res.status, await res.clone().text()).toBe(201);
    const created = await json(res);
    const row = await getSubmission(a.key, created.id);
    expect(row).toMatchObject({ status: "succeeded", source: "import", best_solution_fitness: null, generations_completed: 10 });
    expect(row.parameters.parent_selection_type).toBe("nsga2");
    expect(row.parameters).not.toHaveProperty("K_tournament");
    // tournament_nsga2 keeps its K_tournament, as tournament does.
    const tournament = importBody({
      ga_parameters: { parent_selection_type: "tournament_nsga2", K_tournament: 5 },
      result: twoObjectiveImport().result,
    });
    expect((await getSubmission(a.key, (await json(await post(a.key, tournament))).id)).parameters).toMatchObject({
      parent_selection_type: "tournament_nsga2",
      K_tournament: 5,
    });

    const result = await json(await call(`/api/v1/results/${created.result_id}`, { key: a.key }));
    // In a run's shapes: best_solution_fitness the list, PyGAD's history; no population maxima (not sent).
    expect(result).toMatchObject({
      num_objectives: 2,
      best_solution_fitness: [-1, -5],
      best_solution_objectives: [-1, -5],
      objective_maxima: null,
      pareto_front_size: 4,
      best_solution: population[0],
      best_solution_generation: 7,
      best_solutions_fitness: history,
      stopped_reason: "imported",
      engine: null,
      constraint_violations: null,
    });
    expect(result.files.map((f: { name: string }) => f.name).sort()).toEqual([
      "best_solution.csv",
      "fitness.svg",
      "fitness_history.csv",
      "pareto_front.csv",
      "pareto_front.json",
      "pareto_front.svg",
      "population.json",
      "result.json",
    ]);
    const file = async (name: string) => call(`/api/v1/results/${created.result_id}/files/${name}`, { key: a.key });
    expect(await (await file("pareto_front.json")).json()).toEqual({
      num_objectives: 2,
      objectives: front.map((i) => objectives[i]),
      solutions: front.map((i) => population[i]),
    });
    expect((await file("pareto_front.json")).headers.get("Content-Type")).toMatch(/^application\/json/);
    const csv = (await (await file("pareto_front.csv")).text()).trim().split("\n");
    expect(csv[0]).toBe("index,objective_0,objective_1,gene_0,gene_1,gene_2,gene_3");
    expect(csv.slice(1)).toEqual(front.map((i, n) => [n, ...objectives[i]!, ...population[i]!].join(",")));
    expect((await (await file("fitness_history.csv")).text()).split("\n").slice(0, 2)).toEqual([
      "generation,objective_0,objective_1",
      "0,-3,-7",
    ]);
    expect(await (await file("pareto_front.svg")).text()).toMatch(/^<svg/);
    const plot = await (await file("fitness.svg")).text();
    expect(plot.match(/objective \d/g)?.length).toBeGreaterThanOrEqual(2);
    expect(plot).toContain("Objective values of the best solution per generation");
    const summary = await (await file("result.json")).json<Record<string, unknown>>();
    expect(summary).toMatchObject({
      num_objectives: 2,
      best_solution_fitness: [-1, -5],
      best_solution_objectives: [-1, -5],
      pareto_front_size: 4,
      last_generation_fitness: objectives,
    });
    const listed = await json(await call(`/api/v1/results/?submission_id=${created.id}`, { key: a.key }));
    expect(listed.results).toEqual([
      expect.objectContaining({ id: created.result_id, num_objectives: 2, best_solution_fitness: [-1, -5] }),
    ]);

    // It continues from the imported population, like a run's result.
    const continued = await call(`/api/v1/results/${created.result_id}/continue`, { key: a.key, body: { num_generations: 5 } });
    expect(continued.status).toBe(202);
    const runId = (await getSubmission(a.key, created.id)).latest_run.id;
    expect(await claimRun(env, runId)).not.toBeNull();
    const start = await call(`/internal/v1/runs/${runId}/initial-population`, {
      headers: { Authorization: `Bearer ${await runToken(runId)}` },
    });
    expect(await start.json()).toEqual(population);
  });

  it("a multi-objective import without its population or its objective vectors has no front; a fitness of one value in a list is one objective", async () => {
    for (const missing of ["population", "last_generation_fitness"]) {
      const body = twoObjectiveImport();
      delete (body.result as Record<string, unknown>)[missing];
      const created = await json(await post(a.key, body));
      const result = await json(await call(`/api/v1/results/${created.result_id}`, { key: a.key }));
      expect(result, missing).toMatchObject({
        num_objectives: 2,
        best_solution_objectives: [-1, -5],
        pareto_front_size: null,
        best_solutions_fitness: history,
      });
      expect(result.files.map((f: { name: string }) => f.name).filter((n: string) => n.startsWith("pareto_front"))).toEqual([]);
    }
    // PyGAD's form for a fitness returned as a list of one: as a run, it is one objective.
    const base = importBody().result;
    const one = importBody({
      result: {
        best_solution_fitness: [base.best_solution_fitness],
        best_solutions_fitness: base.best_solutions_fitness.map((f) => [f]),
        last_generation_fitness: base.last_generation_fitness.map((f) => [f]),
      },
    });
    const created = await json(await post(a.key, one));
    const result = await json(await call(`/api/v1/results/${created.result_id}`, { key: a.key }));
    expect(result).toMatchObject({
      num_objectives: 1,
      best_solution_fitness: -0.1025,
      best_solution_objectives: null,
      pareto_front_size: null,
      best_solutions_fitness: base.best_solutions_fitness,
    });
  });

  it("takes every gene_type Allele runs as the SDK sends it, and a continue runs the same types", async () => {
    const forms: [Record<string, unknown>, unknown][] = [
      [{ gene_type: "custom", custom_gene_type: "[float, 2]" }, ["float", 2]],
      [{ gene_type: "custom", custom_gene_type: "[int, float, [float, 1], numpy.float32]" }, ["int", "float", ["float", 1], "float32"]],
      [
        { gene_type: "custom", custom_gene_type: "[[float, 3], numpy.int16, numpy.float64, float]" },
        [["float", 3], "int16", "float64", "float"],
      ],
      [{ gene_type: "numpy.float32" }, "float32"],
      [{ gene_type: "numpy.uint8" }, "uint8"],
      [{ gene_type: "int" }, "int"],
    ];
    for (const [ga, expected] of forms) {
      const res = await post(a.key, importBody({ ga_parameters: ga }));
      expect(res.status, `${JSON.stringify(ga)}: ${await res.clone().text()}`).toBe(201);
      const created = await json(res);
      const row = await getSubmission(a.key, created.id);
      expect(row.parameters.gene_type, JSON.stringify(ga)).toEqual(expected);
      expect(row.parameters).not.toHaveProperty("custom_gene_type");
      if (!Array.isArray(expected)) continue;
      // A continue runs the same types (one run in flight at a time: each is ended before the next).
      const continued = await call(`/api/v1/results/${created.result_id}/continue`, { key: a.key, body: { num_generations: 2 } });
      expect(continued.status, await continued.clone().text()).toBe(202);
      const runId = (await getSubmission(a.key, created.id)).latest_run.id;
      const run = await env.DB.prepare("SELECT parameters FROM runs WHERE id = ?").bind(runId).first<{ parameters: string }>();
      expect(JSON.parse(run!.parameters).gene_type).toEqual(expected);
      await finishSubmission(a.key, created.id);
    }
  });

  it("keeps PyGAD 3.9's other parameters: NSGA-III and its divisions, SBX and polynomial with their etas, categorical genes", async () => {
    const ga = {
      parent_selection_type: "tournament_nsga3",
      nsga3_num_divisions: 3,
      K_tournament: 4,
      crossover_type: "sbx",
      sbx_crossover_eta: 12,
      mutation_type: "polynomial",
      polynomial_mutation_eta: 7,
      gene_space: [[0, 1, 2], null, null, null],
      gene_categorical: [true, false, false, false],
    };
    const created = await json(await post(a.key, importBody({ ga_parameters: ga })));
    expect((await getSubmission(a.key, created.id)).parameters).toMatchObject(ga);
  });

  it("takes a custom operator as code, with its entry, under code (or ga_parameters), and names it there when refused", async () => {
    const mix = "import numpy\n\ndef mix(parents, offspring_size, ga):\n    return numpy.zeros(offspring_size)\n";
    const created = await json(await post(a.key, importBody({ code: { crossover_type: mix, crossover_type_entry: "mix" } })));
    expect((await getSubmission(a.key, created.id)).parameters).toMatchObject({ crossover_type: mix, crossover_type_entry: "mix" });
    const beside = await post(
      a.key,
      importBody({ ga_parameters: { mutation_type: "def m(o, ga):\n    return o\n", mutation_type_entry: "m" } }),
    );
    expect(beside.status, await beside.clone().text()).toBe(201);
    const err = await expectError(await post(a.key, importBody({ code: { crossover_type: mix } })), 422, "entry_symbol_required");
    expect(err.details.field).toBe("code.crossover_type_entry");
  });

  it("takes a population as large as 8 MiB allows (Premium-sized: 1,000 × 300)", async () => {
    const population = Array.from({ length: 1000 }, (_, i) => Array.from({ length: 300 }, (_, j) => ((i * 300 + j) % 997) / 10));
    const body = importBody({
      ga_parameters: { sol_per_pop: 1000, num_genes: 300, mutation_num_genes: 3 },
      result: { population, best_solution: population[0], last_generation_fitness: undefined },
    });
    const res = await post(a.key, body);
    expect(res.status, await res.clone().text()).toBe(201);
    const { result_id } = await json(res);
    const file = (await json(await call(`/api/v1/results/${result_id}`, { key: a.key }))).files.find(
      (f: { name: string }) => f.name === "population.json",
    );
    expect(file.size_bytes).toBe(JSON.stringify(population).length);
  });

  it("needs submissions:write", async () => {
    for (const scopes of [["results:read", "results:write"], ["submissions:read"]]) {
      const key = (await json(await admin(`/accounts/${a.id}/keys`, { body: { name: "narrow", scopes } }))).key;
      const err = await expectError(await post(key, importBody()), 403, "scope_required");
      expect(err.details.required_scope).toBe("submissions:write");
    }
  });

  it("is idempotent: a replay answers the first import, a different body under the key is 422, and one submission exists", async () => {
    const c = await newAccount();
    const headers = { "Idempotency-Key": `import-${crypto.randomUUID()}` };
    const first = await post(c.key, importBody({ name: "once" }), headers);
    expect(first.status).toBe(201);
    const again = await post(c.key, importBody({ name: "once" }), headers);
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json(again)).result_id).toBe((await json(first)).result_id);
    await expectError(await post(c.key, importBody({ name: "twice" }), headers), 422, "idempotency_key_mismatch");
    expect(await rows(c.id)).toEqual({ submissions: 1, runs: 1, results: 1 });
  });
});
