// Idempotency-Key on the writes (docs/api.md#idempotency): scoped per account, 24 hours, fingerprinted by
// method, path and body (a data file's upload: by what its streamed body means). A replay answers the
// stored response with `Idempotent-Replayed: true`; a different request under the same key is 422; a
// duplicate while the first is in flight is 409.
// Only successful (2xx) responses are stored: a rejected request can be retried with the same key.
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { accountGate } from "../../do/account-gate/client";
import type { IdempotencyBegin } from "../../do/account-gate/object";
import { ApiError, validationError } from "../../errors";
import { sha256Hex } from "../../lib/crypto";
import type { AppEnv } from "../context";
import { documented, type Fragment } from "../openapi/describe";

const KEY = /^[\x20-\x7E]{1,255}$/;

const DOCUMENTED: Fragment = {
  "x-allele-idempotent": true,
  "x-allele-errors": ["validation_failed", "idempotency_in_progress", "idempotency_key_mismatch"],
};

/** The request's Idempotency-Key, checked (400 when malformed); undefined when it sends none. */
function keyOf(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("Idempotency-Key");
  if (key !== undefined && !KEY.test(key)) {
    throw validationError([{ field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }]);
  }
  return key;
}

/**
 * Runs `handle` once per key and fingerprint: a replay answers the stored response, a key used for
 * another request is 422, a duplicate still in flight 409 (`refused` runs first in those three cases:
 * what the request already did is undone). A 2xx answer is stored.
 */
async function once(
  c: Context<AppEnv>,
  key: string,
  fingerprint: string,
  handle: () => Promise<Response>,
  refused: () => Promise<void> = async () => undefined,
): Promise<Response> {
  const gate = accountGate(c.env, c.get("caller").accountId);
  const begun: IdempotencyBegin = await gate.idempotencyBegin(key, fingerprint);
  if (begun.state !== "new") await refused();
  if (begun.state === "replay") {
    return new Response(begun.body, {
      status: begun.status,
      headers: { "Content-Type": "application/json", "Idempotent-Replayed": "true", "X-Request-Id": c.get("requestId") },
    });
  }
  if (begun.state === "mismatch") {
    throw new ApiError("idempotency_key_mismatch", "This Idempotency-Key was used for a different request in the last 24 hours.");
  }
  if (begun.state === "in_progress") {
    throw new ApiError("idempotency_in_progress", "A request with this Idempotency-Key is still being processed; retry shortly.");
  }
  let res: Response | undefined;
  try {
    res = await handle();
    return res;
  } finally {
    if (res && res.status >= 200 && res.status < 300) await gate.idempotencyFinish(key, res.status, await res.clone().text());
    else await gate.idempotencyAbort(key);
  }
}

export const idempotent = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const key = keyOf(c);
    if (key === undefined) return next();
    const body = await c.req.text();
    const fingerprint = await sha256Hex(`${c.req.method}\n${new URL(c.req.url).pathname}\n${body}`);
    return once(c, key, fingerprint, async () => {
      await next();
      return c.res;
    });
  }),
  DOCUMENTED,
);

/**
 * Idempotency-Key on a route whose body is too large to hold twice (a data file's upload): this checks
 * the key's form and documents it; the handler streams the body, then calls `streamedOnce` with a
 * fingerprint of what it read (the body's meaning: a retry's multipart boundary may differ).
 */
export const idempotentStreamed = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    keyOf(c);
    await next();
  }),
  DOCUMENTED,
);

/** `handle` under the request's Idempotency-Key (if any), fingerprinted by method, path and `meaning`. */
export async function streamedOnce(
  c: Context<AppEnv>,
  meaning: string,
  handle: () => Promise<Response>,
  refused: () => Promise<void>,
): Promise<Response> {
  const key = keyOf(c);
  if (key === undefined) return handle();
  const fingerprint = await sha256Hex(`${c.req.method}\n${new URL(c.req.url).pathname}\n${meaning}`);
  return once(c, key, fingerprint, handle, refused);
}
