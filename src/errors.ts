// The closed list of API error codes, their HTTP statuses, any thrown error as one of them, and the one
// error envelope.
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

const STATUS = {
  malformed_json: 400,
  non_finite_number: 400,
  validation_failed: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  scope_required: 403,
  tier_limit_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  already_exists: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  data_file_limit_exceeded: 413,
  unsupported_media_type: 415,
  entry_symbol_required: 422,
  unsupported_submission_type: 422,
  unsupported_field: 422,
  code_upload_not_found: 422,
  code_upload_expired: 422,
  data_file_not_found: 422,
  invalid_data_file_name: 422,
  entry_symbol_not_found: 422,
  idempotency_key_mismatch: 422,
  invalid_webhook_url: 422,
  webhook_limit_reached: 422,
  rate_limited: 429,
  capacity_exceeded: 429,
  too_many_active_api_requests: 429,
  internal_error: 500,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof STATUS;
export const ERROR_CODES = Object.keys(STATUS) as ErrorCode[];
export const statusOf = (code: ErrorCode): ContentfulStatusCode => STATUS[code];

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(STATUS[code], { message });
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export function validationError(fields: FieldError[]): ApiError {
  const first = fields[0];
  const message = first ? `${first.field}: ${first.message}` : "The request is not valid.";
  return new ApiError("validation_failed", message, { fields });
}

const isFieldError = (v: unknown): v is FieldError =>
  typeof v === "object" && v !== null && "field" in v && typeof v.field === "string" && "message" in v && typeof v.message === "string";

/** The fields a refusal lists in `details.fields` (validation_failed's), or null when it lists none. */
export function refusedFields(err: ApiError): FieldError[] | null {
  const fields = err.details.fields;
  return Array.isArray(fields) ? fields.filter(isFieldError) : null;
}

/** The one field a refusal names in `details.field` (an entry symbol, a code upload, a size), or null. */
export function refusedField(err: ApiError): string | null {
  return typeof err.details.field === "string" ? err.details.field : null;
}

export function notFound(what = "resource"): ApiError {
  return new ApiError("not_found", `No such ${what}.`);
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

export function errorBody(err: ApiError, requestId: string) {
  return { error: { code: err.code, message: err.message, details: err.details, request_id: requestId } };
}
