// Sweeps and comparisons in a real browser (docs/dashboard.md#sweeps, #compare), against `wrangler dev`
// and the real GA worker: the sweep form counts its children against the cap and creates a sweep; the
// sweep's page keeps its counts up to date while the children run, then shows a box plot per combination
// with the best highlighted and the p-values in words, and links into the comparison of its runs; two
// runs of different submissions ticked in the lists are compared on one chart with what differs.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, launch, person, shot, signIn, typeCode, watchErrors } from "./browser/harness";
import { call, job, newAccount, waitForStatus } from "./client";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

/** About 0.1 s per generation: a 15-generation child runs for a second or two. */
const SLOW =
  "import time\nimport numpy\n\n\ndef fitness(ga, solution, idx):\n    time.sleep(0.01)\n    return -float(numpy.sum(solution ** 2))\n";

beforeAll(async () => {
  browser = await launch();
  account = await newAccount();
  context = await person(browser);
  page = await context.newPage();
  errors = watchErrors(page);
  await signIn(page, account.id);
});
afterAll(async () => {
  await browser?.close();
});

describe("a sweep from the form", () => {
  it("counts the children against the cap, creates the sweep, and its page updates, plots and links to the comparison", async () => {
    await page.goto("/sweeps/new");
    await page.locator("#f-name").fill("browser sweep");
    await page.locator("#f-num_generations").fill("15");
    await page.locator("#f-num_genes").fill("3");
    await typeCode(page, "fitness_func", SLOW);
    // The grid comes filled with two parameters of two values each; the seeds decide the children.
    expect(await page.locator("#f-grid_param_0").inputValue()).toBe("sol_per_pop");
    await page.locator("#f-seeds").fill("60");
    await eventually(() => page.locator("[data-children]").textContent()).toBe("4 combinations × 60 seeds = 240, more than your 200");
    expect(await page.getByRole("button", { name: "Start the sweep" }).isDisabled()).toBe(true);
    await page.locator("#f-seeds").fill("2");
    await eventually(() => page.locator("[data-children]").textContent()).toBe("4 combinations × 2 seeds = 8");
    await shot(page, "new-sweep");
    await page.getByRole("button", { name: "Start the sweep" }).click();
    await page.waitForURL(/\/sweeps\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;

    // While the children run the counts change in place (no reload: the poll counter keeps counting).
    const seen = new Set<string>();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const polls = await page
        .locator("[data-sweep-live]")
        .getAttribute("data-polls")
        .catch(() => null);
      const succeeded = await page
        .locator('[data-count="succeeded"]')
        .textContent()
        .catch(() => null);
      if (polls && succeeded !== null) seen.add(succeeded);
      const status = await page
        .locator("[data-sweep-status]")
        .textContent()
        .catch(() => null);
      if (status?.trim() === "completed") break;
      await page.waitForTimeout(200);
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
    // Ended: the page reloaded with the statistics.
    await eventually(() => page.locator("[data-sweep-status]").textContent(), 30_000).toBe("completed");
    expect(await page.locator('[data-count="succeeded"]').textContent()).toBe("8");
    const plot = page.locator("svg.box-plot");
    expect(await plot.locator("g[data-combination]").count()).toBe(4);
    expect(await plot.locator("g.best").count()).toBe(1);
    expect(await plot.locator("g.best rect.box").count()).toBe(1);
    const verdicts = await page.locator(".stats-table tbody tr").allTextContents();
    expect(verdicts.filter((t) => t.includes("the best (highest median)"))).toHaveLength(1);
    expect(verdicts.filter((t) => /at 5 %/.test(t))).toHaveLength(3);
    const api = await call(`/api/v1/sweeps/${id}`, { key: account.key });
    expect(api.body).toMatchObject({ source: "web", status: "completed", children: 8 });
    await shot(page, "sweep");

    await page.locator("#compare-sweep").click();
    await page.waitForURL(/\/compare\?runs=/);
    // Its eight runs on one chart: x and a series each.
    await eventually(() => page.locator('[data-chart="compare-chart"] .u-legend .u-series').count()).toBe(9);
    expect(await page.locator("table.params-differ th[scope=row]").allTextContents()).toEqual(
      expect.arrayContaining(["sol_per_pop", "mutation_probability", "random_seed"]),
    );
    expect(errors).toEqual([]);
  });
});

describe("comparing runs of different submissions", () => {
  it("ticked in the submissions list and in the results list: both curves on one chart and the parameters that differ", async () => {
    const small = await call("/api/v1/submissions/", { key: account.key, body: job({ name: "small pop", sol_per_pop: 8 }) });
    const large = await call("/api/v1/submissions/", { key: account.key, body: job({ name: "large pop", sol_per_pop: 24 }) });
    await waitForStatus(account.key, small.body.id);
    await waitForStatus(account.key, large.body.id);
    const runOf = async (id: string) => (await call(`/api/v1/submissions/${id}`, { key: account.key })).body.latest_run.id as string;
    const [a, b] = [await runOf(small.body.id), await runOf(large.body.id)];

    await page.goto("/submissions?name_contains=pop");
    await page.locator(`input.pick[value="${a}"]`).check();
    await eventually(() => page.locator("[data-compare-count]").textContent()).toBe("1 run ticked.");
    await page.locator(`input.pick[value="${b}"]`).check();
    await page.getByRole("button", { name: "Compare selected runs" }).click();
    await page.waitForURL(/\/compare\?runs=/);
    // The boxes' repeated runs= became the one shareable address.
    expect(new URL(page.url()).search).toMatch(new RegExp(`^\\?runs=(${a},${b}|${b},${a})$`));
    await eventually(() => page.locator('[data-chart="compare-chart"] .u-legend .u-series').count()).toBe(3);
    const legend = await page.locator('[data-chart="compare-chart"] .u-legend .u-series').allTextContents();
    expect(legend.join(" ")).toContain(`small pop · initial ${a}`);
    expect(legend.join(" ")).toContain(`large pop · initial ${b}`);
    const differ = await page.locator("table.params-differ tbody tr").allTextContents();
    expect(differ.some((row) => row.startsWith("sol_per_pop") && row.includes("8") && row.includes("24"))).toBe(true);
    expect(differ.some((row) => row.startsWith("num_genes"))).toBe(false);
    // The shared parameters are folded away.
    expect(await page.locator("details.params-shared").getAttribute("open")).toBeNull();
    await shot(page, "compare");

    // The same two from the results list.
    await page.goto("/results");
    await page.locator(`input.pick[value="${a}"]`).check();
    await page.locator(`input.pick[value="${b}"]`).check();
    await page.getByRole("button", { name: "Compare selected runs" }).click();
    await page.waitForURL(/\/compare\?runs=/);
    await eventually(() => page.locator('[data-chart="compare-chart"] .u-legend .u-series').count()).toBe(3);
    expect(errors).toEqual([]);
  });
});
