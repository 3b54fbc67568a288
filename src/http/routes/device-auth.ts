// /api/v1/auth/device/code and /token: RFC 8628 device authorization for command-line clients (the
// Vilvik SDK's `vilvik login`; docs/dashboard.md#device-login). No key is needed — these are how a
// client gets one. Bodies may be JSON (what the SDK sends) or form-encoded (what RFC 8628 specifies);
// errors follow RFC 6749 §5.2 (`{"error": "...", "error_description": "..."}`), not the API's envelope,
// because that is what device clients read.
import { Hono, type Context } from "hono";
import type { AppEnv } from "../context";
import { pollDeviceToken, startDeviceAuthorization } from "../../domain/device-auth";
import { getDb } from "../../storage/db";
import { origin } from "../views";

const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";

/** The request's parameters, from a JSON object or a form; null when the body is neither. */
async function params(c: Context<AppEnv>): Promise<Record<string, unknown> | null> {
  const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  const raw = await c.req.text();
  if (raw.length > 4096) return null;
  if (!raw.trim()) return {};
  try {
    if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(raw));
    const parsed: unknown = JSON.parse(raw);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function oauthError(c: Context<AppEnv>, error: string, description: string, status: 400 | 401 = 400) {
  c.header("Cache-Control", "no-store");
  return c.json({ error, error_description: description, request_id: c.get("requestId") }, status);
}

export const deviceAuthRoutes = new Hono<AppEnv>()
  .post("/code", async (c) => {
    if ((await params(c)) === null) return oauthError(c, "invalid_request", "Send a JSON object or a form-encoded body.");
    const started = await startDeviceAuthorization(getDb(c.env.DB), `${origin(c)}/device`, c.req.header("User-Agent") ?? "");
    c.header("Cache-Control", "no-store");
    return c.json(started);
  })
  .post("/token", async (c) => {
    const body = await params(c);
    if (body === null) return oauthError(c, "invalid_request", "Send a JSON object or a form-encoded body.");
    if (body.grant_type !== undefined && body.grant_type !== GRANT_TYPE) return oauthError(c, "unsupported_grant_type", `grant_type must be ${GRANT_TYPE}.`);
    if (typeof body.device_code !== "string" || !body.device_code) return oauthError(c, "invalid_request", "device_code is required.");
    const outcome = await pollDeviceToken(getDb(c.env.DB), body.device_code);
    if (outcome.kind === "error") return oauthError(c, outcome.error, outcome.description);
    c.header("Cache-Control", "no-store");
    // `api_key` is what the Vilvik SDK reads; access_token/token_type are RFC 8628's names for the same key.
    return c.json({ api_key: outcome.key, access_token: outcome.key, token_type: "Bearer", scope: outcome.scopes.join(" "), key_prefix: outcome.prefix, key_name: outcome.name });
  });
