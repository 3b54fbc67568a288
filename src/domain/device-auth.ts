// RFC 8628 device authorization for command-line clients (the Vilvik SDK's `vilvik login`;
// docs/dashboard.md#device-login). The device gets a device code (kept secret, stored hashed) and a
// short user code the person confirms in the dashboard; once approved, the device's next poll makes an
// ordinary API key of that account, with the name and scopes the person chose, exactly once.
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso, randomBase62 } from "../lib/ids";
import type { Scope } from "../model/accounts";
import type { Db } from "../storage/db";
import {
  type DeviceCodeRow,
  decideDeviceCode,
  findDeviceCode,
  findPendingUserCode,
  insertDeviceCode,
  markIssued,
  recordPoll,
} from "../storage/sessions";
import { generateKey, issueKey } from "./keys";

export const DEVICE_CODE_TTL_SECONDS = 900;
export const POLL_INTERVAL_SECONDS = 5;
/**
 * RFC 8628 §3.5: a device that polls sooner than the interval after its previous poll gets slow_down,
 * and the client adds 5 s to its own interval. The server's interval grows by those 5 s once (5 → 10 s)
 * and never again: growing it at every early poll too ran away from a client that adds its own 5 s
 * (the Vilvik SDK's `login(poll_interval=2)`: 5 → 10 → 15 …, always ahead; docs/decisions.md#device-slow-down).
 */
export const SLOWED_INTERVAL_SECONDS = POLL_INTERVAL_SECONDS + 5;
/** Letters without vowels or look-alikes (RFC 8628 §6.1): 20^8 ≈ 2.6e10 codes. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

function newUserCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let code = "";
  for (const b of bytes) if (b < 240 && code.length < 8) code += USER_CODE_ALPHABET[b % 20];
  return code.length === 8 ? code : newUserCode();
}

/** `bcdf-ghjk`, `BCDF GHJK` or `BCDFGHJK` → `BCDFGHJK`; null when it cannot be a user code. */
export function normalizeUserCode(input: string): string | null {
  const code = input.toUpperCase().replace(/[\s-]/g, "");
  return code.length === 8 && [...code].every((ch) => USER_CODE_ALPHABET.includes(ch)) ? code : null;
}

export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** Starts an authorization (POST /auth/device/code); `verifyUrl` is the dashboard's approval page. */
export async function startDeviceAuthorization(db: Db, verifyUrl: string, clientInfo: string) {
  const deviceCode = randomBase62(40);
  const userCode = newUserCode();
  const now = Date.now();
  await insertDeviceCode(db, {
    id: newId(),
    deviceCodeHash: await sha256Hex(deviceCode),
    userCode,
    status: "pending",
    intervalSeconds: POLL_INTERVAL_SECONDS,
    clientInfo: clientInfo.slice(0, 200),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + DEVICE_CODE_TTL_SECONDS * 1000).toISOString(),
  });
  return {
    device_code: deviceCode,
    user_code: formatUserCode(userCode),
    verification_uri: verifyUrl,
    verification_uri_complete: `${verifyUrl}?user_code=${formatUserCode(userCode)}`,
    expires_in: DEVICE_CODE_TTL_SECONDS,
    interval: POLL_INTERVAL_SECONDS,
  };
}

export type PollOutcome =
  | { kind: "issued"; key: string; prefix: string; scopes: Scope[]; name: string }
  | {
      kind: "error";
      error: "authorization_pending" | "slow_down" | "access_denied" | "expired_token" | "invalid_grant";
      description: string;
    };

const fail = (error: Extract<PollOutcome, { kind: "error" }>["error"], description: string): PollOutcome => ({
  kind: "error",
  error,
  description,
});

/** One poll of the device (POST /auth/device/token). */
export async function pollDeviceToken(db: Db, deviceCode: string): Promise<PollOutcome> {
  const row = /^[0-9A-Za-z]{40}$/.test(deviceCode) ? await findDeviceCode(db, await sha256Hex(deviceCode)) : undefined;
  if (!row) return fail("invalid_grant", "Unknown device code.");
  const now = Date.now();
  if (row.status === "issued") return fail("invalid_grant", "This device code was already used.");
  if (Date.parse(row.expiresAt) <= now) return fail("expired_token", "The device code expired; start the login again.");
  if (row.status === "denied") return fail("access_denied", "The request was denied in the dashboard.");
  if (!(await recordPoll(db, row, now, SLOWED_INTERVAL_SECONDS))) {
    const wait = Math.max(row.intervalSeconds, SLOWED_INTERVAL_SECONDS);
    return fail("slow_down", `Polled sooner than ${row.intervalSeconds} s after the previous poll; wait ${wait} s between polls.`);
  }
  if (row.status === "pending") return fail("authorization_pending", "Waiting for the code to be approved in the dashboard.");
  return issue(db, row);
}

async function issue(db: Db, row: DeviceCodeRow): Promise<PollOutcome> {
  const generated = generateKey();
  if (!row.accountId || !row.scopes || !(await markIssued(db, row.id, generated.prefix)))
    return fail("invalid_grant", "This device code was already used.");
  // Made from the key of the session that approved it (none after a sign-in link), like a key of the account page.
  const issued = await issueKey(
    db,
    { accountId: row.accountId, name: row.keyName ?? "device", scopes: row.scopes, expiresAt: null, parentKeyId: row.parentKeyId },
    generated,
  );
  if (!issued) return fail("access_denied", "The key of the session that approved this login was revoked since; no key was made.");
  return { kind: "issued", key: issued.key, prefix: issued.prefix, scopes: issued.scopes, name: issued.name };
}

/** The pending authorization a person typed the user code of, or undefined (unknown, decided or expired). */
export async function pendingAuthorization(db: Db, userCode: string) {
  return findPendingUserCode(db, userCode, nowIso());
}

/**
 * Approves (with the key's name and scopes, and the key of the approving session, the new key's parent)
 * or denies a pending authorization; false when it is no longer pending.
 */
export async function decideAuthorization(
  db: Db,
  id: string,
  accountId: string,
  decision: { approve: true; keyName: string; scopes: Scope[]; parentKeyId: string | null } | { approve: false },
): Promise<boolean> {
  return decideDeviceCode(
    db,
    id,
    decision.approve
      ? { status: "approved", accountId, keyName: decision.keyName, scopes: decision.scopes, parentKeyId: decision.parentKeyId }
      : { status: "denied", accountId },
    nowIso(),
  );
}
