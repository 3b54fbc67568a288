// GET /docs: the interactive API reference loads with no request leaving the origin (the served HTML and
// its script name only same-origin URLs, and a Content-Security-Policy of 'self' makes the browser refuse
// anything else), over the document this Worker serves. Swagger UI's own files are static assets, not
// part of the Worker's script: test/e2e/docs-browser.test.ts fetches them from `wrangler dev`.
import { describe, expect, it } from "vitest";
import { SAME_ORIGIN_CSP as DOCS_CSP } from "../../src/lib/csp";
import { call } from "../helpers/api";

const EXTERNAL = /\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi;

describe("/docs", () => {
  it("serves the page and its configuration from this origin, with a 'self' Content-Security-Policy; Swagger UI's files are not in the Worker", async () => {
    const page = await call("/docs");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html.match(EXTERNAL) ?? []).toEqual([]);
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((url) => url !== "data:,");
    expect(urls).toEqual(["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js", "/docs/init.js"]);
    const init = await call("/docs/init.js");
    expect(init.status).toBe(200);
    expect(init.headers.get("Content-Type")).toMatch(/^text\/javascript/);
    expect(init.headers.get("Content-Security-Policy")).toBe(DOCS_CSP);
    // Served by the static assets in front of the Worker (wrangler.toml [assets]): the Worker has no copy.
    for (const file of ["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"]) expect((await call(file)).status, file).toBe(404);
    for (const directive of ["default-src 'self'", "connect-src 'self'", "script-src 'self'", "img-src 'self' data:", "font-src 'self'"])
      expect(DOCS_CSP).toContain(directive);
    expect(page.headers.get("Content-Security-Policy")).toBe(DOCS_CSP);
    expect((await call("/docs/")).status).toBe(200);
  });

  it("configures Swagger UI for this origin: the document at /api/v1/openapi.json, the key NOT kept in the browser's storage, no outside validator", async () => {
    const init = await (await call("/docs/init.js")).text();
    expect(init.match(EXTERNAL) ?? []).toEqual([]);
    expect(init).toContain('url: "/api/v1/openapi.json"');
    expect(init).toContain("persistAuthorization: false");
    expect(init).toContain("validatorUrl: null");
    const doc = await (await call("/api/v1/openapi.json")).json<{
      servers: { url: string }[];
      components: { securitySchemes: Record<string, unknown> };
    }>();
    expect(doc.servers).toEqual([{ url: "/api/v1", description: "this deployment" }]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(["apiKey"]);
  });
});
