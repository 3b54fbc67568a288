// Request validation with our error envelope: 415 for a non-JSON body, 413 past the size limits, 400
// malformed_json / non_finite_number / validation_failed. Every JSON body of the API is read here, by
// `jsonBody` (json.ts: the one parse, which finds NaN and Infinity and says where); queries the way Hono
// documents it (`zValidator`).
import { zValidator } from "@hono/zod-validator";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import type { z } from "zod";
import { ApiError, type ErrorCode, validationError } from "../../errors";
import { fieldErrors, TOO_LARGE } from "../../model/fields";
import type { AppEnv } from "../context";
import { documented } from "../openapi/describe";
import { parseJsonBody } from "./json";

export const MAX_BODY_BYTES = 256 * 1024;

type Issues = { issues: z.core.$ZodIssue[] };

function throwFor(error: Issues): never {
  const tooLarge = error.issues.find((i) => i.message.startsWith(TOO_LARGE));
  if (tooLarge) {
    throw new ApiError("payload_too_large", tooLarge.message.slice(TOO_LARGE.length).trim(), { field: tooLarge.path.join(".") });
  }
  throw validationError(fieldErrors(error));
}

const requireJsonContentType = createMiddleware<AppEnv>(async (c, next) => {
  const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new ApiError("unsupported_media_type", "Send the body as JSON with `Content-Type: application/json`.");
  }
  await next();
});

const limitBody = (maxSize: number, hint = "") =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError("payload_too_large", `The request body is larger than ${maxSize} bytes.${hint ? ` ${hint}` : ""}`, {
        limit_bytes: maxSize,
      });
    },
  });

/** A middleware that leaves `schema`'s output for `c.req.valid("json")`, typed as Hono's validators are. */
type JsonValidator<T extends z.ZodType> = MiddlewareHandler<AppEnv, string, { in: { json: z.input<T> }; out: { json: z.output<T> } }>;

/**
 * A JSON body validated by `schema` (at most `maxBytes`, 256 KiB unless a route needs more); the handler
 * reads it with `c.req.valid("json")`.
 */
export function jsonBody<T extends z.ZodType>(
  schema: T,
  {
    maxBytes = MAX_BODY_BYTES,
    tooLarge,
    documentAs = schema,
  }: {
    maxBytes?: number;
    tooLarge?: string /** the body's schema in the OpenAPI document, when `schema` transforms (a transform has no JSON Schema) */;
    documentAs?: z.ZodType;
  } = {},
): JsonValidator<T> {
  const validate = createMiddleware<AppEnv>(async (c, next) => {
    const parsed = await schema.safeParseAsync(parseJsonBody(await c.req.text()));
    if (!parsed.success) throwFor(parsed.error);
    c.req.addValidatedData("json", parsed.data as object);
    await next();
  });
  // `every` runs them in order; the validator's input/output types come back through this cast.
  return documented(every(requireJsonContentType, limitBody(maxBytes, tooLarge), validate), {
    "x-allele-body": { schema: documentAs, required: true },
    "x-allele-errors": BODY_ERRORS,
  }) as unknown as JsonValidator<T>;
}

const BODY_ERRORS = [
  "malformed_json",
  "non_finite_number",
  "validation_failed",
  "payload_too_large",
  "unsupported_media_type",
] as const satisfies ErrorCode[];

/**
 * An optional JSON body: an empty body (no Content-Length or 0, no Content-Type) counts as `{}`.
 * Used by writes whose body is optional (reexecute, continue).
 */
export function optionalJsonBody<T extends z.ZodType>(schema: T) {
  const strict = jsonBody(schema);
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    const length = c.req.header("Content-Length");
    const hasBody = c.req.header("Content-Type") || c.req.header("Transfer-Encoding") || (length && length !== "0");
    if (hasBody) return strict(c as never, next);
    const parsed = schema.safeParse({});
    if (!parsed.success) throwFor(parsed.error);
    c.req.addValidatedData("json", parsed.data as object);
    await next();
  });
  return documented(middleware, {
    "x-allele-body": { schema, required: false },
    "x-allele-errors": BODY_ERRORS,
  }) as unknown as typeof strict;
}

/** Query parameters validated by `schema` (repeated parameters: the last one wins). */
export function query<T extends z.ZodType>(schema: T) {
  const validate = zValidator("query", schema, (result) => {
    if (!result.success) throwFor(result.error);
  });
  return documented(validate, { "x-allele-query": schema, "x-allele-errors": ["validation_failed"] });
}
