// `Cache-Control: no-store` on every answer of the machine interfaces (/api/v1 and /admin/v1): what a key
// reads — a submission, a result, a file download, a new key, an error — is never kept by a browser or a
// shared cache (docs/api.md#caching). Set after the route and the error handler ran, so every answer gets
// it: a success, a download, a 401, a 404, a 405, a 429, a 500.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../context";

export const NO_STORE = "no-store";

export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  c.res.headers.set("Cache-Control", NO_STORE);
});
