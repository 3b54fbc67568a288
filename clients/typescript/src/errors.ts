// The errors the client throws. An API error carries the envelope's code, details and request id
// (docs/api.md#errors); a 429 also `retryAfter`, the seconds the server asked to wait (or null).
import type { components, operations } from "./schema.js";

/** Every `error.code` the API can answer. */
export type ErrorCode = components["schemas"]["Error"]["error"]["code"];

/** A non-2xx answer of the API. */
export class AlleleError extends Error {
  override readonly name: string = "AlleleError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode | "network_error" | "unexpected_response",
    message: string,
    readonly details: Record<string, unknown>,
    readonly requestId: string | null,
  ) {
    super(requestId ? `${message} (request_id=${requestId})` : message);
  }
}

/** 429: a rate limit or a capacity gate. `retryAfter` is the server's Retry-After in seconds, or null. */
export class RateLimitError extends AlleleError {
  override readonly name = "RateLimitError";
  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    details: Record<string, unknown>,
    requestId: string | null,
    readonly retryAfter: number | null,
  ) {
    super(status, code, message, details, requestId);
  }
}

/** The device login's errors, in RFC 6749's shape: `authorization_pending`, `slow_down`, `access_denied`, `expired_token`, … */
export type DeviceLoginErrorCode = operations["pollDeviceToken"]["responses"][400]["content"]["application/json"]["error"];

/** `Allele.deviceLogin`: the device login failed; `code` is RFC 6749's `error` (`access_denied`, `expired_token`, …). */
export class DeviceLoginError extends Error {
  override readonly name = "DeviceLoginError";
  constructor(
    readonly status: number,
    readonly code: DeviceLoginErrorCode,
    message: string,
    readonly requestId: string | null,
  ) {
    super(requestId ? `${message} (request_id=${requestId})` : message);
  }
}

/** `waitFor`: the run ended `failed` or `cancelled`; `code` and `message` are the run's own error. */
export class RunFailedError extends Error {
  override readonly name = "RunFailedError";
  constructor(
    readonly submissionId: string,
    readonly status: "failed" | "cancelled",
    readonly code: string,
    override readonly message: string,
  ) {
    super(message);
  }
}

/** `waitFor` gave up before the run ended. */
export class WaitTimeoutError extends Error {
  override readonly name = "WaitTimeoutError";
  /** `submissionId` is the sweep's id when `what` is "Sweep" (waitForSweep). */
  constructor(
    readonly submissionId: string,
    readonly lastStatus: string,
    readonly what: "Submission" | "Sweep" = "Submission",
  ) {
    super(`${what} ${submissionId} did not end in time (last status: ${lastStatus}).`);
  }
}

/** `verifyWebhook`: the delivery is not authentic or too old; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  constructor(
    readonly reason: "missing_headers" | "bad_timestamp" | "timestamp_out_of_tolerance" | "bad_signature" | "malformed_body",
    message: string,
  ) {
    super(message);
  }
}
