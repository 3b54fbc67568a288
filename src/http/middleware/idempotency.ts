// Idempotency-Key on the three writes (docs/api.md#idempotency): scoped per account, 24 hours, fingerprinted by
// method, path and body. A replay answers the stored response with `Idempotent-Replayed: true`; a
// different request under the same key is 422; a duplicate while the first is in flight is 409.
// Only successful (2xx) responses are stored: a rejected request can be retried with the same key.
import { createMiddleware } from "hono/factory";
import { accountGate } from "../../do/account-gate/client";
import type { IdempotencyBegin } from "../../do/account-gate/object";
import { ApiError, validationError } from "../../errors";
import { sha256Hex } from "../../lib/crypto";
import type { AppEnv } from "../context";
import { documented } from "../openapi/describe";

const KEY = /^[\x20-\x7E]{1,255}$/;

export const idempotent = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined) return next();
    if (!KEY.test(key)) throw validationError([{ field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }]);
    const body = await c.req.text();
    const fingerprint = await sha256Hex(`${c.req.method}\n${new URL(c.req.url).pathname}\n${body}`);
    const gate = accountGate(c.env, c.get("caller").accountId);
    const begun: IdempotencyBegin = await gate.idempotencyBegin(key, fingerprint);
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
    try {
      await next();
    } finally {
      if (c.res.status >= 200 && c.res.status < 300) await gate.idempotencyFinish(key, c.res.status, await c.res.clone().text());
      else await gate.idempotencyAbort(key);
    }
  }),
  {
    "x-allele-idempotent": true,
    "x-allele-errors": ["validation_failed", "idempotency_in_progress", "idempotency_key_mismatch"],
  },
);
