// The quick submission types in a real browser (docs/dashboard.md#quick-types): the new-submission page
// leads to the type picker, a type's inputs are a form made from its schema, a field's refusal is shown
// beside it, and the result page says what the genes mean.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, person, shot, signIn, watchErrors } from "./browser/harness";
import { call, newAccount, waitForStatus } from "./client";

let browser: Browser;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

beforeAll(async () => {
  browser = await launch();
  account = await newAccount();
  page = await (await person(browser)).newPage();
  errors = watchErrors(page);
  await signIn(page, account.id);
});
afterAll(async () => {
  await browser?.close();
});

describe("quick submission types in the dashboard", () => {
  it("picks the knapsack, fills its inputs, submits, and shows the chosen items on the result page", async () => {
    await page.goto("/submissions/new");
    await page.getByRole("link", { name: "quick submission type" }).click();
    await page.waitForURL(/\/submissions\/new\/quick/);
    await page.getByRole("navigation", { name: "Quick submission types" }).getByRole("link", { name: "quick_knapsack" }).click();
    await page.waitForURL(/type=quick_knapsack/);
    // The form starts from the type's example; its inputs are the schema's fields.
    expect(await page.locator("#f-item_names").inputValue()).toBe('["map","compass","water","rope"]');
    await page.locator("#f-name").fill("browser knapsack");
    await page.locator("#f-item_names").fill('["tent", "stove", "rope"]');
    await page.locator("#f-item_values").fill("[10, 6, 4]");
    await page.locator("#f-item_weights").fill("[[5], [3], [2, 9]]");
    await page.locator("#f-dimension_capacities").fill("[8]");
    await page.locator("#f-num_generations").fill("20");
    await page.getByRole("button", { name: "Submit" }).click();
    // Refused: the third item's weights name two dimensions; said beside item_weights, nothing created.
    await expect.poll(() => page.locator("#f-item_weights-error").textContent()).toContain("2: needs one weight per dimension (1)");
    expect((await call("/api/v1/submissions", { key: account.key })).body.results).toHaveLength(0);
    await page.locator("#f-item_weights").fill("[[5], [3], [2]]");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;
    expect(await page.locator("[data-submission-type]").textContent()).toBe("quick_knapsack");
    const done = await waitForStatus(account.key, id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.submission_type).toBe("quick_knapsack");
    expect(done.source).toBe("web");
    const resultId = (await call(`/api/v1/results/?submission_id=${id}`, { key: account.key })).body.results[0].id;
    // In a tab of its own: the submission's page reloads itself once its run ends (live progress).
    const resultPage = await page.context().newPage();
    const resultErrors = watchErrors(resultPage);
    await resultPage.goto(`/results/${resultId}`);
    const section = resultPage.locator("#interpretation");
    expect(await section.locator("h2").textContent()).toBe("What the genes mean");
    // tent + stove = 16 with weight 8 of 8.
    expect(await section.locator("[data-interpretation-headline]").textContent()).toBe(
      "Packed: tent, stove — value 16; weight 8 of 8 — within capacity",
    );
    await shot(resultPage, "result-quick-knapsack");
    expect(errors).toEqual([]);
    expect(resultErrors).toEqual([]);
  });
});
