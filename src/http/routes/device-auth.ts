// /api/v1/auth/device/code and /token: RFC 8628 device authorization for command-line clients (the
// Vilvik SDK's `vilvik login`; docs/dashboard.md#device-login). No key is needed — these are how a
// client gets one. Bodies may be JSON (what the SDK sends) or form-encoded (what RFC 8628 specifies);
// errors follow RFC 6749 §5.2 (`{"error": "...", "error_description": "..."}`), not the API's envelope,
// because that is what device clients read.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { pollDeviceToken, startDeviceAuthorization } from "../../domain/device-auth";
import { getDb } from "../../storage/db";
import type { AppEnv } from "../context";
import { describe } from "../openapi/describe";
import { DeviceAuthorization, DeviceToken, OAuthError } from "../validation/responses";
import { origin } from "../views";

const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
const MEDIA_TYPES = ["application/json", "application/x-www-form-urlencoded"];
const TOKEN_ERRORS = [
  "invalid_request",
  "unsupported_grant_type",
  "authorization_pending",
  "slow_down",
  "access_denied",
  "expired_token",
  "invalid_grant",
] as const;
type TokenError = (typeof TOKEN_ERRORS)[number];

/** The parameters each route knows (others are ignored): checked here and documented from the same schema. */
const codeParams = z
  .looseObject({ client_id: z.string().optional(), scope: z.string().optional() })
  .meta({ description: "RFC 8628's parameters, taken and ignored: a JSON object or a form" });
const tokenParams = z.looseObject({ device_code: z.string().min(1), grant_type: z.literal(GRANT_TYPE).optional() });

/** The request's parameters, from a JSON object or a form; null when the body is neither. */
async function params(c: Context<AppEnv>): Promise<Record<string, unknown> | null> {
  const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  const raw = await c.req.text();
  if (raw.length > 4096) return null;
  if (!raw.trim()) return {};
  try {
    if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(raw));
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? Object.fromEntries(Object.entries(parsed)) : null;
  } catch {
    return null;
  }
}

function oauthError(c: Context<AppEnv>, error: TokenError, description: string) {
  c.header("Cache-Control", "no-store");
  return c.json({ error, error_description: description, request_id: c.get("requestId") }, 400);
}

export const deviceAuthRoutes = new Hono<AppEnv>()
  .post(
    "/code",
    describe({
      operationId: "startDeviceAuthorization",
      tag: "Device login",
      summary: "Start a device login (RFC 8628 §3.1): a device code to poll with and a user code to approve in the dashboard",
      description:
        "No key needed; counted against the IP's per-minute window. A JSON object or a form-encoded body; `client_id` and `scope`, when sent, are strings, and are ignored. Errors in RFC 6749 §5.2's shape, not the API's envelope (docs/dashboard.md#device-login).",
      noKey: true,
      body: { schema: codeParams, required: false, mediaTypes: MEDIA_TYPES },
      success: { 200: DeviceAuthorization },
      otherErrors: {
        400: {
          description:
            "RFC 6749 §5.2: `invalid_request` (the body is neither a JSON object nor a form, is over 4 KiB, or `client_id` or `scope` is not a string)",
          schema: OAuthError(["invalid_request"]),
        },
      },
    }),
    async (c) => {
      const body = await params(c);
      if (body === null) return oauthError(c, "invalid_request", "Send a JSON object or a form-encoded body.");
      if (!codeParams.safeParse(body).success) return oauthError(c, "invalid_request", "client_id and scope, when sent, are strings.");
      const started = await startDeviceAuthorization(getDb(c.env.DB), `${origin(c)}/device`, c.req.header("User-Agent") ?? "");
      c.header("Cache-Control", "no-store");
      return c.json(started);
    },
  )
  .post(
    "/token",
    describe({
      operationId: "pollDeviceToken",
      tag: "Device login",
      summary: "Poll a device login (RFC 8628 §3.4): the new API key once the person approved, exactly once",
      description:
        "No key needed; counted against the IP's per-minute window. Errors in RFC 6749 §5.2's shape `{error, error_description, request_id}`, not the API's envelope (the Vilvik SDK reads it): `authorization_pending` until decided, `slow_down` when polled sooner than `interval` after the previous poll (the interval then grows once, from 5 to 10 s, and never again: a client that adds 5 s to its own interval at each `slow_down`, as RFC 8628 §3.5 says, catches up), `access_denied`, `expired_token` after 15 minutes, `invalid_grant` for an unknown or used code (docs/dashboard.md#device-login).",
      noKey: true,
      body: { schema: tokenParams, required: true, mediaTypes: MEDIA_TYPES },
      success: { 200: DeviceToken },
      otherErrors: {
        400: { description: `RFC 6749 §5.2: ${TOKEN_ERRORS.map((e) => `\`${e}\``).join(", ")}`, schema: OAuthError(TOKEN_ERRORS) },
      },
    }),
    async (c) => {
      const body = await params(c);
      if (body === null) return oauthError(c, "invalid_request", "Send a JSON object or a form-encoded body.");
      if (body.grant_type !== undefined && body.grant_type !== GRANT_TYPE)
        return oauthError(c, "unsupported_grant_type", `grant_type must be ${GRANT_TYPE}.`);
      if (typeof body.device_code !== "string" || !body.device_code) return oauthError(c, "invalid_request", "device_code is required.");
      const outcome = await pollDeviceToken(getDb(c.env.DB), body.device_code);
      if (outcome.kind === "error") return oauthError(c, outcome.error, outcome.description);
      c.header("Cache-Control", "no-store");
      // `api_key` is what the Vilvik SDK reads; access_token/token_type are RFC 8628's names for the same key.
      return c.json({
        api_key: outcome.key,
        access_token: outcome.key,
        token_type: "Bearer" as const,
        scope: outcome.scopes.join(" "),
        key_prefix: outcome.prefix,
        key_name: outcome.name,
      } satisfies z.input<typeof DeviceToken>);
    },
  );
