// The dashboard in a real browser with what PyGAD fidelity added (docs/dashboard.md#results): a
// two-objective nsga2 run submitted from the form, watched live (a panel per objective), its Pareto front
// chart with hover values and its objectives, a continue of it drawn as a chain on each objective's
// panel, its public page; a three-objective front in parallel coordinates; a run with warnings and a
// violated constraint; per-gene and stop_criteria forms honoured.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, fillForm, launch, person, shot, signIn, typeCode, watchErrors } from "./browser/harness";
import { call, newAccount, waitForStatus } from "./client";

const eventuallyIn30s = <T>(fn: () => Promise<T> | T) => eventually(fn, 30_000);

let browser: Browser;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

// Two objectives (ZDT-like, both maximised), slow enough (~5 ms a solution) to be seen running.
const TWO =
  "import time\nimport numpy\n\n\ndef objectives(ga, solution, idx):\n    time.sleep(0.005)\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";

beforeAll(async () => {
  browser = await launch();
  account = await newAccount();
  const context = await person(browser);
  page = await context.newPage();
  errors = watchErrors(page);
  await signIn(page, account.id);
});
afterAll(async () => {
  await browser?.close();
});

/** Submits the filled form and returns the new submission's id (its page is open). */
async function submit(p: Page): Promise<string> {
  await p.getByRole("button", { name: "Submit" }).click();
  await p.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
  return p.url().split("/").pop()!;
}

/** The text of the result page's fact `label`. */
const fact = (p: Page, label: string) =>
  p
    .locator(".facts div", { has: p.locator("dt", { hasText: new RegExp(`^${label}$`) }) })
    .locator("dd")
    .textContent();

/** Opens the latest result of a submission from its page's run table. */
async function openResult(p: Page, submissionId: string) {
  await p.goto(`/submissions/${submissionId}`);
  await p.locator("table a", { hasText: "result" }).last().click();
  await p.waitForURL(/\/results\/[A-Za-z0-9]{12}$/);
  return p.url().split("/").pop()!;
}

describe("a two-objective run from the form", () => {
  it("runs nsga2 live with a panel per objective, then shows its objectives and an interactive front; a continue overlays each objective's curves", async () => {
    await fillForm(
      page,
      {
        name: "two objectives",
        num_generations: "40",
        sol_per_pop: "20",
        num_parents_mating: "10",
        num_genes: "3",
        random_seed: "7",
        parent_selection_type: "nsga2",
      },
      TWO,
    );
    await eventuallyIn30s(() => page.locator("#f-fitness_func_entry").inputValue()).toBe("objectives");
    const id = await submit(page);

    // Live: the chart grows, one panel per objective, and the line says the best of each objective.
    const panels = new Set<number>();
    const points = new Set<number>();
    const deadline = Date.now() + 60_000;
    let objectivesLine = "";
    while (Date.now() < deadline) {
      // The page reloads itself when the run ends: a look that meets the reload is simply taken again.
      const status = (
        (await page
          .locator('[data-field="status"]')
          .textContent()
          .catch(() => "")) ?? ""
      ).trim();
      if (status === "running") {
        const shown = await page
          .locator('[data-chart="progress-chart"] .chart-panel')
          .count()
          .catch(() => 0);
        if (shown === 2 && !panels.has(2)) await shot(page, "submission-running-objectives").catch(() => undefined);
        panels.add(shown);
        points.add(
          Number(
            (await page
              .locator("[data-live]")
              .getAttribute("data-points")
              .catch(() => null)) ?? 0,
          ),
        );
        if (
          (await page
            .locator('[data-field="fitness-label"]')
            .textContent()
            .catch(() => "")) === "best objectives"
        ) {
          objectivesLine =
            (await page
              .locator('[data-field="fitness"]')
              .textContent()
              .catch(() => "")) ?? "";
        }
      }
      if (status === "succeeded" || status === "failed") break;
      await page.waitForTimeout(150);
    }
    expect(objectivesLine).toMatch(/^-?[\d.e-]+, -?[\d.e-]+$/);
    expect(panels.has(2)).toBe(true);
    expect([...points].filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    await eventuallyIn30s(() => page.locator(".status").first().textContent()).toBe("succeeded");

    const resultId = await openResult(page, id);
    const api = (await call(`/api/v1/results/${resultId}`, { key: account.key })).body;
    expect(api).toMatchObject({ num_objectives: 2, best_solution_fitness: api.best_solution_objectives }); // as PyGAD gives it
    expect(await fact(page, "Objectives")).toBe("2, all maximised");
    expect(await fact(page, "Pareto front")).toBe(`${api.pareto_front_size} solution${api.pareto_front_size === 1 ? "" : "s"}`);
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-4 * Math.abs(b) + 1e-12;
    const shown = (await fact(page, "Best solution's objectives"))!.split(", ").map(Number);
    expect(shown.every((v, i) => close(v, api.best_solution_objectives[i]))).toBe(true);
    expect(await fact(page, "Engine")).toContain("pygad");
    // The front: a scatter plot whose legend shows the hovered solution's two values.
    const front = page.locator(".front-chart");
    await eventuallyIn30s(() => front.locator(".u-over").count()).toBe(1);
    const box = (await front.locator(".u-over").boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    await eventuallyIn30s(() => front.locator(".u-legend .u-series").nth(1).locator(".u-value").textContent()).toMatch(/^-?\d/);
    const hovered = Number(await front.locator(".u-legend .u-series").nth(1).locator(".u-value").textContent());
    const frontFile = await fetch(api.files.find((f: { name: string }) => f.name === "pareto_front.json").url, {
      headers: { Authorization: `Bearer ${account.key}` },
    }).then((r) => r.json());
    expect(frontFile.objectives.some((o: number[]) => close(hovered, o[1]!))).toBe(true);
    // The history: one panel per objective.
    expect(await page.locator('[data-chart="result-chart"] .chart-panel').count()).toBe(2);
    await shot(page, "result-pareto");

    // Continue it: each objective's panel draws the chain (the original and its continuation).
    await page.locator("#cont-gens").fill("5");
    await page.getByRole("button", { name: "Continue from this population" }).click();
    await page.waitForURL(new RegExp(`/submissions/${id}$`));
    await waitForStatus(account.key, id, (s) => s === "succeeded" || s === "failed");
    expect((await call(`/api/v1/submissions/${id}`, { key: account.key })).body.status).toBe("succeeded");
    await openResult(page, id);
    const resultPanels = page.locator('[data-chart="result-chart"] .chart-panel');
    await eventuallyIn30s(() => resultPanels.count()).toBe(2);
    // x, the two results' histories (PyGAD's), and their population maxima (dashed) — and each one's
    // population mean, median and worst of that objective
    for (let i = 0; i < 2; i++) {
      const legend = resultPanels.nth(i).locator(".u-legend .u-series");
      expect(await legend.count()).toBe(11);
      expect(await legend.filter({ hasNotText: /population (mean|median|worst)/ }).count()).toBe(5);
    }
    expect(
      await page
        .locator("details table tbody tr")
        .filter({ hasText: /^objective 1continued from 1/ })
        .count(),
    ).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  });
});

describe("an imported two-objective run", () => {
  it("shows as a run's result: its objectives, the front Allele computed as a scatter plot, a panel per objective saying the curves are PyGAD's", async () => {
    const objectives = [
      [-1, -5],
      [-2, -3],
      [-3, -4],
      [-4, -1],
      [-5, -6],
      [-0.5, -7],
    ]; // front: rows 0, 1, 3, 5
    const population = objectives.map((_, i) => [0.1 * i, -0.1 * i]);
    const created = await call("/api/v1/imports", {
      key: account.key,
      body: {
        name: "pushed nsga2",
        ga_parameters: { num_generations: 5, sol_per_pop: 6, num_parents_mating: 2, num_genes: 2, parent_selection_type: "nsga2" },
        code: {
          fitness_func: "def fitness(ga, solution, idx):\n    return [-float(solution[0] ** 2), -float(solution[1] ** 2)]\n",
          fitness_func_entry: "fitness",
        },
        result: {
          best_solution: population[0],
          best_solution_fitness: objectives[0],
          best_solutions_fitness: Array.from({ length: 6 }, (_, g) => [-3 + g * 0.4, -7 + g]),
          generations_completed: 5,
          last_generation_fitness: objectives,
          population,
        },
      },
    });
    expect(created.status).toBe(201);
    await page.goto(`/results/${created.body.result_id}`);
    expect(await fact(page, "Objectives")).toBe("2, all maximised");
    expect(await fact(page, "Pareto front")).toBe("4 solutions");
    await eventuallyIn30s(() => page.locator(".front-chart .u-over").count()).toBe(1);
    await eventuallyIn30s(() => page.locator('[data-chart="result-chart"] .chart-panel').count()).toBe(2);
    expect(await page.getByText("An imported run's curves are PyGAD's own history").isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });
});

describe("the front's history", () => {
  it("a generation slider draws that generation's population, its front in colour and the rest in grey; the summary says when the front last changed", async () => {
    const two =
      "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]\n";
    const created = await call("/api/v1/submissions/", {
      key: account.key,
      body: {
        name: "front history",
        num_generations: 60,
        sol_per_pop: 20,
        num_parents_mating: 10,
        num_genes: 3,
        random_seed: 4,
        parent_selection_type: "nsga2",
        fitness_func: two,
        fitness_func_entry: "fitness",
      },
    });
    expect((await waitForStatus(account.key, created.body.id)).status).toBe("succeeded");
    const resultId = await openResult(page, created.body.id);
    const api = (await call(`/api/v1/results/${resultId}`, { key: account.key })).body;
    const file = api.files.find((f: { name: string }) => f.name === "pareto_history.json");
    const history = await (await fetch(file.url, { headers: { Authorization: `Bearer ${account.key}` } })).json();
    // 60 generations: every 2nd (the stride doubled past 49 snapshots), 0 and the last kept.
    const generations = history.snapshots.map((s: { generation: number }) => s.generation);
    expect(generations).toEqual(Array.from({ length: 31 }, (_, i) => 2 * i));
    const slider = page.getByRole("slider", { name: "Generation" });
    await eventuallyIn30s(() => slider.isVisible()).toBe(true);
    expect(await slider.getAttribute("max")).toBe("30");
    const chart = page.locator(".front-chart");
    const drawn = async () => ({
      generation: await chart.getAttribute("data-generation"),
      front: Number(await chart.getAttribute("data-front-points")),
      dominated: Number(await chart.getAttribute("data-dominated-points")),
    });
    const expected = (i: number) => ({
      generation: String(generations[i]),
      front: history.snapshots[i].front.length,
      dominated: history.snapshots[i].dominated.length,
    });
    await eventuallyIn30s(drawn).toEqual(expected(30)); // the last generation first
    // By keyboard: Home is generation 0, each arrow one snapshot on.
    await slider.focus();
    await page.keyboard.press("Home");
    await eventuallyIn30s(drawn).toEqual(expected(0));
    expect(await slider.getAttribute("aria-valuetext")).toBe("generation 0");
    expect(await page.locator(".front-slider output").textContent()).toBe(
      `generation 0: ${expected(0).front} on its front, ${expected(0).dominated} dominated`,
    );
    await page.keyboard.press("ArrowRight");
    await eventuallyIn30s(drawn).toEqual(expected(1));
    await slider.fill("15");
    await eventuallyIn30s(drawn).toEqual(expected(15));
    // The points uPlot draws are that snapshot's: grey the dominated, blue the front, red rings the final front.
    const series = await chart.evaluate((el) => [...el.querySelectorAll(".u-legend .u-series th")].map((th) => th.textContent?.trim()));
    expect(series).toEqual(["objective 0", "final front", "dominated at this generation", "front at this generation", "best solution"]);
    // The summary: the last snapshot whose front differs from the one before it.
    const key = (s: { front: number[][] }) => [...new Set(s.front.map((v) => JSON.stringify(v)))].sort().join(";");
    let changed = 0;
    history.snapshots.forEach((s: { generation: number; front: number[][] }, i: number) => {
      if (i > 0 && key(s) !== key(history.snapshots[i - 1])) changed = s.generation;
    });
    expect(await fact(page, "Front last changed")).toBe(
      changed === 0
        ? "in generation 0"
        : `in generation ${changed} (between generations ${changed - 1} and ${changed}: the history holds 31 snapshots)`,
    );
    await shot(page, "result-front-history");
    expect(errors).toEqual([]);
  });
});

describe("a three-objective front", () => {
  it("is drawn as parallel coordinates, one line per solution of the front; hovering a line says its values", async () => {
    const three =
      "import numpy\n\ndef fitness(ga, solution, idx):\n    return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2)), -float(numpy.sum((solution + 1) ** 2))]\n";
    const created = await call("/api/v1/submissions/", {
      key: account.key,
      body: {
        name: "three objectives",
        num_generations: 15,
        sol_per_pop: 16,
        num_parents_mating: 8,
        num_genes: 3,
        random_seed: 3,
        parent_selection_type: "nsga2",
        fitness_func: three,
        fitness_func_entry: "fitness",
      },
    });
    expect((await waitForStatus(account.key, created.body.id)).status).toBe("succeeded");
    await openResult(page, created.body.id);
    const lines = page.locator("svg.parallel polyline.front-line");
    await eventuallyIn30s(() => lines.count()).toBe(Number((await fact(page, "Pareto front"))!.split(" ")[0]));
    expect(await page.locator("svg.parallel polyline.front-line.best").count()).toBe(1);
    // The pointer on a line's point at the middle axis (from the SVG's own coordinates to the screen's).
    const at = await lines.first().evaluate((line: SVGPolylineElement) => {
      const p = line.points.getItem(1);
      const screen = new DOMPoint(p.x, p.y).matrixTransform(line.ownerSVGElement!.getScreenCTM()!);
      return { x: screen.x, y: screen.y };
    });
    await page.mouse.move(at.x - 20, at.y);
    await page.mouse.move(at.x, at.y);
    await eventuallyIn30s(() => page.locator(".front-readout").textContent()).toMatch(
      /^Solution \d+: objective 0 = -?[\d.e-]+, objective 1 = -?[\d.e-]+, objective 2 = -?[\d.e-]+$/,
    );
    // The generation slider drives the parallel coordinates too: that generation's population under the final front.
    const slider = page.getByRole("slider", { name: "Generation" });
    await eventuallyIn30s(() => slider.isVisible()).toBe(true);
    const chart = page.locator(".front-chart");
    expect(await chart.getAttribute("data-generation")).toBe("15");
    await slider.focus();
    await page.keyboard.press("Home");
    await eventuallyIn30s(() => chart.getAttribute("data-generation")).toBe("0");
    const resultId = page.url().split("/").pop();
    const api = (await call(`/api/v1/results/${resultId}`, { key: account.key })).body;
    const file = api.files.find((f: { name: string }) => f.name === "pareto_history.json");
    const history = await (await fetch(file.url, { headers: { Authorization: `Bearer ${account.key}` } })).json();
    expect(history.objectives_shown).toBe(3);
    expect(await page.locator("svg.parallel polyline.population-line.front").count()).toBe(history.snapshots[0].front.length);
    expect(await page.locator("svg.parallel polyline.population-line.dominated").count()).toBe(history.snapshots[0].dominated.length);
    expect(await lines.count()).toBe(Number((await fact(page, "Pareto front"))!.split(" ")[0])); // the final front stays
    await shot(page, "result-parallel");
    expect(errors).toEqual([]);
  });
});

describe("warnings and the forms stock PyGAD accepts, from the form", () => {
  it("a run whose constraint cannot be met shows its warnings with counts and the violation, on the list, the submission and the result", async () => {
    await fillForm(page, {
      name: "impossible constraint",
      num_generations: "10",
      sol_per_pop: "12",
      num_parents_mating: "4",
      num_genes: "4",
      random_seed: "6",
    });
    await page.locator("details.group", { hasText: "Callbacks" }).locator("summary").click();
    await typeCode(page, "gene_constraint", "constraints = [lambda solution, values: [v for v in values if v > 100], None, None, None]\n");
    await eventuallyIn30s(() => page.locator("#f-gene_constraint_entry").inputValue()).toBe("constraints");
    const id = await submit(page);
    await waitForStatus(account.key, id);
    const api = (await call(`/api/v1/submissions/${id}`, { key: account.key })).body;
    expect(api.status).toBe("succeeded");
    const total = api.warnings.reduce((n: number, w: { count: number }) => n + w.count, 0);
    expect(total).toBeGreaterThan(1);
    await page.goto("/submissions");
    await eventuallyIn30s(() => page.locator("tr", { hasText: "impossible constraint" }).locator(".warn-count").textContent()).toBe(
      total.toLocaleString("en"),
    );
    await page.goto(`/submissions/${id}`);
    await eventuallyIn30s(() => page.locator("#warnings tbody tr").count()).toBe(api.warnings.length);
    await openResult(page, id);
    const rows = await page.locator("#warnings tbody tr").allTextContents();
    expect(rows.some((r) => r.includes("mutation_percent_genes"))).toBe(true);
    const counts = await page.locator("#warnings tbody td.num").allTextContents();
    expect(counts.map((c) => Number(c.replace(/,/g, "")))).toEqual(api.warnings.map((w: { count: number }) => w.count));
    expect(await page.locator("#constraint-violations").textContent()).toContain("violates its gene_constraint at gene 0");
    expect(await fact(page, "Gene constraints")).toBe("violated at 1 gene");
    await shot(page, "result-warnings");
  });

  it("per-gene ranges, a gene_type precision and stop criteria entered in the form are honoured on the result", async () => {
    await fillForm(page, {
      name: "per gene",
      num_generations: "30",
      sol_per_pop: "12",
      num_parents_mating: "4",
      num_genes: "4",
      random_seed: "2",
      init_range_low: "0, 1, 2, 3",
      init_range_high: "0.5, 1.5, 2.5, 3.5",
      // Mutation replaces a gene with a value of its own range: every gene stays in its window.
      mutation_by_replacement: "true",
      random_mutation_min_val: "0, 1, 2, 3",
      random_mutation_max_val: "[0.5, 1.5, 2.5, 3.5]",
      gene_type: '["float", 2]',
      stop_criteria: "evaluations_40, reach_1e3",
    });
    const id = await submit(page);
    await waitForStatus(account.key, id);
    const resultId = await openResult(page, id);
    const api = (await call(`/api/v1/results/${resultId}`, { key: account.key })).body;
    expect(api.parameters).toMatchObject({
      init_range_low: [0, 1, 2, 3],
      random_mutation_max_val: [0.5, 1.5, 2.5, 3.5],
      gene_type: ["float", 2],
      stop_criteria: ["evaluations_40", "reach_1e3"],
    });
    // 12 evaluations at first, then 11 new offspring a generation: 40 reached after 3 generations.
    expect(await fact(page, "Stopped because")).toBe("stop_criteria");
    expect(await fact(page, "Generations completed")).toBe("3");
    const genes = (await page.locator("table.genes tbody tr td:nth-child(2)").allTextContents()).map(Number);
    expect(genes).toHaveLength(4);
    genes.forEach((g, i) => {
      expect(g).toBeGreaterThanOrEqual(i);
      expect(g).toBeLessThanOrEqual(i + 0.5);
      expect(Math.abs(g * 100 - Math.round(g * 100))).toBeLessThan(1e-9); // two decimals
    });
    expect(genes).toEqual(api.best_solution);
    expect(errors).toEqual([]);
  });
});

describe("the shared page of a multi-objective result", () => {
  it("opens signed out with the front chart and the objectives", async () => {
    const [result] = (await call("/api/v1/results/?ordering=created_at&page_size=1", { key: account.key })).body.results;
    expect(result.num_objectives).toBe(2);
    await page.goto(`/results/${result.id}`);
    await page.getByRole("button", { name: "Share publicly" }).click();
    const url = (await page.locator("#public-link").getAttribute("href"))!;
    const stranger = await person(browser);
    const anon = await stranger.newPage();
    const anonErrors = watchErrors(anon);
    expect((await anon.goto(url))!.status()).toBe(200);
    await eventuallyIn30s(() => anon.locator(".front-chart .u-over").count()).toBe(1);
    expect(await anon.locator('[data-chart="shared-chart"] .chart-panel').count()).toBe(2);
    expect(await fact(anon, "Objectives")).toBe("2, all maximised");
    expect(await anon.content()).not.toContain("time.sleep");
    expect(anonErrors).toEqual([]);
    await stranger.close();
  });
});
