// GET /docs: the interactive API reference loads with no request leaving the origin (the served HTML and
// its script name only same-origin URLs, and a Content-Security-Policy of 'self' makes the browser refuse
// anything else), over the document this Worker serves.
import { describe, expect, it } from "vitest";
import { DOCS_CSP } from "../../src/http/routes/docs";
import { call } from "../helpers/api";

const EXTERNAL = /\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi;

describe("/docs", () => {
  it("serves the page and every asset it loads from this origin, with a 'self' Content-Security-Policy", async () => {
    const page = await call("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html.match(EXTERNAL) ?? []).toEqual([]);
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      if (url === "data:,") continue;
      expect(url, "a same-origin path").toMatch(/^\/docs\//);
      const asset = await call(url);
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get("Content-Security-Policy")).toBe(DOCS_CSP);
      expect((await asset.text()).length).toBeGreaterThan(0);
    }
    for (const directive of ["default-src 'self'", "connect-src 'self'", "script-src 'self'", "img-src 'self' data:", "font-src 'self'"]) expect(DOCS_CSP).toContain(directive);
    expect(page.headers.get("Content-Security-Policy")).toBe(DOCS_CSP);
    expect((await call("/docs/")).status).toBe(200);
  });

  it("configures Swagger UI for this origin: the document at /api/v1/openapi.json, the key kept once entered, no outside validator", async () => {
    const init = await (await call("/docs/init.js")).text();
    expect(init.match(EXTERNAL) ?? []).toEqual([]);
    expect(init).toContain('url: "/api/v1/openapi.json"');
    expect(init).toContain("persistAuthorization: true");
    expect(init).toContain("validatorUrl: null");
    const doc = await (await call("/api/v1/openapi.json")).json<{ servers: { url: string }[]; components: { securitySchemes: Record<string, unknown> } }>();
    expect(doc.servers).toEqual([{ url: "/api/v1", description: "this deployment" }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(["apiKey"]);
  });
});
