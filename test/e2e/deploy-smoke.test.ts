// `npm run deploy:smoke` against the local service, as an operator runs it against a deployment: healthy, one
// job end to end with the key, one webhook delivered to a receiver it can reach; and loud, named failures.
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { freePort, ROOT } from "../../scripts/lib.mjs";
// @ts-expect-error -- a plain ESM script, without types
import { isolationVerdict } from "../../scripts/smoke-isolation.mjs";
import { baseUrl, newAccount } from "./client";

const run = promisify(execFile);

async function smoke(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, "scripts", "deploy-smoke.mjs"), ...args], { timeout: 240_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe("npm run deploy:smoke", () => {
  it("passes against a working service: health, a job end to end, a webhook delivered, the sandbox measures printed", async () => {
    const { key } = await newAccount();
    let received = 0;
    const receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.writeHead(200).end();
      });
    });
    const port = await freePort();
    await new Promise<void>((r) => receiver.listen(port, "127.0.0.1", r));
    try {
      const result = await smoke(["--url", baseUrl(), "--key", key, "--webhook-url", `http://127.0.0.1:${port}/hook`]);
      // The local GA worker's own measures decide, as a deployment's would (all of them hold where the
      // tests run as root; a machine without some fails the smoke test, naming them).
      const health = await (await fetch(`${baseUrl()}/api/v1/health`)).json();
      const verdict = isolationVerdict(health) as { failures: string[]; warnings: string[] };
      expect(result.code, result.out).toBe(verdict.failures.length ? 1 : 0);
      expect(result.out).toContain("webhook delivered");
      expect(received).toBeGreaterThanOrEqual(1);
      // Each measure is printed after the job ran, with its state.
      expect(result.out).toContain("isolation flags reported by the standing GA worker:");
      for (const m of ["user", "network", "syscall_filter", "pid_namespace", "minimal_root", "cgroup", "rlimit:cpu", "rlimit:nproc"])
        expect(result.out).toMatch(new RegExp(`deploy:smoke: {3}${m}: (enforced|absent|ABSENT)`));
      for (const failure of verdict.failures) expect(result.out).toContain(`MISSING: ${failure}`);
      for (const warning of verdict.warnings) expect(result.out).toContain(`WARNING: ${warning}`);
    } finally {
      receiver.close();
    }
  }, 300_000);

  it("fails loudly naming what is missing: a refused key, a receiver that never answers 2xx, an unreachable Worker", async () => {
    const refused = await smoke(["--url", baseUrl(), "--key", `alk_Nope1234_${"x".repeat(40)}`, "--timeout", "60"]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/MISSING: the job was refused \(401/);
    const { key } = await newAccount();
    const down = await freePort();
    const lost = await smoke(["--url", baseUrl(), "--key", key, "--webhook-url", `http://127.0.0.1:${down}/hook`, "--timeout", "90"]);
    expect(lost.code).toBe(1);
    expect(lost.out).toMatch(/MISSING: (the webhook delivery to .* failed|no webhook delivered)/);
    const gone = await smoke(["--url", `http://127.0.0.1:${await freePort()}`, "--key", key]);
    expect(gone.code).toBe(1);
    expect(gone.out).toMatch(/MISSING: the Worker at .* cannot be reached/);
  }, 300_000);
});
