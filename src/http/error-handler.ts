// The one place that turns any thrown error into the documented error body.
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, errorBody } from "../errors";
import type { AppEnv } from "./context";

function render(c: Context<AppEnv>, err: ApiError) {
  const requestId = c.get("requestId") ?? "";
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  c.header("X-Request-Id", requestId);
  return c.json(errorBody(err, requestId), err.status);
}

/** Any thrown error as the API's error (an unexpected one is internal_error; its details never leave). */
export function translate(err: Error): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    // Hono's own exceptions: the JSON validator's parse failure and the body limit.
    if (err.status === 400 && /json/i.test(err.message)) return new ApiError("malformed_json", "The request body is not valid JSON.");
    if (err.status === 413) return new ApiError("payload_too_large", "The request body is too large.");
    if (err.status === 401) return new ApiError("unauthorized", "A valid API key is required.");
  }
  return new ApiError("internal_error", "An unexpected error occurred.");
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
