// Webhooks in the dashboard, in a real browser, against a real local receiver: create (the secret shown
// once, copied), Test, Inspect the attempt, Replay, re-send a failed delivery, the status filter, and the
// Test limit shown in words.
import { createServer, type Server } from "node:http";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, launch, person, shot, signIn, watchErrors } from "./browser/harness";
import { call, newAccount } from "./client";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let server: Server;
let receiver: string;
const received: { path: string; headers: Record<string, string | string[] | undefined>; body: string }[] = [];
/** What the receiver answers, per path. */
const answers: Record<string, number> = { "/ok": 200, "/broken": 503, "/slow": 200 };
/** Paths the receiver answers only after this many ms (a delivery seen pending first). */
const delays: Record<string, number> = { "/slow": 2500 };

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      setTimeout(
        () => {
          res.writeHead(answers[req.url ?? ""] ?? 404, { "Content-Type": "text/plain", "X-Receiver": "local" });
          res.end(`answer for ${req.url}`);
        },
        delays[req.url ?? ""] ?? 0,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launch();
  context = await person(browser);
  page = await context.newPage();
  await signIn(page, (await newAccount()).id);
});
afterAll(async () => {
  await browser?.close();
  server?.close();
});

async function createWebhook(path: string, description: string): Promise<string> {
  await page.goto("/webhooks");
  await page.getByLabel("URL").fill(`${receiver}${path}`);
  await page.getByLabel("submission.failed").check();
  await page.getByLabel("Description (optional)").fill(description);
  await page.getByRole("button", { name: "Create webhook" }).click();
  await eventually(() => page.locator("#secret-value").count()).toBe(1);
  // The page takes the webhook's own address (a reload must not post the form again).
  await page.waitForURL(/\/webhooks\/[0-9A-Za-z]{12}$/);
  return (await page.locator("#secret-value").textContent())!.trim();
}

describe("webhooks in the dashboard", () => {
  it("creates a webhook and shows its secret once, with a copy button", async () => {
    const errors = watchErrors(page);
    const secret = await createWebhook("/ok", "local receiver");
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await page.getByRole("button", { name: "Copy secret" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shot(page, "webhook-created");
    await page.goto("/webhooks");
    await page.getByRole("link", { name: "local receiver" }).click();
    expect(await page.content()).not.toContain(secret);
    expect(errors).toEqual([]);
  });

  it("Test reaches the local receiver; Inspect shows the attempt; Replay sends it again under a new event id", async () => {
    await page.getByLabel("Send a synthetic event imitating").selectOption("submission.failed");
    await page.getByRole("button", { name: "Send test" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("Test sent");
    await eventually(() => received.filter((r) => r.path === "/ok").length).toBe(1);
    const first = received.find((r) => r.path === "/ok")!;
    expect(first.headers["x-event-type"]).toBe("webhook.test");
    expect(JSON.parse(first.body).data).toMatchObject({ test: true, sample_of: "submission.failed" });

    await eventually(async () => {
      await page.reload();
      return page.locator("tr[data-delivery] .status").first().textContent();
    }).toBe("succeeded");
    await page.getByRole("link", { name: "Inspect" }).first().click();
    await page.waitForURL(/\/deliveries\/[0-9a-f]{16}$/);
    const attempt = page.getByRole("region", { name: "Attempt 1" });
    expect(await attempt.locator("h3").textContent()).toContain("200");
    expect(await attempt.textContent()).toContain(`${receiver}/ok`);
    expect(await attempt.locator("pre").last().textContent()).toBe("answer for /ok");
    await attempt.getByText("Request headers").click();
    expect(await attempt.locator("pre").first().textContent()).toMatch(/x-signature: sha256=[0-9a-f]{64}/i);
    await attempt.getByText("Response headers").click();
    expect(await attempt.textContent()).toContain("x-receiver: local");
    await shot(page, "delivery-inspect");

    await page.getByRole("button", { name: "Replay" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("Replayed as delivery");
    await eventually(() => received.filter((r) => r.path === "/ok").length).toBe(2);
    const [a, b] = received.filter((r) => r.path === "/ok");
    expect(b!.headers["x-event-id"]).not.toBe(a!.headers["x-event-id"]);
    expect(JSON.parse(b!.body).data).toEqual(JSON.parse(a!.body).data);
    await shot(page, "webhook");
  });

  it("a delivery that failed for good can be re-sent; the log filters by status", async () => {
    await createWebhook("/broken", "broken receiver");
    const hookUrl = page.url();
    await page.getByRole("button", { name: "Send test" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("Test sent");
    // Six attempts (the e2e service retries after 1 s instead of minutes), then failed.
    await eventually(async () => {
      await page.goto(`${hookUrl.replace(/\?.*/, "")}?status=failed`);
      return page.locator("tr[data-delivery]").count();
    }, 60_000).toBe(1);
    expect(received.filter((r) => r.path === "/broken").length).toBe(6);
    await page.goto(`${hookUrl}?status=succeeded`);
    expect(await page.locator("tr[data-delivery]").count()).toBe(0);

    answers["/broken"] = 200;
    await page.goto(`${hookUrl}?status=failed`);
    await page.getByRole("button", { name: "Re-send" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("Re-sent");
    await eventually(() => received.filter((r) => r.path === "/broken").length).toBe(7);
    const sent = received.filter((r) => r.path === "/broken");
    expect(sent[6]!.headers["x-event-id"]).toBe(sent[0]!.headers["x-event-id"]);
    await eventually(async () => {
      await page.reload();
      return page.locator(".title-row .status").textContent();
    }).toBe("succeeded");
    expect(await page.getByRole("region", { name: "Attempt 7" }).locator("h3").textContent()).toContain("200");
  });

  it("after Send test the delivery row turns from pending to succeeded without a reload; the log shows the response code", async () => {
    await createWebhook("/slow", "slow receiver");
    await page.getByRole("button", { name: "Send test" }).click();
    await eventually(() => page.locator(".flash").textContent()).toContain("Test sent");
    // The receiver holds its answer 2.5 s: the row is pending first.
    const row = page.locator("tr[data-delivery]").first();
    expect(await row.locator(".status").textContent()).toBe("pending");
    // A marker on the page's window: a reload (or a navigation) would drop it.
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }));
    await eventually(() => page.locator("tr[data-delivery] .status").first().textContent(), 30_000).toBe("succeeded");
    expect(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage)).toBe(true);
    expect(await page.locator("tr[data-delivery] [data-field=response]").first().textContent()).toBe("200");
    expect(await page.locator("#deliveries th").allTextContents()).toContain("Response");
    await shot(page, "webhook-delivered-live");
    // Inactive: Replay is offered no more, and the page says why.
    await page.getByRole("button", { name: "Deactivate" }).click();
    await eventually(() => page.locator(".title-row .status").textContent()).toBe("inactive");
    const replay = page.locator("tr[data-delivery]").first().getByRole("button", { name: "Replay" });
    expect(await replay.isDisabled()).toBe(true);
    expect(await page.locator("#inactive-reason").textContent()).toContain("inactive: activate it to replay or re-send");
    await page.locator("tr[data-delivery]").first().getByRole("link", { name: "Inspect" }).click();
    await page.waitForURL(/\/deliveries\/[0-9a-f]{16}$/);
    expect(await page.getByRole("button", { name: "Replay" }).isDisabled()).toBe(true);
    expect(await page.locator("#inactive-reason").textContent()).toContain("The webhook is inactive");
  });

  it("the Test limit (10 per minute per account) is shown in words", async () => {
    const hooks = (await page.context().request.get("/webhooks")).ok();
    expect(hooks).toBe(true);
    await page.goto("/webhooks");
    await page.getByRole("link", { name: "local receiver" }).click();
    // Tests so far this minute: 2 (one per webhook); 8 more reach the limit.
    let message = "";
    for (let i = 0; i < 12 && !message.includes("limited"); i++) {
      await page.getByRole("button", { name: "Send test" }).click();
      message = (await page.locator(".flash").textContent()) ?? "";
    }
    expect(message).toMatch(/Test is limited to 10 per minute per account; try again in \d+ s/);
    await shot(page, "webhook-limit");
    expect((await call("/api/v1/health")).status).toBe(200);
  });
});
