// The new-submission form's "Libraries you can import" in a real browser (docs/dashboard.md#new-submission):
// collapsed beside the fitness function's editor, it lists what GET /api/v1/environment lists; and a run
// submitted from the form imports scikit-learn.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, fillForm, launch, person, shot, signIn, watchErrors } from "./browser/harness";
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

const SKLEARN = `from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

X, y = load_iris(return_X_y=True)


def fitness(ga, solution, idx):
    depth = 1 + int(abs(solution[0])) % 3
    return float(cross_val_score(DecisionTreeClassifier(max_depth=depth, random_state=0), X, y, cv=3).mean())
`;

describe("the libraries a fitness function can import", () => {
  it("are listed, collapsed, beside the fitness function's editor: the same list as the API's", async () => {
    const environment = (await call("/api/v1/environment")).body;
    await page.goto("/submissions/new");
    const libraries = page.locator(".code-field:has(#f-fitness_func) details.libraries");
    expect(await libraries.getAttribute("open")).toBeNull();
    const summary = libraries.locator("summary");
    expect((await summary.textContent())?.trim()).toBe("Libraries you can import");
    await expect.poll(() => libraries.locator("table").isVisible()).toBe(false);
    await summary.click();
    await eventually(() => libraries.locator("table").isVisible()).toBe(true);
    const rows = await libraries
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim())));
    const featured = environment.packages.filter((p: { featured: boolean }) => p.featured);
    expect(rows).toEqual(
      featured.map((p: { name: string; version: string; modules: string[] }) => [
        p.name,
        p.version,
        p.modules.map((m) => `import ${m}`).join("; "),
      ]),
    );
    expect(rows.map((r: string[]) => r[0])).toEqual(expect.arrayContaining(["scikit-learn", "scipy", "pandas", "tensorflow-cpu"]));
    const text = (await libraries.textContent()) ?? "";
    expect(text).toContain(`Python ${environment.python}`);
    expect(text).toContain(`at least ${environment.memory.tensorflow_min_memory_mb} MB`);
    for (const p of environment.packages.filter((p: { featured: boolean }) => !p.featured))
      expect(text).toContain(`${p.name} ${p.version}`);
    await shot(page, "new-submission-libraries");
    expect(errors).toEqual([]);
  });

  it("a run submitted from the form imports scikit-learn", async () => {
    await fillForm(
      page,
      { name: "browser sklearn", num_generations: "3", sol_per_pop: "6", num_parents_mating: "2", num_genes: "1" },
      SKLEARN,
    );
    await eventually(() => page.locator("#f-fitness_func_entry").inputValue()).toBe("fitness");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;
    const done = await waitForStatus(account.key, id);
    expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
    expect(done.source).toBe("web");
    expect(errors).toEqual([]);
  });
});
