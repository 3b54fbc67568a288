// @allele/client: a typed client for the Allele API (README.md).
export {
  Allele,
  type CallArgs,
  type CallOptions,
  type ClientOptions,
  type DeviceLoginOptions,
  type DeviceToken,
  type OperationId,
  type PathParams,
  type QueryParams,
  type RequestBody,
  type Result,
  type Schemas,
  type Submission,
  type Success,
  type Sweep,
  type WaitOptions,
} from "./client.js";
export {
  AlleleError,
  DeviceLoginError,
  type DeviceLoginErrorCode,
  type ErrorCode,
  RateLimitError,
  RunFailedError,
  WaitTimeoutError,
  WebhookVerificationError,
} from "./errors.js";
export type { components, operations, paths, webhooks } from "./schema.js";
export { type HeaderSource, type VerifyOptions, verifyWebhook, type WebhookEvent } from "./webhooks.js";
