// Gives every request an id, echoed in `X-Request-Id`, in error bodies and on error pages.
import { createMiddleware } from "hono/factory";
import type { SurfaceEnv } from "./context";

const INCOMING = /^[A-Za-z0-9._:-]{8,128}$/;

export const requestId = createMiddleware<SurfaceEnv>(async (c, next) => {
  const incoming = c.req.header("X-Request-Id");
  const id = incoming && INCOMING.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll("-", "")}`;
  c.set("requestId", id);
  c.header("X-Request-Id", id);
  await next();
});
