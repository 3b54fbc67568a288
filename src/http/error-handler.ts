// The one place that turns any thrown error into the documented error body.
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { ApiError, errorBody, translate } from "../errors";
import type { AppEnv } from "./context";

function render(c: Context<AppEnv>, err: ApiError) {
  const requestId = c.get("requestId") ?? "";
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  c.header("X-Request-Id", requestId);
  return c.json(errorBody(err, requestId), err.status);
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  const apiError = translate(err);
  if (apiError.code === "internal_error") console.error("unhandled error", c.get("requestId"), err);
  return render(c, apiError);
};

export const onNotFound: NotFoundHandler<AppEnv> = (c) => render(c, new ApiError("not_found", "No such endpoint."));

export function methodNotAllowed(allowed: string[]) {
  return (c: Context<AppEnv>) =>
    render(
      c,
      new ApiError("method_not_allowed", `Method ${c.req.method} is not allowed here.`, { allowed }, { Allow: allowed.join(", ") }),
    );
}
