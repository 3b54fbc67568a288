// Webhooks end to end: `wrangler dev` (WEBHOOK_ALLOW_PRIVATE=true) delivers a real run's events to a real
// local receiver through the real deliveries queue; the receiver guide's Node and Python verification
// code (docs/webhooks.md) is run against those signed deliveries.
import { spawnSync } from "node:child_process";
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, job, newAccount, waitForStatus } from "./client";

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  at: number;
}

const ROOT = join(import.meta.dirname, "..", "..");
let server: Server;
let receiverUrl: string;
const deliveries: Delivery[] = [];
let key: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      deliveries.push({ path: req.url ?? "", headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  key = (await newAccount()).key;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitForDeliveries(path: string, count: number, timeoutMs = 30_000): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = deliveries.filter((d) => d.path === path);
    if (got.length >= count) return got;
    if (Date.now() > deadline) throw new Error(`receiver got ${got.length} of ${count} deliveries on ${path}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The fenced code block that follows `<!-- verify:<name> -->` in docs/webhooks.md. */
function docSnippet(name: string): string {
  const doc = readFileSync(join(ROOT, "docs", "webhooks.md"), "utf8");
  const match = new RegExp(`<!-- verify:${name} -->\\s*\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(doc);
  if (!match) throw new Error(`docs/webhooks.md has no verify:${name} block`);
  return match[1]!;
}

/** Node's crypto over the exact received bytes, written here independently of src/ and of the docs. */
function independentlyVerified(d: Delivery, secret: string): boolean {
  const mac = createHmac("sha256", secret).update(`${d.headers["x-signature-timestamp"]}.`).update(d.raw).digest("hex");
  const expected = Buffer.from(`sha256=${mac}`);
  const got = Buffer.from(String(d.headers["x-signature"]));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

describe("webhooks end to end", () => {
  let secret: string;
  let received: Delivery[];
  let submissionId: string;

  it("a real run's submission.succeeded and result.completed reach a real local receiver, signed", async () => {
    const created = await call("/api/v1/webhooks", {
      key,
      body: { url: `${receiverUrl}/hook`, events: ["submission.succeeded", "result.completed", "submission.failed"] },
    });
    expect(created.status).toBe(201);
    secret = created.body.secret;
    const webhookId = created.body.id;

    const sub = await call("/api/v1/submissions/", { key, body: job({ random_seed: 3 }) });
    expect(sub.status).toBe(202);
    submissionId = sub.body.id;
    const done = await waitForStatus(key, submissionId);
    expect(done.status).toBe("succeeded");
    received = await waitForDeliveries("/hook", 2);
    expect(received).toHaveLength(2);

    const results = await call(`/api/v1/results/?submission_id=${submissionId}`, { key });
    const result = results.body.results[0];
    const byType = Object.fromEntries(received.map((d) => [d.headers["x-event-type"], JSON.parse(d.raw.toString("utf8"))]));
    expect(Object.keys(byType).sort()).toEqual(["result.completed", "submission.succeeded"]);
    expect(byType["submission.succeeded"].data).toMatchObject({
      submission_id: submissionId,
      result_id: result.id,
      status: "succeeded",
      execution_duration_ms: done.execution_duration_ms,
      cpu_seconds_used: done.cpu_seconds_used,
      peak_memory_mb: done.peak_memory_mb,
      hit_memory_cap: false,
      hit_time_cap: false,
    });
    expect(typeof byType["submission.succeeded"].data.best_solution_fitness).toBe("string");
    expect(Number(byType["submission.succeeded"].data.best_solution_fitness)).toBe(result.best_solution_fitness);
    expect(byType["result.completed"].data).toEqual({
      submission_id: submissionId,
      result_id: result.id,
      best_solution_fitness: byType["submission.succeeded"].data.best_solution_fitness,
      num_objectives: 1,
      best_solution_objectives: null,
      pareto_front_size: null,
      generations_completed: 30,
    });
    for (const d of received) {
      expect(independentlyVerified(d, secret)).toBe(true);
      expect(d.headers["content-type"]).toBe("application/json");
      expect(d.headers["user-agent"]).toBe("Allele-Webhook/1.0");
      const body = JSON.parse(d.raw.toString("utf8"));
      expect(body.event_id).toBe(d.headers["x-event-id"]);
      expect(body.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
      expect(Math.abs(Number(d.headers["x-signature-timestamp"]) - d.at / 1000)).toBeLessThan(30);
    }
    const hook = await call(`/api/v1/webhooks/${webhookId}`, { key });
    expect(hook.body).toMatchObject({ last_delivery_status: "succeeded" });
    expect(hook.body).not.toHaveProperty("secret");
  });

  it("the receiver guide's Node code accepts these deliveries and rejects tampering, a stale timestamp and another secret", async () => {
    const dir = mkdtempSync(join(tmpdir(), "allele-verify-"));
    const file = join(dir, "verify.mjs");
    writeFileSync(file, docSnippet("node"));
    const { verifyAlleleWebhook } = (await import(pathToFileURL(file).href)) as {
      verifyAlleleWebhook: (raw: Buffer, headers: IncomingHttpHeaders, secret: string, nowMs?: number) => boolean;
    };
    for (const d of received) {
      expect(verifyAlleleWebhook(d.raw, d.headers, secret)).toBe(true);
      const tampered = Buffer.from(d.raw.toString("utf8").replace(submissionId, "xxxxxxxxxxxx"));
      expect(verifyAlleleWebhook(tampered, d.headers, secret)).toBe(false);
      expect(verifyAlleleWebhook(d.raw, d.headers, "0".repeat(64))).toBe(false);
      expect(verifyAlleleWebhook(d.raw, d.headers, secret, Date.now() + 301_000)).toBe(false);
      expect(verifyAlleleWebhook(d.raw, { ...d.headers, "x-signature": undefined }, secret)).toBe(false);
    }
  });

  it("the receiver guide's Python code accepts these deliveries and rejects tampering and a stale timestamp", () => {
    const python = join(ROOT, "container", ".venv", "bin", "python");
    const harness = `${docSnippet("python")}
import base64, json, sys
cases = json.load(sys.stdin)
out = []
for c in cases:
    raw = base64.b64decode(c["raw"])
    headers = {"X-Signature": c["signature"], "X-Signature-Timestamp": c["timestamp"]}
    out.append([
        verify_allele_webhook(raw, headers, c["secret"]),
        verify_allele_webhook(raw + b" ", headers, c["secret"]),
        verify_allele_webhook(raw, headers, "0" * 64),
        verify_allele_webhook(raw, headers, c["secret"], now=int(c["timestamp"]) + 301),
    ])
print(json.dumps(out))
`;
    const cases = received.map((d) => ({
      raw: d.raw.toString("base64"),
      signature: d.headers["x-signature"],
      timestamp: d.headers["x-signature-timestamp"],
      secret,
    }));
    const res = spawnSync(python, ["-c", harness], { input: JSON.stringify(cases), encoding: "utf8" });
    expect(res.stderr).toBe("");
    expect(JSON.parse(res.stdout)).toEqual(cases.map(() => [true, false, false, false]));
  });

  it("rotating the secret: the next delivery verifies only with the new secret", async () => {
    const hooks = await call("/api/v1/webhooks", { key });
    const id = hooks.body.results[0].id;
    const rotated = await call(`/api/v1/webhooks/${id}/rotate-secret`, { key, method: "POST" });
    expect(rotated.status).toBe(200);
    const bad = "def fitness(ga, solution, idx):\n    return 1 / 0\n";
    const sub = await call("/api/v1/submissions/", { key, body: job({ fitness_func: bad }) });
    expect((await waitForStatus(key, sub.body.id)).status).toBe("failed");
    const [, , failed] = await waitForDeliveries("/hook", 3);
    expect(failed!.headers["x-event-type"]).toBe("submission.failed");
    expect(JSON.parse(failed!.raw.toString("utf8")).data).toMatchObject({
      submission_id: sub.body.id,
      status: "failed",
      error: { code: "code_error" },
    });
    expect(independentlyVerified(failed!, rotated.body.secret)).toBe(true);
    expect(independentlyVerified(failed!, secret)).toBe(false);
  });

  it("deactivated webhooks get nothing; a private non-loopback target stays refused even with WEBHOOK_ALLOW_PRIVATE", async () => {
    const off = await call("/api/v1/webhooks", {
      key,
      body: { url: `${receiverUrl}/off`, events: ["submission.succeeded"], is_active: false },
    });
    expect(off.status).toBe(201);
    const refused = await call("/api/v1/webhooks", { key, body: { url: "http://10.0.0.1/hook", events: ["submission.succeeded"] } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: "invalid_webhook_url", details: { reason: "non_public_address" } });
    const sub = await call("/api/v1/submissions/", { key, body: job() });
    await waitForStatus(key, sub.body.id);
    await waitForDeliveries("/hook", 5);
    expect(deliveries.filter((d) => d.path === "/off")).toHaveLength(0);
  });
});
