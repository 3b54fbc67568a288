// The dashboard's browser tests: a real headless Chromium (Debian's `chromium`, installed by .ci/run)
// driven by playwright-core, which never downloads a browser of its own. One browser per test file, a
// fresh context (cookies) per person.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect, inject } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { ROOT } from "../../../scripts/lib.mjs";
import { baseUrl } from "../client";

/** Where the browser is: CHROMIUM_PATH, or Debian's package. */
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
/** Screenshots the tests take of the main pages (the best are copied to docs/screenshots/). */
export const SHOTS = join(ROOT, ".wrangler", "screenshots");

/** Polls `fn` until its assertion holds (pages update from live data and background requests). */
export const eventually = <T>(fn: () => Promise<T> | T, timeout = 20_000) => expect.poll(fn, { timeout, interval: 100 });

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set CHROMIUM_PATH`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    // Root needs --no-sandbox; the rest keeps Chromium off the network (this machine reaches none of its hosts).
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

/** A fresh browser profile (no cookies), at desktop or phone width. */
export async function person(browser: Browser, opts: { phone?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    baseURL: baseUrl(),
    viewport: opts.phone ? { width: 390, height: 844 } : { width: 1280, height: 900 },
    deviceScaleFactor: 1,
    permissions: ["clipboard-read", "clipboard-write"],
  });
  context.setDefaultTimeout(20_000);
  return context;
}

/** A one-time sign-in link for the account, made through the admin API. */
export async function signInLink(accountId: string): Promise<string> {
  const res = await fetch(`${baseUrl()}/admin/v1/accounts/${accountId}/sign-in-links`, {
    method: "POST",
    headers: { Authorization: `Bearer ${inject("adminToken")}`, "Content-Type": "application/json" },
    body: "{}",
  });
  if (res.status !== 201) throw new Error(`sign-in link: ${res.status} ${await res.text()}`);
  return (await res.json()).url;
}

/** Signs the page's context in with a one-time link (the quick way for tests about something else). */
export async function signIn(page: Page, accountId: string): Promise<void> {
  await page.goto(await signInLink(accountId));
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/submissions$/);
}

export async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

/** Errors the page's own scripts threw (a test fails on any). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    // A page the test expects to fail (a 404) logs "Failed to load resource"; that is not a script error.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text());
  });
  return errors;
}

/** Types into a code field's editor like a person: everything selected, deleted, the new text typed. */
export async function typeCode(page: Page, field: string, code: string): Promise<void> {
  const editor = page.locator(`.code-field:has(#f-${field}) .cm-content`);
  await editor.click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await editor.fill(code);
}

/**
 * Fills the new-submission form: text fields by name (a select's by its value), the fitness function
 * through its editor. A field in a closed group is opened first, as a person would.
 */
export async function fillForm(page: Page, fields: Record<string, string>, code?: string): Promise<void> {
  await page.goto("/submissions/new");
  for (const [name, value] of Object.entries(fields)) {
    const field = page.locator(`#f-${name}`);
    const group = page.locator("details.group", { has: field });
    if ((await group.getAttribute("open")) === null) await group.locator("summary").click();
    if ((await field.evaluate((el) => el.tagName)) === "SELECT") await field.selectOption(value);
    else await field.fill(value);
  }
  if (code !== undefined) await typeCode(page, "fitness_func", code);
}
