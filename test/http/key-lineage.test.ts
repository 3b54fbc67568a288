// Keys made from a key (docs/dashboard.md#account, docs/decisions.md#key-lineage): a key a dashboard
// session makes — on the account page, or by approving a device login — is made from the key the session
// was signed in with, and revoking that key revokes it, and the keys made from it in turn. One rule for a
// list of scopes everywhere: a repeated scope is refused.
import { describe, expect, it } from "vitest";
import { admin, call, env, json, newAccount, newKey } from "../helpers/api";
import { WebClient } from "../helpers/web";

const works = async (key: string) => (await call("/api/v1/account", { key })).status;

/** A key made on the account page of `web`'s session. */
async function makeKey(web: WebClient, name: string, scopes: string | string[] = "results:read"): Promise<string> {
  const res = await web.post("/account/keys", { name, scopes });
  expect(res.status, await res.clone().text()).toBe(201);
  return /id="new-key"[^>]*>\s*([^<\s]+)/.exec(await res.text())![1]!;
}

/** A device login approved in `web`'s session; its device code and the poll that gets the key. */
async function deviceLogin(web: WebClient) {
  const started = await json(await call("/api/v1/auth/device/code", { body: {} }));
  const confirm = await web.post("/device", { user_code: started.user_code });
  const id = /name="id" value="([^"]+)"/.exec(await confirm.text())![1]!;
  const decided = await web.post("/device/decide", {
    id,
    user_code: started.user_code,
    decision: "approve",
    key_name: "cli",
    scopes: "results:read",
  });
  expect(decided.status).toBe(303);
  return { poll: () => call("/api/v1/auth/device/token", { body: { device_code: started.device_code } }) };
}

async function signInWithLink(accountId: string): Promise<WebClient> {
  const url = (await json(await admin(`/accounts/${accountId}/sign-in-links`, { body: {} }))).url as string;
  const web = new WebClient();
  const path = new URL(url).pathname;
  const csrf = WebClient.csrfOf(await (await web.request(path)).text());
  expect((await web.request(path, { form: { _csrf: csrf } })).status).toBe(303);
  return web;
}

describe("keys made from a key are revoked with it", () => {
  it("revoking the key a session signed in with revokes the keys it made, a device login it approved, and theirs", async () => {
    const account = await newAccount();
    const parent = await newKey(account, ["submissions:read", "results:read", "webhooks:read"]);
    const web = new WebClient();
    await web.signInWithKey(parent);
    const child = await makeKey(web, "child");
    const device = await json(await (await deviceLogin(web)).poll());
    expect(device.api_key).toMatch(/^alk_/);
    // A session signed in with the child makes a grandchild.
    const childWeb = new WebClient();
    await childWeb.signInWithKey(child);
    const grandchild = await makeKey(childWeb, "grandchild");
    // Keys of a sign-in link's session, and the operator's, are made from no key.
    const linkWeb = await signInWithLink(account.id);
    const independent = await makeKey(linkWeb, "independent");
    const operators = await newKey(account, ["results:read"]);
    for (const key of [parent, child, device.api_key, grandchild, independent, operators]) expect(await works(key)).toBe(200);

    // The account page says what each key is made from, and what revoking the parent would take with it.
    const page = await (await linkWeb.request("/account")).text();
    const row = (prefix: string) => new RegExp(`<tr data-key="${prefix}">[\\s\\S]*?</tr>`).exec(page)![0];
    expect(row(child.slice(0, 12))).toContain(parent.slice(0, 12));
    expect(row(device.api_key.slice(0, 12))).toContain(parent.slice(0, 12));
    expect(row(grandchild.slice(0, 12))).toContain(child.slice(0, 12));
    expect(row(independent.slice(0, 12))).toContain('<td class="made-from">—</td>');
    expect(row(parent.slice(0, 12))).toContain(`The keys made from it are revoked with it: ${child.slice(0, 12)}`);
    expect(page).toContain("revoking a key also revokes every key made from it");

    const revoked = await linkWeb.post(`/account/keys/${parent.slice(0, 12)}/revoke`);
    expect(revoked.status).toBe(303);
    const notice = WebClient.flashOf(revoked);
    for (const key of [child, device.api_key, grandchild]) expect(notice).toContain(key.slice(0, 12));
    for (const key of [parent, child, device.api_key, grandchild]) expect(await works(key)).toBe(401);
    for (const key of [independent, operators]) expect(await works(key)).toBe(200);
    // The sessions of the revoked keys ended with them.
    expect((await web.request("/account")).status).toBe(303);
    expect((await childWeb.request("/account")).status).toBe(303);
  });

  it("the admin API's revoke cascades too; a device login approved before its key was revoked gets no key", async () => {
    const account = await newAccount();
    const parent = await newKey(account, ["results:read"]);
    const web = new WebClient();
    await web.signInWithKey(parent);
    const child = await makeKey(web, "child");
    const login = await deviceLogin(web);
    const revoked = await admin(`/keys/${parent.slice(0, 12)}/revoke`, { method: "POST" });
    expect(revoked.status).toBe(200);
    expect(await json(revoked)).toEqual({ prefix: parent.slice(0, 12), revoked: true, revoked_dependents: [child.slice(0, 12)] });
    expect(await works(child)).toBe(401);
    const again = await admin(`/keys/${parent.slice(0, 12)}/revoke`, { method: "POST" });
    expect(await json(again)).toEqual({ prefix: parent.slice(0, 12), revoked: true, revoked_dependents: [] });
    const before = (await json(await admin(`/accounts/${account.id}`))).keys.length;
    const polled = await login.poll();
    expect(polled.status).toBe(400);
    expect(await json(polled)).toMatchObject({ error: "access_denied" });
    expect((await json(await admin(`/accounts/${account.id}`))).keys.length).toBe(before);
  });

  it("stores the parent on the key (the check of a key on each request stays one lookup)", async () => {
    const account = await newAccount();
    const parent = await newKey(account, ["results:read"]);
    const web = new WebClient();
    await web.signInWithKey(parent);
    const child = await makeKey(web, "child");
    const rows = await env.DB.prepare(
      "SELECT k.prefix AS prefix, p.prefix AS parent FROM api_keys k LEFT JOIN api_keys p ON p.id = k.parent_key_id WHERE k.account_id = ?",
    )
      .bind(account.id)
      .all<{ prefix: string; parent: string | null }>();
    expect(rows.results.find((r) => r.prefix === child.slice(0, 12))!.parent).toBe(parent.slice(0, 12));
    expect(rows.results.find((r) => r.prefix === parent.slice(0, 12))!.parent).toBeNull();
  });
});

describe("a list of scopes never repeats a scope", () => {
  it("the account page and a device login's approval refuse a repeated scope, as the admin API does", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const before = (await json(await admin(`/accounts/${account.id}`))).keys.length;
    const twice = await web.post("/account/keys", { name: "twice", scopes: ["submissions:read", "submissions:read"] });
    expect(twice.status).toBe(400);
    expect(await twice.text()).toContain("must not repeat a scope");

    const started = await json(await call("/api/v1/auth/device/code", { body: {} }));
    const confirm = await web.post("/device", { user_code: started.user_code });
    const id = /name="id" value="([^"]+)"/.exec(await confirm.text())![1]!;
    const decided = await web.post("/device/decide", {
      id,
      user_code: started.user_code,
      decision: "approve",
      key_name: "cli",
      scopes: ["submissions:read", "submissions:read"],
    });
    expect(decided.status).toBe(400);
    expect(await decided.text()).toContain("must not repeat a scope");
    expect(await json(await call("/api/v1/auth/device/token", { body: { device_code: started.device_code } }))).toMatchObject({
      error: "authorization_pending",
    });

    const refused = await admin(`/accounts/${account.id}/keys`, { body: { name: "twice", scopes: ["results:read", "results:read"] } });
    expect(refused.status).toBe(400);
    expect((await json(await admin(`/accounts/${account.id}`))).keys.length).toBe(before);
  });
});
