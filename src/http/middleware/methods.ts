// 405 method_not_allowed with `Allow` for a method a path does not answer (docs/api.md#errors), TRACE and
// QUERY included. The methods each path answers are read from the app's own registered routes once they
// are all registered (`learn`), so the routes are declared once: a new route gets its 405s with it.
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { TrieRouter } from "hono/router/trie-router";
import type { RouterRoute } from "hono/types";
import type { AppEnv } from "../context";
import { methodNotAllowed } from "../error-handler";

/** The order `Allow` lists methods in. */
const ORDER = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Hono matches with and without a trailing slash (`strict: false`); so does this. */
const trimmed = (path: string) => (path.length > 1 ? path.replace(/\/+$/, "") : path);

export interface MethodGuard {
  /** Answers 405 before the handlers (registered where the check belongs in the middleware order). */
  middleware: MiddlewareHandler<AppEnv>;
  /** Reads which methods each path under `prefix` answers from the app's routes (call after registering them all). */
  learn(routes: RouterRoute[]): void;
}

export function methodGuard(prefix: string): MethodGuard {
  let router: TrieRouter<string> | null = null;
  return {
    middleware: createMiddleware<AppEnv>(async (c, next) => {
      const matched = router?.match(c.req.method, trimmed(c.req.path))[0] ?? [];
      const allowed = ORDER.filter((m) => matched.some(([method]) => method === m));
      // A path no route answers goes on to its 404; HEAD follows GET.
      if (!allowed.length || allowed.includes(c.req.method) || (c.req.method === "HEAD" && allowed.includes("GET"))) return next();
      return methodNotAllowed(allowed)(c);
    }),
    learn(routes) {
      router = new TrieRouter<string>();
      for (const route of routes) {
        // Middleware (app.use) is registered for ALL methods; a handler for its own.
        if (route.method === "ALL" || !route.path.startsWith(prefix) || route.path.includes("*")) continue;
        router.add("ALL", trimmed(route.path), route.method);
      }
    },
  };
}
