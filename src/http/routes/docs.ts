// /docs: the interactive API reference (Swagger UI) over GET /api/v1/openapi.json. Every file it loads is
// served here, by the Worker (src/http/docs/assets.generated.ts, made by `npm install`), and a Content
// Security Policy of 'self' makes the browser refuse any request to another origin: it works offline
// and under `wrangler dev` without internet. The key is entered once (Authorize; kept in the browser's
// local storage) and "Try it out" calls this same origin (the document's server is /api/v1).
import { Hono } from "hono";
import type { AppEnv } from "../context";
import { SWAGGER_UI_CSS, SWAGGER_UI_JS, SWAGGER_UI_LICENSE, SWAGGER_UI_VERSION } from "../docs/assets.generated";

export const DOCS_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allele API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css?v=${SWAGGER_UI_VERSION}">
</head>
<body>
<div id="docs"></div>
<script src="/docs/swagger-ui-bundle.js?v=${SWAGGER_UI_VERSION}"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// No inline script (the CSP forbids it): the page's one piece of configuration.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#docs",
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
});
`;

const headers = (type: string, cache: string) => ({ "Content-Type": type, "Cache-Control": cache, "Content-Security-Policy": DOCS_CSP, "X-Content-Type-Options": "nosniff" });
const LONG = "public, max-age=86400";

export const docsRoutes = new Hono<AppEnv>({ strict: false })
  .get("/", (c) => c.body(PAGE, 200, headers("text/html; charset=utf-8", "no-cache")))
  .get("/init.js", (c) => c.body(INIT, 200, headers("text/javascript; charset=utf-8", "no-cache")))
  .get("/swagger-ui-bundle.js", (c) => c.body(SWAGGER_UI_JS, 200, headers("text/javascript; charset=utf-8", LONG)))
  .get("/swagger-ui.css", (c) => c.body(SWAGGER_UI_CSS, 200, headers("text/css; charset=utf-8", LONG)))
  .get("/LICENSE.swagger-ui.txt", (c) => c.body(SWAGGER_UI_LICENSE, 200, headers("text/plain; charset=utf-8", LONG)));
