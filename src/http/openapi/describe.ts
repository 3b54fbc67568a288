// How a route says what it is to the OpenAPI document (docs/architecture.md#openapi). Every route handler
// chain starts with `describe({...})`: its operation id, summary, success responses and the error codes
// its own logic answers. The middleware it uses documents the rest itself — `requireScope` its scope and
// 403, `jsonBody` / `optionalJsonBody` / `query` their zod schemas and 400/413/415, `idempotent` the
// Idempotency-Key header and its 409/422, the API's auth and rate limit their 401 and 429 — so what the
// document says is what the chain enforces. hono-openapi's generator collects the fragments per route
// (`generateSpecs` walks `app.routes`); src/http/openapi/document.ts turns them into the document.
import type { MiddlewareHandler } from "hono";
import { uniqueSymbol } from "hono-openapi";
import type { z } from "zod";
import type { ErrorCode } from "../../errors";

/** A success response: a JSON body's schema, `null` for no body, or raw content (file downloads). */
export type SuccessBody = z.ZodType | null | { raw: string[]; description: string };

/**
 * Fragments of an operation, keyed as hono-openapi merges them (arrays concatenate, objects merge). The
 * `x-allele-*` keys are read and removed by document.ts.
 */
export interface Fragment {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  "x-allele-errors"?: ErrorCode[];
  "x-allele-success"?: Record<number, SuccessBody>;
  "x-allele-body"?: { schema: z.ZodType; required: boolean; mediaTypes?: string[] };
  "x-allele-other-errors"?: Record<number, OtherErrors>;
  "x-allele-query"?: z.ZodType;
  "x-allele-auth"?: "none" | "key" | "admin";
  "x-allele-scope"?: string;
  "x-allele-idempotent"?: true;
  "x-allele-rate-limited"?: true;
}

/** Attaches a fragment to a middleware: the generator finds it on the route's handler. */
export function documented<M extends MiddlewareHandler>(middleware: M, fragment: Fragment): M {
  return Object.assign(middleware, { [uniqueSymbol]: { spec: fragment } });
}

/** Error responses in a shape other than the API's envelope (RFC 6749's, for the device login). */
export interface OtherErrors {
  description: string;
  schema: z.ZodType;
}

export interface RouteDoc {
  /** The operation's id: the TypeScript client's method name (camelCase, unique). */
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Success status → body. */
  success: Record<number, SuccessBody>;
  /** The error codes this route's own logic answers; its middleware adds theirs. */
  errors?: ErrorCode[];
  /** A route that needs no key (health, the documents), though it lives under a path that does. */
  noKey?: true;
  /** A body the handler reads itself (not with jsonBody), in each of the media types it accepts. */
  body?: { schema: z.ZodType; required: boolean; mediaTypes: string[] };
  /** Error responses this route answers outside the envelope, by status (the envelope's codes: `errors`). */
  otherErrors?: Record<number, OtherErrors>;
}

/** The first handler of every documented route: passes through, and tells the document what the route is. */
export function describe(doc: RouteDoc): MiddlewareHandler {
  return documented(async (_c, next) => next(), {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    "x-allele-success": doc.success,
    "x-allele-errors": doc.errors ?? [],
    ...(doc.noKey ? { "x-allele-auth": "none" as const } : {}),
    ...(doc.body ? { "x-allele-body": doc.body } : {}),
    ...(doc.otherErrors ? { "x-allele-other-errors": doc.otherErrors } : {}),
  });
}
