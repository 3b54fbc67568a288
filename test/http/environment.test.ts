// GET /api/v1/environment (docs/environment.md): what a run's code can import, no key needed, counted in
// the caller's IP window; the copy of the GA worker's environment (src/model/environment.json, which
// container/tests/test_environment.py holds to the worker and to requirements.txt).
import { describe, expect, it } from "vitest";
import { apiRunLimits, PLAN_LIMITS } from "../../src/admission/limits";
import listing from "../../src/model/environment.json";
import { call, expectError, json } from "../helpers/api";

const freshIp = () => `198.51.100.${1 + Math.floor(Math.random() * 250)}`;

describe("GET /api/v1/environment", () => {
  it("lists Python, every package with its version, threads, memory and data files, with no key", async () => {
    const res = await call("/api/v1/environment", { ip: freshIp() });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual(listing);
    expect(body.python).toMatch(/^3\.11$/);
    const byName = Object.fromEntries(body.packages.map((p: { name: string }) => [p.name, p]));
    for (const [name, module] of [
      ["numpy", "numpy"],
      ["scipy", "scipy"],
      ["pandas", "pandas"],
      ["scikit-learn", "sklearn"],
      ["tensorflow-cpu", "tensorflow"],
      ["keras", "keras"],
      ["pygad", "pygad"],
    ]) {
      expect(byName[name], name).toMatchObject({ featured: true, modules: [module] });
      expect(byName[name].version).toMatch(/^\d+\.\d+/);
    }
    expect(body.packages.filter((p: { featured: boolean }) => !p.featured).length).toBeGreaterThan(10);
    expect(body.threads.variables).toEqual(expect.arrayContaining(["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"]));
    expect(body.data_files.mount).toBe("/data");
  });

  it("is counted in the caller's IP window like every request without a key", async () => {
    const ip = freshIp();
    const first = await call("/api/v1/environment", { ip });
    const second = await call("/api/v1/environment", { ip });
    expect(first.headers.get("X-RateLimit-Limit")).toBeTruthy();
    expect(Number(second.headers.get("X-RateLimit-Remaining"))).toBe(Number(first.headers.get("X-RateLimit-Remaining")) - 1);
  });

  it("answers only GET", async () => {
    const res = await call("/api/v1/environment", { method: "POST", ip: freshIp() });
    await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("Allow")).toBe("GET");
  });

  it("TensorFlow's memory floor, as the listing and the GA worker's error state it, holds for the plans", () => {
    // "Runs paid with credits, and the trial and premium plans' runs, have enough"; the free plan's own do not.
    const floor = listing.memory.tensorflow_min_memory_mb;
    expect(PLAN_LIMITS.free.run_memory_mb).toBeLessThan(floor);
    expect(PLAN_LIMITS.trial.run_memory_mb).toBeGreaterThanOrEqual(floor);
    expect(PLAN_LIMITS.premium.run_memory_mb).toBeGreaterThanOrEqual(floor);
    for (const plan of ["free", "trial", "premium"] as const) expect(apiRunLimits(plan, {}, 1).run_memory_mb).toBeGreaterThanOrEqual(floor);
  });
});
