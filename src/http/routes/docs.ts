// /docs: the interactive API reference (Swagger UI) over GET /api/v1/openapi.json. The page and its
// configuration are served here; Swagger UI's own files (/docs/swagger-ui-bundle.js, /docs/swagger-ui.css)
// are the Worker's static assets (dist/web/docs, copied from swagger-ui-dist by scripts/build-web.mjs),
// outside the Worker's script. Everything is on this origin, and the page's Content-Security-Policy of
// 'self' makes the browser refuse any request to another: it works offline and under `wrangler dev`
// without internet. The key is entered under Authorize for the page's life only: it is not kept in the
// browser's storage (`persistAuthorization: false`), where any script of this origin could read it and where
// it would outlive the tab; a reload asks for it again. "Try it out" calls this same origin (the
// document's server is /api/v1).
import { Hono } from "hono";
import { SAME_ORIGIN_CSP } from "../../lib/csp";
import type { AppEnv } from "../context";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allele API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// No inline script (the CSP forbids it): the page's one piece of configuration.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  dom_id: "#docs",
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
});
`;

const headers = (type: string) => ({
  "Content-Type": type,
  "Cache-Control": "no-cache",
  "Content-Security-Policy": SAME_ORIGIN_CSP,
  "X-Content-Type-Options": "nosniff",
});

export const docsRoutes = new Hono<AppEnv>({ strict: false })
  .get("/", (c) => c.body(PAGE, 200, headers("text/html; charset=utf-8")))
  .get("/init.js", (c) => c.body(INIT, 200, headers("text/javascript; charset=utf-8")));
