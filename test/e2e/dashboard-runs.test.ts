// The dashboard in a real browser: submit from the form and watch the run live, field errors, cancel,
// continue with overlaid curves, rename / share / unshare, and the page weight and render time of the
// main pages (measured and reported, never asserted).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { LOCAL_CAPACITY, ROOT } from "../../scripts/lib.mjs";
import { eventually, fillForm, launch, person, shot, signIn, typeCode, watchErrors } from "./browser/harness";
import { call, newAccount, waitForStatus } from "./client";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
let account: { id: string; key: string };

/** Waits for a value like a person looking at the page (up to 20 s). */

/** A fitness that takes ~0.1 s per generation, so a 60-generation run is seen running for a few seconds. */
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

describe("the new-submission form and a live run", () => {
  it("submits (source web), shows queued → running → succeeded, and the chart grows while it runs", async () => {
    // Every run place of the platform is taken first, so the new run is seen waiting (queued) for one.
    const blockers = await newAccount();
    await call(`/admin/v1/accounts/${blockers.id}`, {
      method: "PATCH",
      token: inject("adminToken"),
      body: { overrides: { concurrent_submissions: 100, inflight_api_runs: 100 } },
    });
    const blocking: string[] = [];
    for (let i = 0; i < LOCAL_CAPACITY; i++) {
      const res = await call("/api/v1/submissions/", {
        key: blockers.key,
        body: {
          name: "blocker",
          num_generations: 5000,
          sol_per_pop: 10,
          num_parents_mating: 4,
          num_genes: 2,
          fitness_func: SLOW,
          fitness_func_entry: "fitness",
        },
      });
      blocking.push(res.body.id);
    }
    for (const id of blocking) await waitForStatus(blockers.key, id, (s) => s === "running");
    await fillForm(
      page,
      { name: "browser sphere", num_generations: "60", sol_per_pop: "10", num_parents_mating: "4", num_genes: "4" },
      SLOW.replace("def fitness", "def my_fitness"),
    );
    // The entry symbol was suggested from the code.
    await eventually(() => page.locator("#f-fitness_func_entry").inputValue()).toBe("my_fitness");
    await shot(page, "new-submission");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;

    const statuses = new Set<string>([(await page.locator('[data-field="status"]').textContent())!.trim()]);
    expect(statuses).toEqual(new Set(["queued"]));
    await shot(page, "submission-queued");
    // A place frees: the waiting run starts.
    for (const id of blocking) await call(`/api/v1/submissions/${id}/cancel`, { key: blockers.key, method: "POST" });
    const points = new Set<number>();
    // The runs table while the run is live: its generations and best fitness, refreshed without a reload.
    const liveRows = new Set<string>();
    const deadline = Date.now() + 60_000;
    let sawRunningShot = false;
    while (Date.now() < deadline) {
      const status =
        (await page
          .locator('[data-field="status"]')
          .textContent()
          .catch(() => null)) ?? "";
      statuses.add(status.trim());
      const n = Number(
        (await page
          .locator("[data-live]")
          .getAttribute("data-points")
          .catch(() => null)) ?? NaN,
      );
      if (Number.isFinite(n)) points.add(n);
      if (status.trim() === "running") {
        const cells = page.locator("#runs-table tbody tr").first();
        const generations = (
          (await cells
            .locator("[data-cell=generations]")
            .textContent()
            .catch(() => "")) ?? ""
        ).trim();
        const fitness = (
          (await cells
            .locator("[data-cell=fitness]")
            .textContent()
            .catch(() => "")) ?? ""
        ).trim();
        if (/^[1-9]\d* of 60$/.test(generations) && generations !== "60 of 60" && fitness !== "—") liveRows.add(generations);
      }
      if (status.trim() === "running" && n >= 2 && !sawRunningShot) {
        await shot(page, "submission-running");
        sawRunningShot = true;
      }
      if (status.trim() === "succeeded") break;
      await page.waitForTimeout(150);
    }
    expect([...statuses]).toEqual(expect.arrayContaining(["queued", "running", "succeeded"]));
    expect(liveRows.size).toBeGreaterThanOrEqual(1);
    // The live chart grew: it showed at least two different numbers of points while running.
    expect([...points].filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    await eventually(() => page.locator(".status").first().textContent()).toBe("succeeded");
    // generation, the best fitness, and the population's mean, median and worst.
    await eventually(() => page.locator(".u-legend .u-series").count()).toBe(5);
    const api = await call(`/api/v1/submissions/${id}`, { key: account.key });
    expect(api.body).toMatchObject({ source: "web", status: "succeeded" });
    await shot(page, "submission");
    expect(errors).toEqual([]);
  });

  it("the result's chart shows the population's mean and median with a band, and switches its scale", async () => {
    const done = await call("/api/v1/results/?page_size=1", { key: account.key });
    const resultId = done.body.results[0].id as string;
    const result = (await call(`/api/v1/results/${resultId}`, { key: account.key })).body;
    expect(result.population_history.length).toBe(result.generations_completed + 1);
    await page.goto(`/results/${resultId}`);
    const legend = page.locator("#result-chart-wrap .u-legend, [data-chart] ~ * .u-legend, .u-legend").first();
    await eventually(async () => (await legend.locator(".u-series").allTextContents()).join(" | ")).toContain("population median");
    const labels = (await legend.locator(".u-series").allTextContents()).join(" | ");
    expect(labels).toContain("population mean");
    expect(labels).toContain("population worst");
    const chart = page.locator("[data-chart]").first();
    expect(await chart.getAttribute("data-scale")).toBe("linear");
    await page.getByRole("button", { name: "Symlog" }).click();
    await eventually(() => chart.getAttribute("data-scale")).toBe("symlog");
    await page.getByRole("button", { name: "Distance to best" }).click();
    await eventually(() => chart.getAttribute("data-scale")).toBe("distance");
    expect(await page.getByRole("button", { name: "Distance to best" }).getAttribute("aria-pressed")).toBe("true");
    expect(await chart.locator(".chart-panel").first().getAttribute("data-y-label")).toBe("distance to best (best fitness)");
    await shot(page, "result-chart-distance");
    await page.getByRole("button", { name: "Log", exact: true }).click();
    await eventually(() => chart.getAttribute("data-scale")).toBe("log");
    expect(errors).toEqual([]);
  });

  it("the editor shows a syntax error before submitting, and indents by 4", async () => {
    await page.goto("/submissions/new");
    const note = page.locator("#f-fitness_func-syntax");
    // The template parses: no mark, no message.
    expect(await note.isHidden()).toBe(true);
    expect(await page.locator(".cm-syntax-error").count()).toBe(0);
    await typeCode(page, "fitness_func", "import numpy\n\ndef fitness(ga, solution, idx)\n    return -float(numpy.sum(solution ** 2))\n");
    await eventually(() => note.textContent()).toContain("Syntax error on line 3");
    expect(await page.locator(".cm-syntax-error").count()).toBeGreaterThan(0);
    await shot(page, "editor-syntax-error");
    // Fixed: the message goes.
    await typeCode(page, "fitness_func", "def fitness(ga, solution, idx):\n    return 1.0\n");
    await eventually(() => note.isHidden()).toBe(true);
    // A new line after a block's header is indented by four spaces.
    const editor = page.locator(".code-field:has(#f-fitness_func) .cm-content");
    await editor.click();
    await page.keyboard.press("Control+A");
    await page.keyboard.press("Delete");
    await page.keyboard.type("def g(ga, s, i):");
    await page.keyboard.press("Enter");
    await page.keyboard.type("return 1");
    expect(await page.locator("#f-fitness_func").inputValue()).toBe("def g(ga, s, i):\n    return 1");
  });

  it("the form's default template, submitted as it is, runs without a warning", async () => {
    await page.goto("/submissions/new");
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const done = await waitForStatus(account.key, page.url().split("/").pop()!);
    expect(done.status).toBe("succeeded");
    expect(done.warnings).toEqual([]);
  });

  it("a bad field shows its error next to the field and creates nothing", async () => {
    const before = (await call("/api/v1/submissions/?page_size=100", { key: account.key })).body.results.length;
    await fillForm(page, { sol_per_pop: "1", num_genes: "four" });
    await page.getByRole("button", { name: "Submit" }).click();
    await eventually(() => page.locator("#f-sol_per_pop-error").textContent()).toContain("must be at least 2");
    await eventually(() => page.locator("#form-errors").textContent()).toContain("Solutions per population must be at least 2");
    await eventually(() => page.locator("#f-num_genes-error").textContent()).toContain("must be a number");
    expect(await page.locator("#f-num_genes").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#f-num_genes").getAttribute("aria-describedby")).toContain("f-num_genes-error");
    await shot(page, "form-errors");
    expect(page.url()).toMatch(/\/submissions\/new$/);
    expect((await call("/api/v1/submissions/?page_size=100", { key: account.key })).body.results.length).toBe(before);
  });

  it("cancels a running run", async () => {
    await fillForm(page, { name: "to cancel", num_generations: "2000", sol_per_pop: "10", num_parents_mating: "4", num_genes: "4" }, SLOW);
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/submissions\/[A-Za-z0-9]{12}$/);
    const id = page.url().split("/").pop()!;
    await waitForStatus(account.key, id, (s) => s === "running");
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Cancel run" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("cancelled");
    await eventually(() => page.locator(".status").first().textContent()).toBe("cancelled");
    expect((await call(`/api/v1/submissions/${id}`, { key: account.key })).body.status).toBe("cancelled");
  });
});

describe("the live trail", () => {
  it("holds every generation of a finished run, from generation 0, as the page's poll gets it", async () => {
    const created = await call("/api/v1/submissions/", {
      key: account.key,
      body: {
        name: "every generation",
        num_generations: 300,
        sol_per_pop: 10,
        num_parents_mating: 4,
        num_genes: 3,
        random_seed: 2,
        // ~10 ms a generation: ~25 generations between the GA's progress messages, ~150 between reports
        fitness_func: SLOW.replace("time.sleep(0.01)", "time.sleep(0.001)"),
        fitness_func_entry: "fitness",
      },
    });
    expect((await waitForStatus(account.key, created.body.id)).status).toBe("succeeded");
    const res = await page.request.get(`/submissions/${created.body.id}/live`, { headers: { Accept: "application/json" } });
    expect(res.status()).toBe(200);
    const live = await res.json();
    expect(live.points).toBe(301);
    const [best, mean, median, worst] = live.panels[0].series;
    expect(best.points.map((p: [number, number]) => p[0])).toEqual(Array.from({ length: 301 }, (_, g) => g));
    for (const curve of [mean, median, worst]) expect(curve.points).toHaveLength(301); // the population's statistics too
    // The trail's points are the result's own history: its best fitness per generation.
    const listed = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key: account.key })).body.results[0];
    const result = (await call(`/api/v1/results/${listed.id}`, { key: account.key })).body;
    expect(best.points.map((p: [number, number]) => p[1])).toEqual(result.best_solutions_fitness);
  });
});

describe("results", () => {
  let resultId: string;

  it("continues a result and shows the curves of the chain on one chart", async () => {
    const created = await call("/api/v1/submissions/", {
      key: account.key,
      body: {
        name: "chain",
        num_generations: 15,
        sol_per_pop: 10,
        num_parents_mating: 4,
        num_genes: 3,
        random_seed: 1,
        fitness_func: SLOW.replace("time.sleep(0.01)", "pass"),
        fitness_func_entry: "fitness",
      },
    });
    await waitForStatus(account.key, created.body.id);
    const first = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key: account.key })).body.results[0];
    await page.goto(`/results/${first.id}`);
    await page.locator("#cont-gens").fill("10");
    await page.getByRole("button", { name: "Continue from this population" }).click();
    await page.waitForURL(new RegExp(`/submissions/${created.body.id}$`));
    await waitForStatus(account.key, created.body.id, (s) => s === "succeeded" || s === "failed");
    const results = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key: account.key })).body.results;
    expect(results).toHaveLength(2);
    resultId = results[0].id; // newest: the continued one
    await page.goto(`/results/${resultId}`);
    // Two curves (the original and its continuation) on one chart: x, then one series each — and each
    // one's population mean, median and worst after them.
    await eventually(() => page.locator(".u-legend .u-series").count()).toBe(9);
    expect(await page.locator(".u-legend .u-series", { hasNotText: "population" }).count()).toBe(3);
    const table = await page.locator("details table tbody tr").allTextContents();
    expect(table.some((row) => row.startsWith("continued from 1") && row.includes("15"))).toBe(true);
    // Hovering the chart shows the values in the legend.
    const box = (await page.locator(".u-over").boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2);
    await eventually(() => page.locator(".u-legend .u-series").nth(2).locator(".u-value").textContent()).not.toBe("--");
    await shot(page, "result");
  });

  it("renames, shares (the public page opens signed out) and unshares (it 404s)", async () => {
    await page.goto(`/results/${resultId}`);
    await page.locator("#rename").fill("chained sphere");
    await page.getByRole("button", { name: "Rename" }).click();
    await eventually(() => page.locator("h1").textContent()).toBe("chained sphere");
    await page.getByRole("button", { name: "Share publicly" }).click();
    const url = (await page.locator("#public-link").getAttribute("href"))!;
    const stranger = await person(browser);
    const anon = await stranger.newPage();
    const opened = await anon.goto(url);
    expect(opened!.status()).toBe(200);
    expect(await anon.locator("h1").textContent()).toBe("chained sphere");
    expect(await anon.content()).not.toContain("numpy");
    await shot(anon, "shared-result");
    await page.getByRole("button", { name: "Stop sharing" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("No longer shared");
    const gone = await anon.goto(url);
    expect(gone!.status()).toBe(404);
    expect(await anon.locator(".reqid").textContent()).toMatch(/^req_[0-9a-f]{32}$/);
    await stranger.close();
  });
});

describe("page weight and render time", () => {
  it("measures each main page: bytes transferred and time to render (reported in .wrangler/test-reports)", async () => {
    const submissions = (await call("/api/v1/submissions/?page_size=1", { key: account.key })).body.results;
    const results = (await call("/api/v1/results/?page_size=1", { key: account.key })).body.results;
    const pages = [
      "/submissions",
      "/submissions/new",
      `/submissions/${submissions[0].id}`,
      "/results",
      `/results/${results[0].id}`,
      "/webhooks",
      "/account",
    ];
    const report: Record<string, unknown>[] = [];
    for (const cold of [true, false]) {
      for (const path of pages) {
        const ctx = cold ? await person(browser) : context;
        const p = cold ? await ctx.newPage() : page;
        if (cold) {
          // A cold cache: cookies copied, nothing else.
          await ctx.addCookies(await context.cookies());
        }
        await p.goto(path, { waitUntil: "load" });
        const m = await p.evaluate(() => {
          const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
          const res = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
          const fcp = performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null;
          return {
            html_bytes: nav.encodedBodySize,
            transferred_bytes: nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0),
            decoded_bytes: nav.decodedBodySize + res.reduce((n, r) => n + r.decodedBodySize, 0),
            resources: res.length,
            response_ms: Math.round(nav.responseEnd - nav.startTime),
            first_contentful_paint_ms: fcp === null ? null : Math.round(fcp),
            load_ms: Math.round(nav.loadEventEnd - nav.startTime),
          };
        });
        report.push({ path: path.replace(/[A-Za-z0-9]{12}$/, "{id}"), cache: cold ? "cold" : "warm", ...m });
        if (cold) await ctx.close();
      }
    }
    mkdirSync(join(ROOT, ".wrangler", "test-reports"), { recursive: true });
    const out = join(ROOT, ".wrangler", "test-reports", "dashboard-pages.json");
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.table(report);
    expect(report.every((r) => (r.transferred_bytes as number) > 0)).toBe(true);
  });
});

describe("phone width and keyboard", () => {
  it("the pages fit a 390-pixel screen and the form is usable with the keyboard alone", async () => {
    const phone = await person(browser, { phone: true });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    for (const path of ["/submissions", "/submissions/new", "/account", "/webhooks"]) {
      await p.goto(path);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await shot(p, "phone-new-submission", false);
    // The navigation is one line with a Menu; the menu opens the links.
    const header = await p.locator("header.top").boundingBox();
    expect(header!.height).toBeLessThan(60);
    expect(await p.locator("#main-nav").isVisible()).toBe(false);
    await p.locator(".menu-button").click();
    expect(await p.locator("#main-nav").isVisible()).toBe(true);
    expect(await p.getByRole("link", { name: "Results" }).isVisible()).toBe(true);
    // A result: its key numbers and its chart on the first screen (390 × 844).
    const resultId = (await call("/api/v1/results/?page_size=1", { key: account.key })).body.results[0].id as string;
    await p.goto(`/results/${resultId}`);
    await eventually(() => p.locator("[data-chart] .u-wrap").count()).toBeGreaterThan(0);
    const numbers = await p.locator(".key-numbers").boundingBox();
    const chart = await p.locator("[data-chart]").first().boundingBox();
    expect(numbers!.y + numbers!.height).toBeLessThanOrEqual(844);
    expect(chart!.y).toBeLessThan(844); // the chart's top within the first screen
    // its plot too (the legend may run below): the canvas's top half is on the first screen
    const plot = await p.locator("[data-chart] canvas").first().boundingBox();
    expect(plot!.y + plot!.height / 2).toBeLessThanOrEqual(844);
    await shot(p, "phone-result", false);
    // Keyboard: the skip link comes first, then the navigation; every control has a label.
    await p.goto("/submissions/new");
    await p.keyboard.press("Tab");
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    const unlabelled = await p.evaluate(() =>
      [...document.querySelectorAll("input:not([type=hidden]), select, textarea:not([hidden])")]
        .filter((el) => {
          const id = el.id;
          return (
            !(id && document.querySelector(`label[for="${id}"]`)) &&
            !el.closest("label") &&
            !el.getAttribute("aria-label") &&
            !el.getAttribute("aria-labelledby")
          );
        })
        .map((el) => (el as HTMLInputElement).name),
    );
    expect(unlabelled).toEqual([]);
    // The focused control shows a visible outline.
    await p.locator("#f-name").focus();
    await p.keyboard.press("Tab");
    const outline = await p.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe("none");
    await phone.close();
  });
});
