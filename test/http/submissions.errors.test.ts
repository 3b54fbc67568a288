// Every error a create / cancel / reexecute can answer (docs/api.md#errors, docs/api.md#submissions-runs-results, docs/api.md#limits), and that a rejected
// create leaves nothing behind (no row, no queue message) while an accepted one sends exactly one message,
// after its answer; a failed send is made good by the cron.
import { describe, expect, it, vi } from "vitest";
import { QUEUED_TIMEOUT_MS, reconcileRuns } from "../../src/queues/scheduled";
import {
  accountPerTest,
  admin,
  call,
  completeRun,
  createSubmission,
  dbSubmissionCount,
  env,
  expectError,
  failedFields,
  getSubmission,
  job,
  json,
  newRoomyAccount,
  type TestAccount,
} from "../helpers/api";

const post = (key: string, body: unknown) => call("/api/v1/submissions/", { key, body });
const postRaw = (key: string, rawBody: string, contentType?: string) =>
  call("/api/v1/submissions/", { key, method: "POST", rawBody, headers: contentType ? { "Content-Type": contentType } : {} });

// A fresh account per test: each stays far inside the per-key and per-user rate windows.
const a = accountPerTest();

describe("400 malformed_json", () => {
  it.each([
    ["an unterminated object", "{"],
    ["single quotes", "{'name': 'x'}"],
    ["trailing garbage", '{"name": "x"} x'],
    ["an empty body", ""],
    ["a bare word", "hello"],
  ])("%s", async (_label, raw) => {
    const err = await expectError(await postRaw(a.key, raw, "application/json"), 400, "malformed_json");
    expect(err.details).toEqual({});
  });
});

describe("400 non_finite_number", () => {
  // As Python's json.dumps writes float('nan') and float('inf') (the Vilvik SDK sends that), and numbers
  // beyond a double; JSON has neither. The path names where the first one is.
  const withValue = (path: (body: Record<string, unknown>) => void, literal: string) => {
    const body = job();
    path(body);
    return JSON.stringify(body).replace('"__HERE__"', literal);
  };
  it.each([
    ["NaN in a gene space", (b: Record<string, unknown>) => (b.gene_space = [0, 1, 2, "__HERE__"]), "NaN", "$.gene_space[3]"],
    ["Infinity", (b: Record<string, unknown>) => (b.init_range_high = "__HERE__"), "Infinity", "$.init_range_high"],
    ["-Infinity", (b: Record<string, unknown>) => (b.random_mutation_min_val = "__HERE__"), "-Infinity", "$.random_mutation_min_val"],
    ["1e400", (b: Record<string, unknown>) => (b.mutation_probability = "__HERE__"), "1e400", "$.mutation_probability"],
    [
      "-1.5E+400 deep in a list",
      (b: Record<string, unknown>) => (b.gene_space = [[0, 1], { low: 0, high: "__HERE__" }]),
      "-1.5E+400",
      "$.gene_space[1].high",
    ],
    ["a key that is not a name", (b: Record<string, unknown>) => (b["odd key"] = ["__HERE__"]), "NaN", '$["odd key"][0]'],
  ])("%s", async (_label, place, literal, path) => {
    const raw = withValue(place, literal);
    expect(raw).toContain(literal);
    const err = await expectError(await postRaw(a.key, raw, "application/json"), 400, "non_finite_number");
    expect(err.details).toEqual({ path, value: literal });
    expect(err.message.startsWith(`${path}: ${literal} is not a finite number`)).toBe(true);
    expect(await dbSubmissionCount(a.id)).toBe(0);
  });

  it("NaN in a string is text, and broken JSON around a NaN is still malformed_json", async () => {
    expect((await post(a.key, job({ name: "NaN Infinity 1e400" }))).status).toBe(202);
    for (const raw of ['{"gene_space": [NaN', '{"gene_space": NaN NaN}', "[nan]", '{"x": Infinityx}']) {
      await expectError(await postRaw(a.key, raw, "application/json"), 400, "malformed_json");
    }
  });

  it("every JSON body of the API reads the same way: a webhook, a continue, an admin grant", async () => {
    const webhook = await call("/api/v1/webhooks", {
      key: a.key,
      method: "POST",
      rawBody: '{"url": "https://93.184.215.14/in", "events": ["webhook.test"], "description": NaN}',
      headers: { "Content-Type": "application/json" },
    });
    expect((await expectError(webhook, 400, "non_finite_number")).details.path).toBe("$.description");
    const grant = await admin(`/accounts/${a.id}/credits`, {
      method: "POST",
      rawBody: '{"amount": 1e400}',
      headers: { "Content-Type": "application/json" },
    });
    expect((await expectError(grant, 400, "non_finite_number")).details).toEqual({ path: "$.amount", value: "1e400" });
    const id = await createSubmission(a.key);
    const again = await call(`/api/v1/submissions/${id}/reexecute`, {
      key: a.key,
      method: "POST",
      rawBody: '{"num_generations": -Infinity}',
      headers: { "Content-Type": "application/json" },
    });
    expect((await expectError(again, 400, "non_finite_number")).details.path).toBe("$.num_generations");
  });
});

describe("415 unsupported_media_type", () => {
  it.each([
    ["text/plain", "text/plain"],
    ["form encoding", "application/x-www-form-urlencoded"],
    ["a JSON-looking type", "application/jsonp"],
    ["no Content-Type", undefined],
  ])("%s", async (_label, type) => {
    await expectError(await postRaw(a.key, JSON.stringify(job()), type), 415, "unsupported_media_type");
  });
});

describe("413 payload_too_large", () => {
  const callback = (name: string, padding: number) => `def ${name}(ga):\n    pass\n# ${"x".repeat(padding)}\n`;
  // Five code fields of 60 KiB each: every field is within 64 KiB, the body is not within 256 KiB.
  const bigFields = (padding: number) => ({
    fitness_func: `def fitness(ga, s, i):\n    return 0\n# ${"x".repeat(padding)}\n`,
    on_start: callback("cb", padding),
    on_start_entry: "cb",
    on_generation: callback("cb", padding),
    on_generation_entry: "cb",
    on_stop: callback("cb", padding),
    on_stop_entry: "cb",
    on_fitness: callback("cb", padding),
    on_fitness_entry: "cb",
  });

  it("a body over 256 KiB whose every field is valid", async () => {
    const body = job(bigFields(60 * 1024));
    expect(JSON.stringify(body).length).toBeGreaterThan(256 * 1024);
    await expectError(await post(a.key, body), 413, "payload_too_large");
  });

  it("a body just under 256 KiB is accepted", async () => {
    const body = job(bigFields(50 * 1024));
    expect(JSON.stringify(body).length).toBeLessThan(256 * 1024);
    expect((await post(a.key, body)).status).toBe(202);
  });

  const sized = (bytes: number, unit = "x") => {
    const head = "def fitness(ga, s, i):\n    return 0\n#";
    return head + unit.repeat(Math.ceil((bytes - head.length) / new TextEncoder().encode(unit).length));
  };

  it("one code field of exactly 64 KiB is accepted; one byte more is 413 naming the field", async () => {
    expect((await post(a.key, job({ fitness_func: sized(64 * 1024) }))).status).toBe(202);
    const err = await expectError(await post(a.key, job({ fitness_func: sized(64 * 1024 + 1) })), 413, "payload_too_large");
    expect(err.details.field).toBe("fitness_func");
  });

  it("counts bytes, not characters: 33,000 two-byte characters in a callback", async () => {
    const source = `def cb(ga):\n    pass\n# ${"é".repeat(33_000)}`;
    const err = await expectError(await post(a.key, job({ on_generation: source, on_generation_entry: "cb" })), 413, "payload_too_large");
    expect(err.details.field).toBe("on_generation");
  });
});

describe("400 validation_failed with details.fields", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["num_generations missing", { num_generations: undefined }, "num_generations"],
    ["num_parents_mating missing", { num_parents_mating: undefined }, "num_parents_mating"],
    ["sol_per_pop missing", { sol_per_pop: undefined }, "sol_per_pop"],
    ["num_genes missing", { num_genes: undefined }, "num_genes"],
    ["fitness_func missing", { fitness_func: undefined, fitness_func_entry: undefined }, "fitness_func"],
    ["num_generations as a string", { num_generations: "20" }, "num_generations"],
    ["num_generations 0", { num_generations: 0 }, "num_generations"],
    ["num_generations 1.5", { num_generations: 1.5 }, "num_generations"],
    ["num_generations null", { num_generations: null }, "num_generations"],
    ["num_generations 1e300", { num_generations: 1e300 }, "num_generations"],
    ["sol_per_pop 1", { sol_per_pop: 1 }, "sol_per_pop"],
    ["sol_per_pop 5001", { sol_per_pop: 5001 }, "sol_per_pop"],
    ["num_parents_mating over sol_per_pop", { num_parents_mating: 11 }, "num_parents_mating"],
    ["num_genes 0", { num_genes: 0 }, "num_genes"],
    ["num_genes negative", { num_genes: -3 }, "num_genes"],
    ["sample_size 0", { sample_size: 0 }, "sample_size"],
    ["sample_size 10001", { sample_size: 10_001 }, "sample_size"],
    ["init_range_low a list, init_range_high a number", { init_range_low: [0, 0, 0, 0, 0], init_range_high: 4 }, "init_range_low"],
    ["init_range lists shorter than num_genes", { init_range_low: [0, 0], init_range_high: [1, 1] }, "init_range_low"],
    [
      "random_mutation_max_val list longer than num_genes",
      { random_mutation_min_val: [0, 0, 0, 0, 0], random_mutation_max_val: [1, 1, 1, 1, 1, 1] },
      "random_mutation_max_val",
    ],
    [
      "random_mutation list ±1.7e308",
      { random_mutation_min_val: [0, 0, 0, 0, -1.7e308], random_mutation_max_val: [1, 1, 1, 1, 1.7e308] },
      "random_mutation_max_val",
    ],
    ["gene_type int with a precision", { gene_type: ["int", 2] }, "gene_type"],
    ["gene_type per-gene list of the wrong length", { gene_type: ["int", "float", "int"] }, "gene_type"],
    ["gene_type precision not an integer", { gene_type: ["float", 1.5] }, "gene_type"],
    ["gene_type of a type PyGAD does not have", { gene_type: ["float128", 2] }, "gene_type"],
    ["stop_criteria saturate of a fraction", { stop_criteria: "saturate_1.5" }, "stop_criteria"],
    ["stop_criteria negative time", { stop_criteria: ["reach_0", "time_-1"] }, "stop_criteria.1"],
    ["stop_criteria evaluations 0", { stop_criteria: "evaluations_0" }, "stop_criteria"],
    ["stop_criteria with two numbers but not reach", { stop_criteria: "saturate_2_3" }, "stop_criteria"],
    ["stop_criteria threshold beyond a float", { stop_criteria: "reach_1e400" }, "stop_criteria"],
    ["stop_criteria unknown word", { stop_criteria: "generations_5" }, "stop_criteria"],
    ["save_solutions past its cap", { save_solutions: true, num_generations: 1000, sol_per_pop: 100, num_genes: 10 }, "save_solutions"],
    ["save_best_solutions past its cap", { save_best_solutions: true, num_generations: 10000, num_genes: 100 }, "save_best_solutions"],
    ["save_solutions not a boolean", { save_solutions: "yes" }, "save_solutions"],
    ["init_range_high a string", { init_range_high: "4" }, "init_range_high"],
    [
      "init_range ±1.7e308 (high - low overflows PyGAD's uniform draw)",
      { init_range_low: -1.7e308, init_range_high: 1.7e308 },
      "init_range_high",
    ],
    ["random_mutation ±1.7e308", { random_mutation_min_val: -1.7e308, random_mutation_max_val: 1.7e308 }, "random_mutation_max_val"],
    ["gene_space range ±1.7e308", { gene_space: { low: -1.7e308, high: 1.7e308 } }, "gene_space"],
    ["name with a lone surrogate", { name: "bad \ud800 name" }, "name"],
    ["name over 200 characters", { name: "n".repeat(201) }, "name"],
    ["name a number", { name: 12 }, "name"],
    ["name null", { name: null }, "name"],
    ["mutation_type unknown", { mutation_type: "bogus" }, "mutation_type"],
    ["crossover_type unknown", { crossover_type: "three_points" }, "crossover_type"],
    ["parent_selection_type unknown", { parent_selection_type: "best" }, "parent_selection_type"],
    ["gene_type unknown", { gene_type: "complex" }, "gene_type"],
    ["crossover_probability above 1", { crossover_probability: 1.5 }, "crossover_probability"],
    ["mutation_probability negative", { mutation_probability: -0.1 }, "mutation_probability"],
    ["K_tournament beyond any population", { K_tournament: 1_000_001 }, "K_tournament"],
    ["keep_elitism negative", { keep_elitism: -1 }, "keep_elitism"],
    ["random_seed negative", { random_seed: -1 }, "random_seed"],
    ["stop_criteria malformed", { stop_criteria: "reach_" }, "stop_criteria"],
    ["allow_duplicate_genes a string", { allow_duplicate_genes: "yes" }, "allow_duplicate_genes"],
    ["gene_space of the wrong length", { gene_space: [null, [1, 2]] }, "gene_space"],
    ["gene_space range with a step and low >= high", { gene_space: { low: 5, high: 1, step: 1 } }, "gene_space"],
    ["gene_space deeply nested", { gene_space: [[[[[1]]]]] }, "gene_space"],
    ["fitness_func empty", { fitness_func: "" }, "fitness_func"],
    ["fitness_func an object", { fitness_func: { code: "def f(): pass" } }, "fitness_func"],
    ["fitness_func_entry not an identifier", { fitness_func_entry: "1fitness" }, "fitness_func_entry"],
    ["fitness_func_entry with a dot", { fitness_func_entry: "numpy.sum" }, "fitness_func_entry"],
    ["an entry without its code field", { on_stop_entry: "cb" }, "on_stop_entry"],
    ["an unknown field", { foo: 1 }, "foo"],
    ["an unknown field named like a prototype", { constructor: "x" }, "constructor"],
    ["a misspelt parameter", { num_generation: 5 }, "num_generation"],
  ];

  it.each(cases)("%s", async (_label, overrides, field) => {
    const body = job(overrides);
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
    const err = await expectError(await post(a.key, body), 400, "validation_failed");
    expect(failedFields(err)).toContain(field);
    for (const f of err.details.fields) {
      expect(Object.keys(f).sort()).toEqual(["field", "message"]);
      expect(typeof f.message).toBe("string");
      expect(f.message.length).toBeGreaterThan(0);
    }
  });

  it("reports every failing field at once", async () => {
    const err = await expectError(await post(a.key, { name: 5, num_generations: "x", sample_size: 0 }), 400, "validation_failed");
    expect(failedFields(err)).toEqual(
      expect.arrayContaining(["name", "num_generations", "sample_size", "num_parents_mating", "sol_per_pop", "num_genes", "fitness_func"]),
    );
  });

  it("a literal 1e999 (Infinity once parsed) is 400 non_finite_number naming where, not a 500", async () => {
    // Was validation_failed on num_generations; now non_finite_number with the path.
    const raw = JSON.stringify(job()).replace('"num_generations":20', '"num_generations":1e999');
    const err = await expectError(await postRaw(a.key, raw, "application/json"), 400, "non_finite_number");
    expect(err.details).toEqual({ path: "$.num_generations", value: "1e999" });
  });

  it("a __proto__ key is an unknown field", async () => {
    const raw = JSON.stringify(job()).replace("{", '{"__proto__":{"num_generations":5},');
    const err = await expectError(await postRaw(a.key, raw, "application/json"), 400, "validation_failed");
    expect(failedFields(err)).toContain("__proto__");
  });

  it.each([
    ["an array", "[]"],
    ["an array of jobs", JSON.stringify([job()])],
    ["null", "null"],
    ["a string", '"job"'],
    ["a number", "42"],
    ["true", "true"],
  ])("a body that is %s is 400 naming the body", async (_label, raw) => {
    const err = await expectError(await postRaw(a.key, raw, "application/json"), 400, "validation_failed");
    expect(failedFields(err)).toEqual(["body"]);
  });
});

describe("hostile but valid input is stored as given", () => {
  it.each([
    ["unicode and emoji", "Ünïcödé 🧬 名前 — ok"],
    ["right-to-left text", "مرحبا"],
    ["quotes and markup", `"'<script>alert(1)</script>`],
    ["SQL", "x'); DROP TABLE submissions; --"],
    ["a NUL character", "a\u0000b"],
    ["200 characters", "n".repeat(200)],
  ])("name with %s", async (_label, name) => {
    const id = await createSubmission(a.key, { name });
    expect((await getSubmission(a.key, id)).name).toBe(name);
  });
});

describe("422 entry symbols", () => {
  it.each([
    ["fitness_func", { fitness_func_entry: undefined }],
    ["on_generation", { on_generation: "def cb(ga):\n    pass\n" }],
    ["gene_constraint", { gene_constraint: "constraints = [None] * 5\n" }],
    ["on_start", { on_start: "def cb(ga):\n    pass\n" }],
  ])("%s without its _entry is entry_symbol_required", async (field, overrides) => {
    const body = job(overrides);
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
    const err = await expectError(await post(a.key, body), 422, "entry_symbol_required");
    expect(err.details.field).toBe(`${field}_entry`);
  });

  it.each([
    ["a name not defined anywhere", { fitness_func_entry: "nope" }, "fitness_func_entry"],
    [
      "a nested def",
      { fitness_func: "def outer():\n    def inner(ga, s, i):\n        return 0\n", fitness_func_entry: "inner" },
      "fitness_func_entry",
    ],
    [
      "a name only in a comment",
      { fitness_func: "# def fitness(ga, s, i):\nx = 1\n", fitness_func_entry: "fitness" },
      "fitness_func_entry",
    ],
    ["a name only called, not defined", { fitness_func: "print(fitness)\n", fitness_func_entry: "fitness" }, "fitness_func_entry"],
    ["a comparison, not an assignment", { fitness_func: "fitness == 1\n", fitness_func_entry: "fitness" }, "fitness_func_entry"],
    [
      "a callback entry naming another field's function",
      { on_generation: "def cb(ga):\n    pass\n", on_generation_entry: "fitness" },
      "on_generation_entry",
    ],
    [
      "a gene_constraint entry that is indented",
      { gene_constraint: "if True:\n    constraints = [None] * 5\n", gene_constraint_entry: "constraints" },
      "gene_constraint_entry",
    ],
  ])("%s is entry_symbol_not_found", async (_label, overrides, field) => {
    const err = await expectError(await post(a.key, job(overrides)), 422, "entry_symbol_not_found");
    expect(err.details.field).toBe(field);
  });

  it.each([
    ["def", "def f(ga, solution, idx):\n    return 0\n"],
    ["async def", "async def f(ga, solution, idx):\n    return 0\n"],
    ["a lambda assignment", "f = lambda ga, solution, idx: 0\n"],
    ["an annotated assignment", "from typing import Callable\nf: Callable = lambda ga, s, i: 0\n"],
    ["a class", "class f:\n    def __call__(self, ga, s, i):\n        return 0\n"],
    ["a chained assignment", "g = f = lambda ga, s, i: 0\n"],
    ["CRLF line endings", "import math\r\ndef f(ga, s, i):\r\n    return 0\r\n"],
  ])("an entry defined by %s is accepted", async (_label, source) => {
    expect((await post(a.key, job({ fitness_func: source, fitness_func_entry: "f" }))).status).toBe(202);
  });

  it("a gene_constraint entry naming a list is accepted", async () => {
    const res = await post(
      a.key,
      job({ gene_constraint: "constraints = [None, None, None, None, None]\n", gene_constraint_entry: "constraints" }),
    );
    expect(res.status).toBe(202);
  });
});

describe("403 tier_limit_exceeded (API runs use Premium caps unless overridden)", () => {
  it.each([
    ["num_generations", 10_001, 10_000],
    ["num_genes", 1001, 1000],
  ])("%s over the cap", async (parameter, requested, limit) => {
    const err = await expectError(await post(a.key, job({ [parameter]: requested })), 403, "tier_limit_exceeded");
    expect(err.details).toEqual({ parameter, limit, requested });
  });

  it("the caps themselves are allowed, also on a free plan", async () => {
    const free = await newRoomyAccount("free");
    expect((await post(free.key, job({ num_generations: 10_000 }))).status).toBe(202);
    expect((await post(free.key, job({ num_genes: 1000 }))).status).toBe(202);
  });

  it("admin overrides lower and raise the caps; null restores them", async () => {
    const acc = await newRoomyAccount();
    const patch = (overrides: Record<string, number | null>) => admin(`/accounts/${acc.id}`, { method: "PATCH", body: { overrides } });
    expect((await patch({ max_num_generations: 50, max_num_genes: 2000 })).status).toBe(200);
    const err = await expectError(await post(acc.key, job({ num_generations: 51 })), 403, "tier_limit_exceeded");
    expect(err.details).toEqual({ parameter: "num_generations", limit: 50, requested: 51 });
    expect((await post(acc.key, job({ num_generations: 50 }))).status).toBe(202);
    expect((await post(acc.key, job({ num_genes: 1500 }))).status).toBe(202);

    expect((await patch({ max_num_generations: null, max_num_genes: null })).status).toBe(200);
    expect((await post(acc.key, job({ num_generations: 51 }))).status).toBe(202);
    const genes = await expectError(await post(acc.key, job({ num_genes: 1500 })), 403, "tier_limit_exceeded");
    expect(genes.details).toEqual({ parameter: "num_genes", limit: 1000, requested: 1500 });
  });

  it("a reexecute override over the cap is refused the same way", async () => {
    const id = await createSubmission(a.key);
    await completeRun((await getSubmission(a.key, id)).latest_run.id);
    await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: 20_000 } }),
      403,
      "tier_limit_exceeded",
    );
    expect((await getSubmission(a.key, id)).run_count).toBe(1);
  });
});

describe("402 insufficient_credits", () => {
  it("is refused once free + paid balance is below -1.00, accepted at exactly -1.00", async () => {
    const acc = await newRoomyAccount("premium", 100);
    const credits = (amount: number) => admin(`/accounts/${acc.id}/credits`, { body: { amount } });
    expect(await json(await credits(-101))).toEqual({ balances: { free: 0, paid: -1, total: -1 } });
    expect((await post(acc.key, job())).status).toBe(202);

    expect((await json(await credits(-1))).balances.total).toBe(-2);
    const err = await expectError(await post(acc.key, job()), 402, "insufficient_credits");
    expect(err.details).toMatchObject({ balance: -2, negative_balance_cap: 1 });

    // A per-account negative_balance_cap lets it through again.
    expect((await admin(`/accounts/${acc.id}`, { method: "PATCH", body: { overrides: { negative_balance_cap: 5 } } })).status).toBe(200);
    expect((await post(acc.key, job())).status).toBe(202);
  });

  it("admin credits -102 on a 100-credit account: balance -2, creates are 402", async () => {
    const acc = await newRoomyAccount("premium", 100);
    expect(await json(await admin(`/accounts/${acc.id}/credits`, { body: { amount: -102 } }))).toEqual({
      balances: { free: 0, paid: -2, total: -2 },
    });
    await expectError(await post(acc.key, job()), 402, "insufficient_credits");
  });

  it("the tier cap answers before the credit check (gate order)", async () => {
    const acc = await newRoomyAccount("premium", 0);
    await admin(`/accounts/${acc.id}/credits`, { body: { amount: -5 } });
    await expectError(await post(acc.key, job({ num_generations: 10_001 })), 403, "tier_limit_exceeded");
  });
});

describe("409 invalid_state", () => {
  it("cancelling a succeeded, failed or already cancelled submission", async () => {
    for (const end of ["succeeded", "failed", "cancelled"] as const) {
      const id = await createSubmission(a.key);
      if (end === "cancelled") expect((await call(`/api/v1/submissions/${id}/cancel`, { key: a.key, method: "POST" })).status).toBe(202);
      else expect((await completeRun((await getSubmission(a.key, id)).latest_run.id, { status: end })).status).toBe(204);
      await expectError(await call(`/api/v1/submissions/${id}/cancel`, { key: a.key, method: "POST" }), 409, "invalid_state");
      expect((await getSubmission(a.key, id)).status).toBe(end);
    }
  });

  it("reexecuting a submission whose run is queued or running", async () => {
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const id = await createSubmission(a.key);
    await expectError(await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, method: "POST" }), 409, "invalid_state");
    const runId = (await getSubmission(a.key, id)).latest_run.id;
    await env.DB.batch([
      env.DB.prepare("UPDATE runs SET status = 'running', started_at = ? WHERE id = ?").bind(new Date().toISOString(), runId),
      env.DB.prepare("UPDATE submissions SET status = 'running' WHERE id = ?").bind(id),
    ]);
    await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: 3 } }),
      409,
      "invalid_state",
    );
    const row = await getSubmission(a.key, id);
    expect(row.run_count).toBe(1);
    expect(row.latest_run.id).toBe(runId);
    expect(send).toHaveBeenCalledTimes(1); // the create only
  });

  it("reexecute with a bad override is 400 and adds no run", async () => {
    const id = await createSubmission(a.key);
    await completeRun((await getSubmission(a.key, id)).latest_run.id);
    const err = await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, { key: a.key, body: { num_generations: -1, bogus: 1 } }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toEqual(expect.arrayContaining(["num_generations", "bogus"]));
    await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, {
        key: a.key,
        method: "POST",
        rawBody: "{",
        headers: { "Content-Type": "application/json" },
      }),
      400,
      "malformed_json",
    );
    await expectError(
      await call(`/api/v1/submissions/${id}/reexecute`, {
        key: a.key,
        method: "POST",
        rawBody: "x=1",
        headers: { "Content-Type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    expect((await getSubmission(a.key, id)).run_count).toBe(1);
  });
});

describe("a rejected create leaves nothing behind; an accepted one sends exactly one message", () => {
  const rejections: [string, number, string, (acc: TestAccount) => Promise<Response>][] = [
    ["400 validation_failed", 400, "validation_failed", (acc) => post(acc.key, job({ num_genes: 0 }))],
    ["400 malformed_json", 400, "malformed_json", (acc) => postRaw(acc.key, "{", "application/json")],
    [
      "413 payload_too_large",
      413,
      "payload_too_large",
      (acc) => post(acc.key, job({ fitness_func: `def fitness(a, b, c):\n    return 0\n#${"x".repeat(70_000)}` })),
    ],
    ["415 unsupported_media_type", 415, "unsupported_media_type", (acc) => postRaw(acc.key, JSON.stringify(job()), "text/plain")],
    ["422 entry_symbol_required", 422, "entry_symbol_required", (acc) => post(acc.key, job({ fitness_func_entry: undefined }))],
    ["422 entry_symbol_not_found", 422, "entry_symbol_not_found", (acc) => post(acc.key, job({ fitness_func_entry: "missing" }))],
    ["403 tier_limit_exceeded", 403, "tier_limit_exceeded", (acc) => post(acc.key, job({ num_generations: 10_001 }))],
    [
      "402 insufficient_credits",
      402,
      "insufficient_credits",
      async (acc) => {
        await admin(`/accounts/${acc.id}/credits`, { body: { amount: -102 } });
        return post(acc.key, job());
      },
    ],
  ];

  it.each(rejections)("%s", async (_label, status, code, attempt) => {
    const acc = await newRoomyAccount();
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    await expectError(await attempt(acc), status, code);
    expect(send).not.toHaveBeenCalled();
    expect(await dbSubmissionCount(acc.id)).toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE account_id = ?").bind(acc.id).first("n")).toBe(0);
    const list = await json(await call("/api/v1/submissions/", { key: acc.key }));
    expect(list.results).toEqual([]);
  });

  it("an accepted create: one row, one run, one message naming latest_run.id, its account and places", async () => {
    const acc = await newRoomyAccount();
    const send = vi.spyOn(env.RUNS_QUEUE, "send");
    const id = await createSubmission(acc.key);
    expect(send).toHaveBeenCalledTimes(1);
    const [message] = send.mock.calls[0]!;
    expect(message).toEqual({ run_id: (await getSubmission(acc.key, id)).latest_run.id, account_id: acc.id, places: 1 });
    expect(await dbSubmissionCount(acc.id)).toBe(1);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE account_id = ?").bind(acc.id).first("n")).toBe(1);
  });

  it("a failing queue send loses nothing: 202, the run stays queued, and the cron sends it again", async () => {
    const acc = await newRoomyAccount();
    const send = vi.spyOn(env.RUNS_QUEUE, "send").mockRejectedValueOnce(new Error("queue down"));
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const id = await createSubmission(acc.key);
    const runId = (await getSubmission(acc.key, id)).latest_run.id;
    await vi.waitFor(() =>
      expect(logged).toHaveBeenCalledWith(expect.stringContaining("runs queue send failed"), runId, expect.any(Error)),
    );
    expect((await getSubmission(acc.key, id)).status).toBe("queued");
    send.mockClear();
    await reconcileRuns(env, Date.now() + QUEUED_TIMEOUT_MS + 1000);
    expect(send.mock.calls.filter(([m]) => (m as { run_id: string }).run_id === runId)).toHaveLength(1);
  });
});
