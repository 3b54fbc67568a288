// Data files in the dashboard, in a real browser (docs/dashboard.md#data-files): a CSV uploaded and
// attached from the new-submission form (the page's script), read by the run at /data/<name>; and the
// Data files page's own upload form, which works without the script.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, fillForm, launch, person, shot, signIn, watchErrors } from "./browser/harness";
import { call, newAccount, waitForStatus } from "./client";

let browser: Browser;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

const READS = [
  "import csv",
  "",
  "with open('/data/items.csv', newline='') as handle:",
  "    ITEMS = list(csv.DictReader(handle))",
  "print('items', len(ITEMS), 'weight', sum(int(i['weight']) for i in ITEMS))",
  "",
  "",
  "def fitness(ga, solution, solution_idx):",
  "    return -abs(float(solution.sum()) - len(ITEMS))",
  "",
].join("\n");

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

describe("data files from the dashboard", () => {
  it("upload and attach a CSV from the new-submission form; the run reads it and succeeds", async () => {
    await fillForm(
      page,
      { name: "knapsack table", num_generations: "15", sol_per_pop: "10", num_parents_mating: "4", num_genes: "3" },
      READS,
    );
    const chooser = page.locator("details.group", { has: page.locator("#f-data_files") });
    if ((await chooser.getAttribute("open")) === null) await chooser.locator("summary").click();
    await page.locator("#data-file-attach").setInputFiles({
      name: "items.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("item,weight\nrope,3\ntent,9\nstove,4\n"),
    });
    await eventually(() => page.locator("[data-upload-status]").textContent()).toBe("Uploaded and attached items.csv.");
    const box = page.locator('input[name="data_files"]');
    expect(await box.count()).toBe(1);
    expect(await box.isChecked()).toBe(true);
    await shot(page, "new-submission-data-files", false);
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;
    const done = await waitForStatus(account.key, id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.logs).toContain("items 3 weight 16");
    expect(done.parameters.data_files).toHaveLength(1);
    await page.goto(`/submissions/${id}`); // (the page's live script reloads it itself when the run ends)
    expect(await page.locator("#files-h").textContent()).toBe("Data files");
    expect(await page.locator("td code", { hasText: "/data/items.csv" }).isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it("the Data files page uploads with its plain form, downloads and deletes", async () => {
    await page.goto("/data-files");
    await page.locator("#data-file").setInputFiles({ name: "second.csv", mimeType: "text/csv", buffer: Buffer.from("a,b\n1,2\n") });
    await page.getByRole("button", { name: "Upload" }).click();
    await page.waitForURL(/\/data-files$/);
    expect(await page.getByText("Uploaded second.csv.").isVisible()).toBe(true);
    expect(await page.locator("td code", { hasText: "second.csv" }).isVisible()).toBe(true);
    await shot(page, "data-files", false);
    const listed = (await call("/api/v1/data-files", { key: account.key })).body.results;
    expect(listed.map((f: { name: string }) => f.name).sort()).toEqual(["items.csv", "second.csv"]);
    const row = page.locator("tr", { hasText: "second.csv" });
    page.once("dialog", (dialog) => dialog.accept());
    await row.getByRole("button", { name: "Delete" }).click();
    await page.waitForURL(/\/data-files$/);
    await eventually(() => page.getByText(/Deleted second\.csv/).isVisible()).toBe(true);
    expect((await call("/api/v1/data-files", { key: account.key })).body.results).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
