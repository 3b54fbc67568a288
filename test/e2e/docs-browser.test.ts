// /docs in a real headless Chromium (Debian's chromium, driven by playwright-core; test/e2e/browser/):
// the page loads with no request leaving this origin, the key entered under "Authorize" is used by "Try it
// out" on this same origin and is NOT kept in the browser's storage: after a reload it is gone and must be
// entered again (docs/architecture.md#openapi).
// First, without the browser: `wrangler dev` serves Swagger UI's files from the static assets (dist/web/docs).
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, launch, person, shot, watchErrors } from "./browser/harness";
import { baseUrl, job, newAccount } from "./client";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** Expands an operation (Swagger UI's id: `operations-<tag>-<operationId>`) and presses Execute; its live answer. */
async function execute(page: Page, tag: string, operationId: string, path: string) {
  const block = page.locator(`#operations-${tag.replace(/ /g, "_")}-${operationId}`);
  if (!(await block.locator("button.execute").isVisible())) await block.locator(".opblock-summary-control").click();
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/v1${path}`);
  await block.locator("button.execute").click();
  const response = await answer;
  await eventually(() => block.locator(".live-responses-table tbody .response-col_status").first().textContent()).toContain(
    String(response.status()),
  );
  return { block, response };
}

/** Authorize with the key (the dialog of the page's Authorize button). */
async function authorize(page: Page, key: string) {
  await page.getByRole("button", { name: "Authorize" }).first().click();
  const dialog = page.locator(".modal-ux");
  await dialog.locator("input").first().fill(key);
  await dialog.getByRole("button", { name: "Apply credentials" }).click();
  await eventually(() => dialog.getByRole("button", { name: "Remove authorization" }).count()).toBe(1);
  await dialog.getByRole("button", { name: "Close" }).click();
}

describe("/docs's files", () => {
  it("are served on this origin: the page and its configuration by the Worker under a 'self' policy, Swagger UI's files by the static assets", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const page = await fetch(`${baseUrl()}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get("Content-Security-Policy"), path).toMatch(/^default-src 'self';/);
      const urls = [...(await page.text()).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => url !== "data:,");
      expect(urls).toEqual(["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/init.js"]);
    }
    const types: Record<string, RegExp> = {
      "/docs/swagger-ui.css": /^text\/css/,
      "/docs/swagger-ui-bundle.js": /^(?:text|application)\/javascript/,
      "/docs/init.js": /^text\/javascript/,
      "/docs/swagger-ui-bundle.js.LICENSE.txt": /^text\/plain/,
      "/docs/LICENSE.swagger-ui.txt": /^text\/plain/,
      "/docs/NOTICE.swagger-ui.txt": /^text\/plain/,
    };
    for (const [path, type] of Object.entries(types)) {
      const file = await fetch(`${baseUrl()}${path}`);
      expect(file.status, path).toBe(200);
      expect(file.headers.get("Content-Type"), path).toMatch(type);
      expect((await file.text()).length, path).toBeGreaterThan(path === "/docs/NOTICE.swagger-ui.txt" ? 10 : 200);
    }
    expect(await (await fetch(`${baseUrl()}/docs/swagger-ui-bundle.js`)).text()).toContain("SwaggerUIBundle");
    expect(await (await fetch(`${baseUrl()}/docs/LICENSE.swagger-ui.txt`)).text()).toContain("Apache License");
  });
});

describe("/docs in a browser", () => {
  it("loads with every request on this origin; Authorize, and Try it out calls this origin with the key; the key is not kept across a reload", {
    timeout: 120_000,
  }, async () => {
    const account = await newAccount();
    const origin = new URL(baseUrl()).origin;
    const context = await person(browser);
    const requests: Request[] = [];
    const failed: string[] = [];
    context.on("request", (r) => requests.push(r));
    context.on("requestfailed", (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    const page = await context.newPage();
    // A request to another origin would also be refused by the page's Content-Security-Policy, which the
    // browser reports on the console ("Refused to load …"): watchErrors makes that a failure too.
    const errors = watchErrors(page);

    await page.goto("/docs");
    await eventually(() => page.locator(".information-container .title").textContent()).toContain("Allele API");
    await eventually(() => page.locator(".opblock").count()).toBeGreaterThan(30);
    const loaded = requests.map((r) => r.url());
    expect(loaded).toEqual(
      expect.arrayContaining([
        `${origin}/docs`,
        `${origin}/docs/swagger-ui.css`,
        `${origin}/docs/swagger-ui-bundle.js`,
        `${origin}/docs/init.js`,
        `${origin}/api/v1/openapi.json`,
      ]),
    );
    const elsewhere = loaded.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:") && !url.startsWith("blob:"));
    expect(elsewhere, "requests that left the origin").toEqual([]);
    await shot(page, "docs", false);

    await authorize(page, account.key);

    // Try it out: GET /account, on this origin, with the key.
    const own = await execute(page, "Account", "getAccount", "/account");
    expect(own.response.status()).toBe(200);
    expect(own.response.request().headers().authorization).toBe(`Bearer ${account.key}`);
    expect(new URL(own.response.url()).origin).toBe(origin);
    expect(await own.response.json()).toMatchObject({ id: account.id });
    await eventually(() => own.block.locator(".live-responses-table tbody .response-col_description").first().textContent()).toContain(
      account.id,
    );
    await shot(page, "docs-try-it", false);

    // The key is NOT kept: nothing of it is in the origin's storage, and after a reload a call goes without
    // it (401) until it is entered again; then a write works (its body is the example job).
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
    expect(stored).not.toContain(account.key);
    await page.reload();
    await eventually(() => page.locator(".opblock").count()).toBeGreaterThan(30);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).not.toContain(account.key);
    const block = page.locator("#operations-Submissions-createSubmission");
    await block.locator(".opblock-summary-control").click();
    await block.locator("textarea.body-param__text").fill(JSON.stringify(job({ name: "from /docs" })));
    const without = await execute(page, "Submissions", "createSubmission", "/submissions");
    expect(without.response.status()).toBe(401);
    expect(without.response.request().headers().authorization).toBeUndefined();
    await authorize(page, account.key);
    const created = await execute(page, "Submissions", "createSubmission", "/submissions");
    expect(created.response.status()).toBe(202);
    expect(created.response.request().headers().authorization).toBe(`Bearer ${account.key}`);
    expect(await created.response.json()).toMatchObject({ status: "queued", name: "from /docs" });

    expect(
      requests.map((r) => r.url()).filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:") && !url.startsWith("blob:")),
    ).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
