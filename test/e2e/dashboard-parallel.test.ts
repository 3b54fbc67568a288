// parallel_processing from the dashboard in a real browser: the form's field, the payment choice naming
// each way's workers, a run on the plan with 2 process workers giving the serial API run's result.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, person, signIn, watchErrors } from "./browser/harness";
import { call, newAccount, waitForStatus } from "./client";

let browser: Browser;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

beforeAll(async () => {
  browser = await launch();
  account = await newAccount("trial");
  page = await (await person(browser)).newPage();
  errors = watchErrors(page);
  await signIn(page, account.id);
});
afterAll(async () => {
  await browser?.close();
});

async function resultOf(id: string) {
  const done = await waitForStatus(account.key, id);
  expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
  const list = (await call(`/api/v1/results/?submission_id=${id}`, { key: account.key })).body.results;
  return { submission: done, result: (await call(`/api/v1/results/${list[0].id}`, { key: account.key })).body };
}

describe("parallel fitness from the new-submission form", () => {
  it("a run on the trial plan with ['process', 2] succeeds with the serial run's result", async () => {
    const fields = { num_generations: "20", sol_per_pop: "12", num_parents_mating: "4", num_genes: "4", random_seed: "7" };
    await page.goto("/submissions/new");
    for (const [name, value] of Object.entries(fields)) await page.locator(`#f-${name}`).fill(value);
    await expect.poll(() => page.locator(".payment").textContent()).toContain("2 parallel fitness workers");
    await page.getByText("GA operators").click(); // the group opens
    await page.locator("#f-parallel_processing").fill('["process", 2]');
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const web = await resultOf(page.url().split("/").pop()!);
    expect(web.submission).toMatchObject({ source: "web", parameters: { parallel_processing: ["process", 2] } });

    // The same parameters through the API, one evaluation at a time.
    const { parallel_processing: _, ...parameters } = web.submission.parameters;
    const serial = await call("/api/v1/submissions/", { key: account.key, body: { name: "serial", ...parameters } });
    expect(serial.status).toBe(202);
    const api = await resultOf(serial.body.id);
    expect(web.result.best_solution).toEqual(api.result.best_solution);
    expect(web.result.best_solutions_fitness).toEqual(api.result.best_solutions_fitness);
    expect(errors).toEqual([]);
  });
});
