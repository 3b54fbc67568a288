// Request validation the way Hono documents it (`zValidator`), with our error envelope:
// 415 for a non-JSON body, 413 past the size limits, 400 malformed_json / validation_failed.
import { zValidator } from "@hono/zod-validator";
import { bodyLimit } from "hono/body-limit";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { ApiError, type ErrorCode, type FieldError, validationError } from "../../errors";
import type { AppEnv } from "../context";
import { documented } from "../openapi/describe";

export const MAX_BODY_BYTES = 256 * 1024;

/** Issues whose message starts with this marker mean "payload too large" (a code field over 64 KiB). */
export const TOO_LARGE = "payload_too_large:";

type Issues = { issues: z.core.$ZodIssue[] };

/**
 * Free text a person names things with (names, descriptions): at most `max` UTF-16 units and well-formed
 * Unicode. JSON may carry a lone surrogate (`"\ud800"`); storing it would silently turn it into U+FFFD,
 * so it is refused instead (docs/decisions.md#free-text).
 */
export const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => !/\p{Cs}/u.test(s), { message: "must be valid Unicode text (it contains a lone surrogate)" });

export function fieldErrors(error: Issues): FieldError[] {
  return error.issues.flatMap((issue) => {
    // An unknown field is named by itself, not by the object that holds it ("body").
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ field: [...issue.path, key].join("."), message: "is not a known field" }));
    }
    return [{ field: issue.path.length ? issue.path.join(".") : "body", message: issue.message }];
  });
}

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

/**
 * A JSON body validated by `schema` (at most `maxBytes`, 256 KiB unless a route needs more); the handler
 * reads it with `c.req.valid("json")`.
 */
export function jsonBody<T extends z.ZodType>(
  schema: T,
  { maxBytes = MAX_BODY_BYTES, tooLarge }: { maxBytes?: number; tooLarge?: string } = {},
) {
  const validate = zValidator("json", schema, (result) => {
    if (!result.success) throwFor(result.error);
  });
  // `every` runs them in order; it keeps the validator's input/output types only through this cast.
  return documented(every(requireJsonContentType, limitBody(maxBytes, tooLarge), validate), {
    "x-allele-body": { schema, required: true },
    "x-allele-errors": BODY_ERRORS,
  }) as unknown as typeof validate;
}

const BODY_ERRORS = ["malformed_json", "validation_failed", "payload_too_large", "unsupported_media_type"] as const satisfies ErrorCode[];

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
