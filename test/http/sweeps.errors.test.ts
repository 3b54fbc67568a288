// Every refusal of POST /api/v1/sweeps (docs/api.md#sweeps, #sweep-gates): the body's rules (the grid, the
// seeds, the base checked as a submission's body with every combination, naming the grid entry), the
// gates counted per child and refused up front with their figures — and that a refused sweep leaves
// nothing behind. Children wait for slots instead of a 429, and the request counts once per minute.
import { describe, expect, it } from "vitest";
import { admin, call, createSubmission, env, expectError, FITNESS, failedFields, newAccount, type TestAccount } from "../helpers/api";
import { childRuns, createSweep, sweepBody } from "../helpers/sweeps";

const post = (key: string, body: unknown) => call("/api/v1/sweeps", { key, body });
const overrides = (a: TestAccount, o: Record<string, number | null>) =>
  admin(`/accounts/${a.id}`, { method: "PATCH", body: { overrides: o } });
const counts = async (accountId: string) =>
  env.DB.prepare(
    "SELECT (SELECT count(*) FROM sweeps WHERE account_id = ?1) AS sweeps, (SELECT count(*) FROM submissions WHERE account_id = ?1) AS submissions",
  )
    .bind(accountId)
    .first<{ sweeps: number; submissions: number }>();
const base = () => sweepBody().base as Record<string, unknown>;

describe("400 validation_failed: the body", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["no grid parameter", { grid: {} }, ["grid"]],
    ["an unknown parameter", { grid: { colour: [1, 2] } }, ["grid.colour"]],
    ["random_seed in the grid", { grid: { random_seed: [1, 2] } }, ["grid.random_seed"]],
    ["a code field in the grid", { grid: { fitness_func: [FITNESS] } }, ["grid.fitness_func"]],
    [
      "an invalid value, named by its place",
      { grid: { sol_per_pop: [10, 1], mutation_type: ["swap", "sideways"] } },
      ["grid.sol_per_pop.1", "grid.mutation_type.1"],
    ],
    [
      "a custom operator as a grid's value (the base's code only)",
      { grid: { crossover_type: ["single_point", "def cross(parents, size, ga):\n    return parents"] } },
      ["grid.crossover_type.1"],
    ],
    ["a repeated value", { grid: { sol_per_pop: [10, 20, 10] } }, ["grid.sol_per_pop.2"]],
    ["an empty list of values", { grid: { sol_per_pop: [] } }, ["grid.sol_per_pop"]],
    ["values that are not a list", { grid: { sol_per_pop: 10 } }, ["grid.sol_per_pop"]],
    ["seeds 0", { seeds: 0 }, ["seeds"]],
    ["seeds not an integer", { seeds: 1.5 }, ["seeds"]],
    ["no seeds", { seeds: undefined }, ["seeds"]],
    ["an unknown field of the sweep", { colour: "red" }, ["colour"]],
    ["an unknown field of the base", { base: { ...base(), colour: "red" } }, ["base.colour"]],
    ["a name in the base (the sweep names its children)", { base: { ...base(), name: "x" } }, ["base.name"]],
    ["a field of the wrong type in the base", { base: { ...base(), num_generations: "many" } }, ["base.num_generations"]],
    ["more children than any sweep may have", { grid: { sol_per_pop: [10, 20] }, seeds: 600 }, ["seeds"]],
  ];
  it.each(cases)("%s", async (_label, change, fields) => {
    const a = await newAccount();
    const err = await expectError(await post(a.key, { ...sweepBody(), ...change }), 400, "validation_failed");
    expect(failedFields(err)).toEqual(fields);
    expect(await counts(a.id)).toEqual({ sweeps: 0, submissions: 0 });
  });

  it("a combination that breaks a rule between fields names its grid entry and says the combination", async () => {
    const a = await newAccount();
    const body = {
      ...sweepBody(),
      base: { ...base(), num_parents_mating: 8 },
      grid: { sol_per_pop: [10, 6], mutation_probability: [0.1] },
    };
    const err = await expectError(await post(a.key, body), 400, "validation_failed");
    expect(err.details.fields).toEqual([
      {
        field: "base.num_parents_mating",
        message: "must be at most sol_per_pop (6) (in the combination sol_per_pop=6, mutation_probability=0.1)",
      },
    ]);
  });

  it("a required field left out of the base and not in the grid is the base's", async () => {
    const a = await newAccount();
    const { num_genes: _n, ...rest } = base();
    const err = await expectError(await post(a.key, { ...sweepBody(), base: rest }), 400, "validation_failed");
    expect(failedFields(err)).toEqual(["base.num_genes"]);
    // …and the grid may supply it.
    expect((await post(a.key, { ...sweepBody(), base: rest, grid: { num_genes: [3, 5] }, seeds: 1 })).status).toBe(202);
  });

  it("refuses a multi-objective selection: a sweep compares one best fitness per run", async () => {
    const a = await newAccount();
    const err = await expectError(
      await post(a.key, { ...sweepBody(), grid: { parent_selection_type: ["sss", "nsga2"] } }),
      400,
      "validation_failed",
    );
    expect(failedFields(err)).toEqual(["grid.parent_selection_type"]);
    expect(err.message).toMatch(/multi-objective/);
  });
});

describe("422: the base's code, named as the body holds it", () => {
  it("a missing entry symbol", async () => {
    const a = await newAccount();
    const { fitness_func_entry: _e, ...rest } = base();
    const err = await expectError(await post(a.key, { ...sweepBody(), base: rest }), 422, "entry_symbol_required");
    expect(err.details).toEqual({ field: "base.fitness_func_entry" });
  });
  it("an unknown code upload", async () => {
    const a = await newAccount();
    const { fitness_func: _f, ...rest } = base();
    const err = await expectError(
      await post(a.key, { ...sweepBody(), base: { ...rest, fitness_func_id: "nope" } }),
      422,
      "code_upload_not_found",
    );
    expect(err.details).toEqual({ field: "base.fitness_func_id" });
  });
  it("a code upload stands for its field", async () => {
    const a = await newAccount();
    const upload = (await (await call("/api/v1/code-uploads", { key: a.key, body: { content: FITNESS } })).json()) as { code_id: string };
    const { fitness_func: _f, ...rest } = base();
    const sweep = await createSweep(a.key, { ...sweepBody(), base: { ...rest, fitness_func_id: upload.code_id }, seeds: 1 });
    const child = await (await call(`/api/v1/submissions/${sweep.submissions[0].id}`, { key: a.key })).json();
    expect((child as any).parameters.fitness_func).toBe(FITNESS);
  });
});

describe("the gates, counted per child and refused up front", () => {
  it("403 tier_limit_exceeded past the children cap of the plan in force", async () => {
    const a = await newAccount();
    await overrides(a, { max_sweep_children: 10 });
    const err = await expectError(await post(a.key, sweepBody()), 403, "tier_limit_exceeded");
    expect(err.details).toEqual({ parameter: "sweep_children", limit: 10, requested: 12 });
    expect(err.message).toContain("12 children (4 combinations × 3 seeds)");
    expect(await counts(a.id)).toEqual({ sweeps: 0, submissions: 0 });
  });

  it("429 daily_quota when the quota left cannot take every child, with the figures", async () => {
    const a = await newAccount();
    await overrides(a, { daily_quota: 14 });
    await createSubmission(a.key);
    await createSubmission(a.key);
    await createSubmission(a.key);
    const res = await post(a.key, sweepBody());
    const err = await expectError(res, 429, "capacity_exceeded");
    expect(err.details).toMatchObject({ reason: "daily_quota", limit: 14, used: 3, requested: 12 });
    expect(err.message).toContain("11 of your 14 are left");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await counts(a.id)).toEqual({ sweeps: 0, submissions: 3 });
    // Twelve units fit once the quota is 15.
    await overrides(a, { daily_quota: 15 });
    expect((await post(a.key, sweepBody())).status).toBe(202);
  });

  it("429 daily_quota without a time to wait for a sweep larger than the whole quota", async () => {
    const a = await newAccount();
    await overrides(a, { daily_quota: 5 });
    const res = await post(a.key, sweepBody());
    const err = await expectError(res, 429, "capacity_exceeded");
    expect(err.details).toEqual({ reason: "daily_quota", limit: 5, used: 0, requested: 12 });
    expect(res.headers.get("Retry-After")).toBeNull();
  });

  it("403 tier_limit_exceeded when one combination is over a parameter cap", async () => {
    const a = await newAccount();
    await overrides(a, { max_num_generations: 30 });
    const err = await expectError(await post(a.key, { ...sweepBody(), grid: { num_generations: [10, 40] } }), 403, "tier_limit_exceeded");
    expect(err.details).toEqual({ parameter: "num_generations", limit: 30, requested: 40 });
    expect(await counts(a.id)).toEqual({ sweeps: 0, submissions: 0 });
    expect((await call("/api/v1/account", { key: a.key }).then((r) => r.json())) as any).toMatchObject({ usage: { daily_quota_used: 0 } });
  });

  it("402 insufficient_credits below the negative-balance cap", async () => {
    const a = await newAccount("premium", 0);
    await admin(`/accounts/${a.id}/credits`, { body: { amount: -1.5 } });
    const err = await expectError(await post(a.key, sweepBody()), 402, "insufficient_credits");
    expect(err.details).toEqual({ balance: -1.5, negative_balance_cap: 1 });
    expect(await counts(a.id)).toEqual({ sweeps: 0, submissions: 0 });
  });

  it("no slot free is no refusal: every child waits", async () => {
    const a = await newAccount();
    await overrides(a, { concurrent_submissions: 1 });
    await createSubmission(a.key);
    expect((await call("/api/v1/submissions", { key: a.key, body: sweepBody().base })).status).toBe(429);
    const sweep = await createSweep(a.key);
    expect((await childRuns(sweep.id)).every((r) => r.status === "queued" && r.awaiting_slot === 1)).toBe(true);
  });

  it("counts once against the per-minute limit, however many children", async () => {
    const a = await newAccount();
    const before = Number((await call("/api/v1/account", { key: a.key })).headers.get("X-RateLimit-Remaining"));
    const res = await post(a.key, sweepBody());
    expect(res.status).toBe(202);
    expect(Number(res.headers.get("X-RateLimit-Remaining"))).toBe(before - 1);
    // A refused sweep counts once too.
    const refused = await post(a.key, { ...sweepBody(), seeds: 0 });
    expect(refused.status).toBe(400);
    expect(Number(refused.headers.get("X-RateLimit-Remaining"))).toBe(before - 2);
  });
});

describe("404 and 409", () => {
  it("an unknown sweep is 404 for every operation", async () => {
    const a = await newAccount();
    for (const [method, path] of [
      ["GET", "/api/v1/sweeps/nope"],
      ["POST", "/api/v1/sweeps/nope/cancel"],
      ["DELETE", "/api/v1/sweeps/nope"],
    ] as const) {
      await expectError(await call(path, { key: a.key, method }), 404, "not_found");
    }
  });

  it("an unknown list parameter or status is 400", async () => {
    const a = await newAccount();
    expect(failedFields(await expectError(await call("/api/v1/sweeps?colour=red", { key: a.key }), 400, "validation_failed"))).toEqual([
      "colour",
    ]);
    expect(failedFields(await expectError(await call("/api/v1/sweeps?status=done", { key: a.key }), 400, "validation_failed"))).toEqual([
      "status",
    ]);
  });
});
