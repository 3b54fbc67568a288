// Where a sign-in goes back to, and hostile input to the sign-in and every form (docs/dashboard.md#sign-in,
// #sessions): `next` stays a path of this site as a browser reads it; a `next` with a control character
// and a body that is not a readable form get a 400 page — never a 500 — and no session cookie.
import { describe, expect, it } from "vitest";
import { newDashboard } from "../../src/dashboard/index";
import { env, newAccount } from "../helpers/api";
import { WebClient } from "../helpers/web";

const SESSION = "__Host-allele_session";
const sessionCookies = (res: Response) =>
  res.headers.getSetCookie().filter((c) => c.startsWith(`${SESSION}=`) && !c.startsWith(`${SESSION}=;`));
const sessionCount = async (accountId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?").bind(accountId).first<{ n: number }>())!.n;

/** `next` values a browser would leave the site for, once it has stripped TAB, CR and LF and read `\` as `/`. */
const OFF_SITE = [
  "//evil.example/x",
  "/\\evil.example/x",
  "\\\\evil.example/x",
  "https://evil.example/x",
  "http:evil.example",
  "javascript:alert(1)",
  "evil.example/x",
];
/** Control characters a `next` may not hold: TAB, CR, LF, NUL, DEL and C1. */
const CONTROL = ["/\t/evil.example/x", "/x\r\nSet-Cookie: a=b", "/x\ny", "/x\u0000", "/\u007f/x", "/\u0085/x", "/\r/evil.example"];

describe("sign-in redirects stay on the site", () => {
  it("signed in: GET /sign-in?next= goes to a path of this site, or to the default page; a control character is a 400 page", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const go = (next: string) => web.request(`/sign-in?next=${encodeURIComponent(next)}`);
    const kept = await go("/results?is_shared=true#top");
    expect(kept.status).toBe(303);
    expect(kept.headers.get("Location")).toBe("/results?is_shared=true#top");
    for (const next of OFF_SITE) {
      const res = await go(next);
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.headers.get("Location"), JSON.stringify(next)).toBe("/submissions");
    }
    for (const next of CONTROL) {
      const res = await go(next);
      expect(res.status, JSON.stringify(next)).toBe(400);
      expect(res.headers.get("Location")).toBeNull();
      expect(await res.text()).toContain("control character");
    }
    // The issue's own request, as a browser sends it.
    const tab = await web.request("/sign-in?next=/%09/evil.example/x");
    expect(tab.status).toBe(400);
    expect(tab.headers.get("Location")).toBeNull();
    // Malformed percent-encoding is not a 500 either.
    expect((await web.request("/sign-in?next=%E0%A4%A")).status).toBeLessThan(500);
  });

  it("signed out: the form's hidden field keeps only a path of this site", async () => {
    const web = new WebClient();
    const field = async (next: string) => {
      const res = await web.request(`/sign-in?next=${encodeURIComponent(next)}`);
      return { status: res.status, next: /name="next" value="([^"]*)"/.exec(await res.text())?.[1] };
    };
    expect(await field("/device?user_code=BCDF-GHJK")).toEqual({ status: 200, next: "/device?user_code=BCDF-GHJK" });
    for (const next of OFF_SITE) expect(await field(next), JSON.stringify(next)).toEqual({ status: 200, next: "/submissions" });
    for (const next of CONTROL) expect(await field(next), JSON.stringify(next)).toEqual({ status: 400, next: "/submissions" });
  });

  it("POST /sign-in: a bad next goes to the default page; one with CR, LF, NUL or TAB is a 400 page with no session and no cookie", async () => {
    const account = await newAccount();
    const signIn = async (next: string) => {
      const web = new WebClient();
      const csrf = WebClient.csrfOf(await (await web.request("/sign-in")).text());
      return web.request("/sign-in", { form: { _csrf: csrf, api_key: account.key, next } });
    };
    for (const next of OFF_SITE) {
      const res = await signIn(next);
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.headers.get("Location"), JSON.stringify(next)).toBe("/submissions");
    }
    const before = await sessionCount(account.id);
    for (const next of CONTROL) {
      const res = await signIn(next);
      expect(res.status, JSON.stringify(next)).toBe(400);
      expect(res.headers.get("Location")).toBeNull();
      expect(sessionCookies(res), JSON.stringify(next)).toEqual([]);
      expect(res.headers.getSetCookie().join("\n")).not.toContain("a=b");
      const html = await res.text();
      expect(html).toContain("control character");
      expect(/name="next" value="([^"]*)"/.exec(html)?.[1]).toBe("/submissions");
    }
    expect(await sessionCount(account.id)).toBe(before);
    const ok = await signIn("/account?x=1");
    expect(ok.headers.get("Location")).toBe("/account?x=1");
  });
});

/** A multipart body without its boundary: a form no parser can read. */
const NO_BOUNDARY = {
  rawBody: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n',
  headers: { "Content-Type": "multipart/form-data" },
};

describe("a body that is not a readable form", () => {
  it("gets a 400 page and no cookie at the sign-in, a sign-in link and a session's change", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.request("/sign-in"); // the pre-sign-in cookie, so no response below needs to set one
    const before = await sessionCount(account.id);
    for (const path of ["/sign-in", `/sign-in/link/${"A".repeat(40)}`]) {
      const res = await web.request(path, { ...NO_BOUNDARY, method: "POST" });
      expect(res.status, path).toBe(400);
      expect(res.headers.getSetCookie(), path).toEqual([]);
      expect(await res.text()).toContain("could not be read");
    }
    expect(await sessionCount(account.id)).toBe(before);
    await web.signInWithKey(account.key);
    const rename = await web.request("/results/AAAAAAAAAAAA/rename", { ...NO_BOUNDARY, method: "POST" });
    expect(rename.status).toBe(400);
    expect(sessionCookies(rename)).toEqual([]);
  });

  it("never gets a 500 on any POST of the dashboard, its CSRF token in the form or in X-CSRF-Token", async () => {
    const account = await newAccount();
    const web = new WebClient();
    await web.signInWithKey(account.key);
    const csrf = await web.csrf();
    // Sign-out reads no form: with the header's token it signs out, as it should.
    const posts = [
      ...new Set(
        newDashboard()
          .routes.filter((r) => r.method === "POST" && r.path !== "/sign-out")
          .map((r) => r.path),
      ),
    ];
    expect(posts.length).toBeGreaterThan(15);
    for (const route of posts) {
      const path = route.replace(/:[a-z_]+/g, "AAAAAAAAAAAA");
      for (const headers of [{}, { "X-CSRF-Token": csrf }] as Record<string, string>[]) {
        const res = await web.request(path, { ...NO_BOUNDARY, method: "POST", headers: { ...NO_BOUNDARY.headers, ...headers } });
        expect(res.status, `${route} ${JSON.stringify(headers)}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${route} ${JSON.stringify(headers)}`).toBeLessThan(500);
        expect(sessionCookies(res), route).toEqual([]);
      }
    }
    // The session lived through all of it.
    expect((await web.request("/account")).status).toBe(200);
  });
});
