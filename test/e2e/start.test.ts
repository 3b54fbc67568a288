// `npm start` as a user meets it: it brings the whole service up, prints a key, an admin token and a
// curl command, and that curl command works. (Own state directory and ports, so it never touches
// the developer's local data.)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { freePort, ROOT } from "../../scripts/lib.mjs";

let child: ChildProcess | undefined;
const stateDir = mkdtempSync(join(tmpdir(), "allele-start-"));
const demoKey = `alk_Demo1234_${"x".repeat(40)}`;

/** Runs `npm start`'s script on free ports with its own state directory; resolves with what it printed. */
async function start(port: number): Promise<string> {
  child = spawn(process.execPath, [join(ROOT, "scripts", "start.mjs")], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      WORKER_PORT: String(await freePort()),
      ALLELE_STATE_DIR: stateDir,
      ALLELE_DEMO_KEY: demoKey,
      ADMIN_TOKEN: "start-admin-token-123",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const take = (d: Buffer) => {
    output += d;
    printed += d;
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const deadline = Date.now() + 120_000;
  while (!output.includes("curl -s ") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return output;
}

let printed = "";
const printedSoFar = () => printed;

/** Every process's command line on this machine (as any user can read them). */
function commandLines(): [number, string][] {
  const found: [number, string][] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      found.push([Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")]);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function modes(dir: string): [string, number][] {
  const found: [string, number][] = [];
  const walk = (path: string) => {
    const info = statSync(path);
    found.push([path, info.mode & 0o777]);
    if (info.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return found;
}

async function stop(): Promise<void> {
  const running = child;
  if (!running || running.exitCode !== null) return;
  const exited = new Promise((r) => running.once("exit", r));
  running.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (running.exitCode === null) running.kill("SIGKILL");
}

afterAll(async () => {
  await stop();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("npm start", () => {
  it("serves the API, seeds the demo account idempotently and prints a curl command that works", async () => {
    const port = await freePort();
    const output = await start(port);
    expect(output).toContain(`Allele is running at http://localhost:${port}`);
    expect(output).toContain(demoKey);
    expect(output).toContain("start-admin-token-123");
    expect(output).toContain(`http://localhost:${port}/docs`);
    const docs = await fetch(`http://127.0.0.1:${port}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain("/docs/swagger-ui-bundle.js");

    // The printed one-time sign-in link opens the dashboard: its page, its button (a POST), a session.
    const link = new RegExp(`http://localhost:${port}/sign-in/link/[0-9A-Za-z]{40}`).exec(output)![0].replace("localhost", "127.0.0.1");
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const preCookie = page.headers
      .getSetCookie()
      .find((c) => c.startsWith("__Host-allele_pre_csrf="))!
      .split(";")[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const signedIn = await fetch(link, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: preCookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: `_csrf=${csrf}`,
    });
    expect(signedIn.status).toBe(303);
    const session = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("__Host-allele_session="))!
      .split(";")[0]!;
    const dashboard = await fetch(`http://127.0.0.1:${port}/submissions`, { headers: { Cookie: session } });
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain("demo@allele.local");

    // Run the printed create command's request: its JSON body, its key.
    const body = /-d '([\s\S]*?)'\n/.exec(output)![1]!;
    const api = `http://127.0.0.1:${port}/api/v1`;
    const headers = { Authorization: `Bearer ${demoKey}`, "Content-Type": "application/json" };
    const created = await fetch(`${api}/submissions/`, { method: "POST", headers, body });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    let status = "queued";
    for (let i = 0; i < 300 && (status === "queued" || status === "running"); i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = ((await (await fetch(`${api}/submissions/${id}`, { headers })).json()) as { status: string }).status;
    }
    expect(status).toBe("succeeded");
    const account = (await (await fetch(`${api}/account`, { headers })).json()) as { plan: string; balances: { total: number } };
    expect(account.plan).toBe("premium");
    expect(account.balances.total).toBeGreaterThan(99);
    expect(account.balances.total).toBeLessThan(100);

    // No secret on any command line of this machine (they reach wrangler in a 0600 file).
    const secrets = ["start-admin-token-123", JSON.parse(readFileSync(join(stateDir, "allele-local.json"), "utf8")).runTokenSecret];
    for (const [pid, cmdline] of commandLines())
      for (const secret of secrets) expect(cmdline, `/proc/${pid}/cmdline`).not.toContain(secret);
    // Local state is this user's only: directories 0700, files 0600.
    for (const [path, mode] of modes(stateDir))
      expect([path, mode.toString(8)]).toEqual([path, statSync(path).isDirectory() ? "700" : "600"]);

    // A GA worker that crashes is restarted, and runs go on.
    const worker = commandLines().find(([pid, cmdline]) => cmdline.includes("allele_worker") && parentOf(pid) === child!.pid);
    expect(worker, "the GA worker process of npm start").toBeDefined();
    process.kill(worker![0], "SIGKILL");
    const restarted = Date.now() + 30_000;
    while (!/GA worker exited .*restarting/.test(printedSoFar()) && Date.now() < restarted) await new Promise((r) => setTimeout(r, 100));
    expect(printedSoFar()).toMatch(/GA worker exited \(SIGKILL\); restarting it/);
    const second = await fetch(`${api}/submissions/`, { method: "POST", headers, body });
    expect(second.status).toBe(202);
    const secondId = ((await second.json()) as { id: string }).id;
    let secondStatus = "queued";
    for (let i = 0; i < 600 && (secondStatus === "queued" || secondStatus === "running"); i++) {
      await new Promise((r) => setTimeout(r, 200));
      secondStatus = ((await (await fetch(`${api}/submissions/${secondId}`, { headers })).json()) as { status: string }).status;
    }
    expect(secondStatus).toBe("succeeded");
    expect(child!.exitCode).toBeNull();
    const charged = (await (await fetch(`${api}/account`, { headers })).json()) as { balances: { total: number } };

    // A second start on the same data seeds nothing twice: same key, no second 100.00 grant.
    await stop();
    const again = await start(port);
    expect(again).toContain(demoKey);
    const after = (await (await fetch(`${api}/account`, { headers })).json()) as { balances: { total: number } };
    expect(after.balances.total).toBe(charged.balances.total);
  });
});
