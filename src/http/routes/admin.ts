// /admin/v1: the operator's surface (docs/api.md#admin-api), guarded by the ADMIN_TOKEN secret.
// Without a configured token every admin path is 404, as if it did not exist.

import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { toMicro } from "../../billing/prices";
import { config } from "../../config";
import { issueKey } from "../../domain/keys";
import { createSignInLink, SIGN_IN_LINK_MAX_MS } from "../../domain/sessions";
import { ApiError, notFound } from "../../errors";
import { constantTimeEqual } from "../../lib/crypto";
import { newId, nowIso } from "../../lib/ids";
import { OVERRIDABLE_LIMITS, type OverridableLimit, type Overrides, PLANS, SCOPES, scopeList } from "../../model/accounts";
import { text } from "../../model/fields";
import { type AccountRow, getAccount, getAccountByEmail, grantCredits, insertAccount, updateAccount } from "../../storage/accounts";
import { type Db, getDb } from "../../storage/db";
import { listKeys, revokeKey } from "../../storage/keys";
import { bearerToken } from "../../surface/caller";
import type { AppEnv } from "../context";
import { describe, documented } from "../openapi/describe";
import {
  AdminAccountCreated,
  AdminAccountOnly,
  AdminAccountWithKeys,
  AdminBalances,
  AdminKeyIssued,
  AdminKeyRevoked,
  AdminSignInLink,
} from "../validation/responses";
import { jsonBody, optionalJsonBody } from "../validation/validate";
import { accountView, origin } from "../views";

export const adminAuth = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const token = config(c.env).adminToken;
    if (!token) throw new ApiError("not_found", "No such endpoint.");
    const presented = bearerToken(c.req.header("Authorization"));
    if (!constantTimeEqual(presented, token)) {
      throw new ApiError("unauthorized", "A valid admin token is required.", {}, { "WWW-Authenticate": 'Bearer realm="allele-admin"' });
    }
    await next();
  }),
  { "x-allele-auth": "admin", "x-allele-errors": ["unauthorized", "not_found"] },
);

/** A response body as its schema (src/http/validation/responses.ts) takes it: checked by `satisfies`. */
type Body<T extends z.ZodType> = z.input<T>;

const plan = z.enum(PLANS);
const money = z
  .number()
  .finite()
  .refine((n) => Math.abs(n) <= 1e9, "is out of range");
const future = z.iso.datetime({ offset: true }).refine((s) => Date.parse(s) > Date.now(), "must be in the future");

const overrideValue = {
  count: z.number().int().min(0).max(1_000_000_000),
  bytes: z.number().int().min(0).max(1_000_000_000_000),
  money: money.min(0),
} as const;
const overridesBody = z.strictObject(
  Object.fromEntries(Object.entries(OVERRIDABLE_LIMITS).map(([name, kind]) => [name, overrideValue[kind].nullable().optional()])) as Record<
    OverridableLimit,
    z.ZodOptional<z.ZodNullable<z.ZodNumber>>
  >,
);

async function ownAccount(db: Db, id: string): Promise<AccountRow> {
  const account = await getAccount(db, id);
  if (!account) throw notFound("account");
  return account;
}

export const adminRoutes = new Hono<AppEnv>()
  .use("*", adminAuth)
  .post(
    "/accounts",
    describe({
      operationId: "createAccount",
      tag: "Accounts",
      summary: "Create an account and its first key (all scopes)",
      success: { 201: AdminAccountCreated },
      errors: ["already_exists"],
    }),
    jsonBody(z.strictObject({ email: z.email().max(320), plan, credits: money.min(0).default(0) })),
    async (c) => {
      const db = getDb(c.env.DB);
      const body = c.req.valid("json");
      const email = body.email.toLowerCase();
      if (await getAccountByEmail(db, email)) throw new ApiError("already_exists", `An account with email ${email} exists.`);
      const now = nowIso();
      const id = newId();
      await insertAccount(db, { id, email, plan: body.plan, overrides: {}, createdAt: now, updatedAt: now });
      if (body.credits) await grantCredits(db, id, toMicro(body.credits), "paid", newId(), now);
      // An operator's key has no parent: it is always inserted.
      const issued = (await issueKey(db, { accountId: id, name: "default", scopes: [...SCOPES], expiresAt: null, parentKeyId: null }))!;
      return c.json(
        { account: accountView(c.env, (await getAccount(db, id))!), key: issued.key } satisfies Body<typeof AdminAccountCreated>,
        201,
      );
    },
  )
  .get(
    "/accounts/:id",
    describe({
      operationId: "getAccount",
      tag: "Accounts",
      summary: "Get an account with its keys",
      success: { 200: AdminAccountWithKeys },
    }),
    async (c) => {
      const db = getDb(c.env.DB);
      const account = await ownAccount(db, c.req.param("id"));
      const keys = await listKeys(db, account.id);
      return c.json({
        account: accountView(c.env, account),
        keys: keys.map((k) => ({
          prefix: k.prefix,
          name: k.name,
          scopes: k.scopes,
          expires_at: k.expiresAt,
          revoked_at: k.revokedAt,
          last_used_at: k.lastUsedAt,
          created_at: k.createdAt,
        })),
      } satisfies Body<typeof AdminAccountWithKeys>);
    },
  )
  .patch(
    "/accounts/:id",
    describe({
      operationId: "updateAccount",
      tag: "Accounts",
      summary: "Change an account's plan or overrides (null removes an override)",
      success: { 200: AdminAccountOnly },
    }),
    jsonBody(z.strictObject({ plan: plan.optional(), overrides: overridesBody.optional() })),
    async (c) => {
      const db = getDb(c.env.DB);
      const account = await ownAccount(db, c.req.param("id"));
      const body = c.req.valid("json");
      let overrides: Overrides | undefined;
      if (body.overrides) {
        overrides = { ...account.overrides };
        for (const [key, value] of Object.entries(body.overrides) as [keyof Overrides, number | null | undefined][]) {
          if (value === null) delete overrides[key];
          else if (value !== undefined) overrides[key] = value;
        }
      }
      await updateAccount(db, account.id, { plan: body.plan, overrides }, nowIso());
      return c.json({ account: accountView(c.env, (await getAccount(db, account.id))!) } satisfies Body<typeof AdminAccountOnly>);
    },
  )
  .post(
    "/accounts/:id/credits",
    describe({
      operationId: "grantCredits",
      tag: "Accounts",
      summary: "Grant (or, negative, take) credits",
      success: { 200: AdminBalances },
    }),
    jsonBody(z.strictObject({ amount: money, kind: z.enum(["paid", "free"]).default("paid") })),
    async (c) => {
      const db = getDb(c.env.DB);
      const account = await ownAccount(db, c.req.param("id"));
      const body = c.req.valid("json");
      await grantCredits(db, account.id, toMicro(body.amount), body.kind, newId(), nowIso());
      return c.json({ balances: accountView(c.env, (await getAccount(db, account.id))!).balances } satisfies Body<typeof AdminBalances>);
    },
  )
  .post(
    "/accounts/:id/keys",
    describe({
      operationId: "createKey",
      tag: "Keys",
      summary: "Issue a key with scopes and an optional expiry",
      success: { 201: AdminKeyIssued },
    }),
    jsonBody(z.strictObject({ name: text(100).pipe(z.string().min(1)), scopes: scopeList, expires_at: future.nullable().optional() })),
    async (c) => {
      const db = getDb(c.env.DB);
      const account = await ownAccount(db, c.req.param("id"));
      const body = c.req.valid("json");
      const expiresAt = body.expires_at ? new Date(body.expires_at).toISOString() : null;
      const issued = (await issueKey(db, { accountId: account.id, name: body.name, scopes: body.scopes, expiresAt, parentKeyId: null }))!;
      return c.json(issued satisfies Body<typeof AdminKeyIssued>, 201);
    },
  )
  .post(
    "/accounts/:id/sign-in-links",
    describe({
      operationId: "createSignInLink",
      tag: "Accounts",
      summary: "A one-time link that signs the account in to the dashboard",
      description: "The link opens a dashboard session for the account once, until it expires (docs/dashboard.md#sign-in).",
      success: { 201: AdminSignInLink },
    }),
    optionalJsonBody(
      z.strictObject({
        ttl_minutes: z
          .number()
          .int()
          .min(1)
          .max(SIGN_IN_LINK_MAX_MS / 60_000)
          .optional(),
      }),
    ),
    async (c) => {
      const db = getDb(c.env.DB);
      const account = await ownAccount(db, c.req.param("id"));
      const ttl = c.req.valid("json").ttl_minutes;
      const link = await createSignInLink(db, account.id, ttl ? ttl * 60_000 : undefined);
      return c.json(
        { url: `${origin(c)}/sign-in/link/${link.token}`, expires_at: link.expiresAt, account_id: account.id } satisfies Body<
          typeof AdminSignInLink
        >,
        201,
      );
    },
  )
  .post(
    "/keys/:prefix/revoke",
    describe({
      operationId: "revokeKey",
      tag: "Keys",
      summary: "Revoke a key by its prefix, and the keys made from it",
      description:
        "The keys a dashboard session signed in with this key made (on the account page, or by approving a device login) are revoked with it, and theirs (docs/dashboard.md#account).",
      success: { 200: AdminKeyRevoked },
    }),
    async (c) => {
      const prefix = c.req.param("prefix");
      const revoked = await revokeKey(getDb(c.env.DB), prefix, nowIso());
      if (!revoked) throw notFound("key");
      return c.json({ prefix, revoked: true as const, revoked_dependents: revoked.dependents } satisfies Body<typeof AdminKeyRevoked>);
    },
  );
