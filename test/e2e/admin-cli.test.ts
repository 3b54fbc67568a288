// `npm run admin -- <command>`: the operator commands, against the running service.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { ROOT } from "../../scripts/lib.mjs";
import { call } from "./client";

function admin(...args: string[]) {
  const res = spawnSync(process.execPath, [join(ROOT, "scripts", "admin.mjs"), ...args], {
    encoding: "utf8",
    env: { ...process.env, ALLELE_URL: inject("baseUrl"), ADMIN_TOKEN: inject("adminToken") },
  });
  let body: any = null;
  try {
    body = JSON.parse(res.stdout);
  } catch {
    body = res.stdout;
  }
  return { code: res.status, body, stderr: res.stderr };
}

describe("npm run admin", () => {
  it("creates an account, changes it, issues and revokes a key", () => {
    const created = admin("create-account", "--email", `cli-${Date.now()}@example.com`, "--plan", "trial", "--credits", "5");
    expect(created.code).toBe(0);
    const id = created.body.account.id as string;
    expect(created.body.key).toMatch(/^alk_[0-9A-Za-z]{8}_[0-9A-Za-z]{40}$/);

    const updated = admin("update-account", "--account", id, "--plan", "premium", "--override", "max_num_genes=7");
    expect(updated.body.account).toMatchObject({ plan: "premium", overrides: { max_num_genes: 7 } });
    expect(admin("credits", "--account", id, "--amount", "-1.5", "--kind", "paid").body.balances).toMatchObject({ paid: 3.5 });

    const key = admin("create-key", "--account", id, "--name", "ci", "--scopes", "results:read");
    expect(key.code).toBe(0);
    expect(key.body).toMatchObject({ name: "ci", scopes: ["results:read"] });
    const shown = admin("show-account", "--account", id);
    expect(shown.body.keys.map((k: { prefix: string }) => k.prefix)).toContain(key.body.prefix);
    expect(JSON.stringify(shown.body)).not.toContain(key.body.key);

    expect(admin("revoke-key", "--prefix", key.body.prefix).code).toBe(0);

    const link = admin("login-link", "--account", id, "--ttl-minutes", "5");
    expect(link.code).toBe(0);
    expect(link.body.url).toMatch(new RegExp(`^${inject("baseUrl")}/sign-in/link/[0-9A-Za-z]{40}$`));
    expect(Date.parse(link.body.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
  });

  it("a login link opens the dashboard's sign-in page", async () => {
    const created = admin("create-account", "--email", `cli3-${Date.now()}@example.com`, "--plan", "free");
    const link = admin("login-link", "--account", created.body.account.id).body.url as string;
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("This one-time link signs you in");
  });

  it("the revoked key no longer works, and a bad command exits non-zero with usage", async () => {
    const created = admin("create-account", "--email", `cli2-${Date.now()}@example.com`, "--plan", "free");
    const key = admin("create-key", "--account", created.body.account.id, "--name", "x", "--scopes", "results:read").body;
    expect((await call("/api/v1/results/", { key: key.key })).status).toBe(200);
    admin("revoke-key", "--prefix", key.prefix);
    expect((await call("/api/v1/results/", { key: key.key })).status).toBe(401);
    const bad = admin("credits", "--account", created.body.account.id);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("needs --amount");
    expect(admin("show-account", "--account", "nope00000000").code).toBe(1);
  });
});
