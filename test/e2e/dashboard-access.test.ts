// The dashboard in a real browser: sign in with a key and with a one-time link, sign out; a sign-in's
// `next` never takes the browser to another site; a session of account A cannot open account B's pages;
// API keys created (shown once) and revoked; and the unmodified Vilvik SDK's `vilvik.login()` completing
// once its code is approved in the browser, also when it polls faster than the interval.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { SDK_PYTHON } from "../../scripts/lib.mjs";
import { eventually, launch, person, shot, signIn, signInLink, watchErrors } from "./browser/harness";
import { baseUrl, call, job, newAccount, waitForStatus } from "./client";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("sign in and out", () => {
  it("with an API key: the session starts, the cookie is HttpOnly; sign-out ends it", async () => {
    const account = await newAccount();
    const context = await person(browser);
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto("/");
    await page.waitForURL(/\/sign-in$/);
    await shot(page, "sign-in");
    await page.getByLabel("API key").fill(`alk_wrongwro_${"x".repeat(40)}`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await eventually(() => page.getByRole("alert").textContent()).toContain("not valid");
    await page.getByLabel("API key").fill(account.key);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/submissions$/);
    const cookie = (await context.cookies()).find((c) => c.name === "__Host-allele_session")!;
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Lax", path: "/" });
    expect(await page.evaluate(() => document.cookie)).not.toContain("allele_session");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in$/);
    await eventually(() => page.getByRole("status").textContent()).toContain("signed out");
    await page.goto("/account");
    await page.waitForURL(/\/sign-in\?next=%2Faccount$/);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("with a one-time link: one click signs in, the link then no longer works", async () => {
    const account = await newAccount();
    const link = await signInLink(account.id);
    const context = await person(browser);
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/submissions$/);
    await page.goto("/account");
    expect(await page.locator(".facts").first().textContent()).toContain(account.id);
    const other = await person(browser);
    const again = await (await other.newPage()).goto(link);
    expect(again!.status()).toBe(410);
    await other.close();
    await context.close();
  });
});

describe("sign-in redirects", () => {
  it("signing in from /sign-in?next=/%09/evil.example/x stays on this site; so does a signed-in visit of it", async () => {
    // A browser strips the TAB: `/<TAB>/evil.example/x` is `//evil.example/x`, another site.
    const account = await newAccount();
    const origin = new URL(baseUrl()).origin;
    const context = await person(browser);
    const left: string[] = [];
    context.on("request", (r) => {
      if (!r.url().startsWith(`${origin}/`) && !r.url().startsWith("data:")) left.push(r.url());
    });
    const page = await context.newPage();
    const errors = watchErrors(page);
    const shown = await page.goto("/sign-in?next=/%09/evil.example/x");
    expect(shown!.status()).toBe(400);
    expect(await page.getByRole("alert").textContent()).toContain("control character");
    expect(await page.locator('input[name="next"]').inputValue()).toBe("/submissions");
    await page.getByLabel("API key").fill(account.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${origin}/submissions`);
    const again = await page.goto("/sign-in?next=/%09/evil.example/x");
    expect(again!.status()).toBe(400);
    expect(new URL(page.url()).origin).toBe(origin);
    await page.goto("/sign-in?next=//evil.example/x");
    await page.waitForURL(`${origin}/submissions`);
    await page.goto("/sign-in?next=/%5Cevil.example/x");
    await page.waitForURL(`${origin}/submissions`);
    expect(left, "requests that left the site").toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("accounts are apart", () => {
  it("a session of account A gets 404 pages for account B's submission, result and webhook", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const created = await call("/api/v1/submissions/", { key: b.key, body: job() });
    await waitForStatus(b.key, created.body.id);
    const result = (await call(`/api/v1/results/?submission_id=${created.body.id}`, { key: b.key })).body.results[0];
    const hook = await call("/api/v1/webhooks", { key: b.key, body: { url: "http://127.0.0.1:9/x", events: ["submission.succeeded"] } });
    const context = await person(browser);
    const page = await context.newPage();
    await signIn(page, a.id);
    for (const path of [`/submissions/${created.body.id}`, `/results/${result.id}`, `/webhooks/${hook.body.id}`]) {
      const res = await page.goto(path);
      expect(res!.status(), path).toBe(404);
      expect(await page.locator("h1").textContent()).toBe("Not found");
      expect(await page.locator(".reqid").textContent()).toBe(res!.headers()["x-request-id"]);
    }
    await shot(page, "not-found");
    await context.close();
  });
});

describe("API keys", () => {
  it("creates a key (shown once, with a copy button), lists it by prefix, and revokes it", async () => {
    const account = await newAccount();
    const context = await person(browser);
    const page = await context.newPage();
    await signIn(page, account.id);
    await page.goto("/account");
    await page.getByLabel("Name", { exact: true }).fill("ci reader");
    await page.getByLabel("results:read").check();
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.locator("#new-key").textContent())!.trim();
    expect(key).toMatch(/^alk_[0-9A-Za-z]{8}_[0-9A-Za-z]{40}$/);
    await page.getByRole("button", { name: "Copy key" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot(page, "account");
    expect((await call("/api/v1/results/", { key })).status).toBe(200);
    expect((await call("/api/v1/submissions/", { key })).status).toBe(403);
    await page.goto("/account");
    expect(await page.content()).not.toContain(key);
    page.once("dialog", (d) => void d.accept());
    await page
      .locator(`tr[data-key="${key.slice(0, 12)}"]`)
      .getByRole("button", { name: "Revoke" })
      .click();
    await eventually(() => page.locator(".flash").textContent()).toContain("revoked");
    expect((await call("/api/v1/results/", { key })).status).toBe(401);
    await context.close();
  });
});

/**
 * The unmodified SDK's `vilvik.login()` in its own process (its own HOME, so its saved key is its own),
 * with `login`'s keyword arguments; once it printed the code, its output so far, the URL and the code.
 */
async function sdkLogin(args = "") {
  const home = mkdtempSync(join(tmpdir(), "allele-vilvik-"));
  const script = [
    "import vilvik, vilvik._credentials as c",
    `key = vilvik.login(base_url=${JSON.stringify(`${baseUrl()}/api/v1`)}, open_browser=False, timeout=90${args ? `, ${args}` : ""})`,
    "saved = c.load_api_key()",
    "assert saved == key, 'the saved key is the one returned'",
    `client = vilvik.Client(api_key=saved, base_url=${JSON.stringify(`${baseUrl()}/api/v1`)})`,
    "page = client.submissions.list()",
    "print('LISTED', type(page).__name__, flush=True)",
  ].join("\n");
  const sdk = spawn(SDK_PYTHON, ["-c", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config"), PYTHONUNBUFFERED: "1" },
  });
  // One object, its `out` growing as the process writes (a copy would keep what was there when it was made).
  const run = {
    home,
    out: "",
    url: "",
    userCode: "",
    exited: new Promise<number>((resolve) => sdk.on("exit", (code) => resolve(code ?? 1))),
  };
  sdk.stdout.on("data", (d) => (run.out += d));
  sdk.stderr.on("data", (d) => (run.out += d));
  await eventually(() => /confirm the code: ([A-Z]{4}-[A-Z]{4})/.test(run.out)).toBe(true);
  run.url = /open:\s+(\S+)/.exec(run.out)![1]!;
  run.userCode = /confirm the code: ([A-Z]{4}-[A-Z]{4})/.exec(run.out)![1]!;
  return run;
}

describe("device login", () => {
  it("the unmodified SDK's vilvik.login() completes after the code is approved in the browser; the key it saved works", {
    timeout: 120_000,
  }, async () => {
    const account = await newAccount();
    const login = await sdkLogin();
    const { home, url, userCode, exited } = login;
    expect(url).toBe(`${baseUrl()}/device?user_code=${userCode}`);

    const context = await person(browser);
    const page = await context.newPage();
    await page.goto(url); // not signed in yet: the sign-in page, then back here
    await page.waitForURL(/\/sign-in\?next=/);
    await page.getByLabel("API key").fill(account.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/device\?user_code=/);
    expect(await page.getByLabel("Code shown by the client").inputValue()).toBe(userCode);
    await page.getByRole("button", { name: "Continue" }).click();
    await eventually(() => page.locator(".code-big").textContent()).toBe(userCode);
    await page.getByLabel("Name of the new key").fill("my laptop");
    await page.getByLabel("webhooks:write").uncheck();
    await shot(page, "device-approve");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL(/\/account$/);

    expect(await exited, login.out).toBe(0);
    expect(login.out).toContain("Authorized. Credentials saved to");
    expect(login.out).toContain("LISTED"); // the saved key worked for the SDK itself
    const saved = JSON.parse(readFileSync(join(home, "config", "vilvik", "credentials"), "utf8")).api_key as string;
    const me = await call("/api/v1/account", { key: saved });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(account.id);
    expect(me.body.key.scopes).not.toContain("webhooks:write");
    expect(me.body.key.scopes).toContain("submissions:write");
    await page.reload();
    expect(await page.locator(`tr[data-key="${saved.slice(0, 12)}"]`).textContent()).toContain("my laptop");
    rmSync(home, { recursive: true, force: true });
    await context.close();
  });

  it("vilvik.login(poll_interval=2), polling faster than the interval, completes: slow_down does not make the server's interval run away", {
    timeout: 120_000,
  }, async () => {
    // The SDK adds 5 s to its own interval at each slow_down (2 → 7 → 12 s); the server's interval grows
    // once (5 → 10 s), so the SDK catches up (docs/dashboard.md#device-login).
    const account = await newAccount();
    const login = await sdkLogin("poll_interval=2");
    const context = await person(browser);
    const page = await context.newPage();
    await signIn(page, account.id);
    await page.goto(login.url);
    await page.getByRole("button", { name: "Continue" }).click();
    await eventually(() => page.locator(".code-big").textContent()).toBe(login.userCode);
    await page.getByLabel("Name of the new key").fill("fast poller");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL(/\/account$/);

    expect(await login.exited, login.out).toBe(0);
    expect(login.out).toContain("LISTED");
    const saved = JSON.parse(readFileSync(join(login.home, "config", "vilvik", "credentials"), "utf8")).api_key as string;
    const me = await call("/api/v1/account", { key: saved });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(account.id);
    rmSync(login.home, { recursive: true, force: true });
    await context.close();
  });
});
