// The OpenAPI 3.1 documents, generated from the app's routes (docs/architecture.md#openapi): the public API
// under /api/v1 (served at GET /api/v1/openapi.json, committed as docs/openapi.json) and the admin API
// under /admin/v1 (GET /admin/v1/openapi.json, docs/openapi.admin.json). hono-openapi collects each
// route's fragments (describe.ts); this file turns them into operations: zod schemas into JSON Schema
// (zod's own `toJSONSchema`, draft 2020-12 as OpenAPI 3.1 uses), error codes into responses grouped by
// status, auth and scopes into security requirements, and the headers every response carries (its
// request id, `Cache-Control: no-store`, and the rate-limit window where one applies).
import type { Env, Hono } from "hono";
import { generateSpecs } from "hono-openapi";
import { z } from "zod";
import { type ErrorCode, statusOf } from "../../errors";
import { SCOPES } from "../../model/accounts";
import { EVENT_TYPES } from "../../model/events";
import { AnyError, eventEnvelope } from "../validation/responses";
import type { Fragment, OtherErrors, SuccessBody } from "./describe";

export type DocumentKind = "public" | "admin";

type Json = Record<string, unknown>;
type Operation = Json & Fragment & { parameters?: Json[]; responses?: Json };

export const API_ROOT: Record<DocumentKind, string> = { public: "/api/v1", admin: "/admin/v1" };

const METHODS = ["get", "put", "post", "patch", "delete"] as const;

/** Named JSON Schemas of a document, filled as zod schemas are converted. */
class Schemas {
  readonly named: Record<string, Json> = {};

  /** `schema` as JSON Schema; schemas with a `.meta({ id })` become components referenced by `$ref`. */
  convert(schema: z.ZodType, io: "input" | "output"): Json {
    const json = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" }) as Json;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, Json>;
    delete json.$defs;
    let text = JSON.stringify(json);
    for (const [name, def] of Object.entries(defs)) {
      const final = this.add(name, def, io);
      text = text.replaceAll(`"#/$defs/${name}"`, `"#/components/schemas/${final}"`);
    }
    return JSON.parse(text) as Json;
  }

  private add(name: string, def: Json, io: "input" | "output"): string {
    const text = JSON.stringify(def).replaceAll(`"#/$defs/`, `"#/components/schemas/`);
    for (const candidate of [name, `${name}${io === "input" ? "Input" : "Output"}`]) {
      const existing = this.named[candidate];
      if (existing === undefined) {
        this.named[candidate] = JSON.parse(text) as Json;
        return candidate;
      }
      if (JSON.stringify(existing) === text) return candidate;
    }
    throw new Error(`two different schemas are named ${name}`);
  }
}

const header = (description: string, schema: Json = { type: "integer" }, required = false) => ({
  description,
  ...(required ? { required } : {}),
  schema,
});

const HEADERS = {
  "X-Request-Id": header(
    "This request's id (also `error.request_id`); send your own (8..128 of `A-Za-z0-9._:-`) to have it echoed",
    { type: "string" },
    true,
  ),
  "Cache-Control": header(
    "Always `no-store`: no answer of this API (a download, an error) is kept by a browser or a shared cache",
    { type: "string", enum: ["no-store"] },
    true,
  ),
  "X-RateLimit-Limit": header(
    "Requests allowed in the rolling 60-second window that applied (key, or IP without a valid key)",
    { type: "integer" },
    true,
  ),
  "X-RateLimit-Remaining": header("Requests left in that window after this one", { type: "integer" }, true),
  "X-RateLimit-Reset": header("Unix time in seconds when the window next frees a place", { type: "integer" }, true),
  "Retry-After": header("Seconds to wait before retrying (429 `rate_limited`, and `capacity_exceeded` for the daily quota)"),
  "Idempotent-Replayed": header("`true` when this is the stored answer of an earlier request with the same Idempotency-Key", {
    type: "string",
    enum: ["true"],
  }),
  "WWW-Authenticate": header("The authentication scheme expected", { type: "string" }),
};
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

const SCOPE_TEXT = SCOPES.map((s) => `\`${s}\``).join(", ");

function documentInfo(kind: DocumentKind) {
  return kind === "public"
    ? {
        title: "Allele API",
        version: "v1",
        description:
          "A job service for genetic-algorithm optimisation: submit PyGAD parameters and a fitness function, get a result. " +
          "Every request but `GET /health`, `GET /openapi.json` and the device login (`POST /auth/device/code|token`, how a command-line client gets a key) needs an API key (`Authorization: Bearer alk_…`); each operation names the scope it needs. " +
          "Every response carries `X-Request-Id`, `Cache-Control: no-store` and the `X-RateLimit-*` headers of the per-minute window that applied; errors share one envelope " +
          "`{error: {code, message, details, request_id}}` (the device login's 400s excepted: RFC 6749's `{error, error_description}`, as device clients read them) and each operation lists the codes it can answer. Writes accept `Idempotency-Key`. " +
          "Deliveries to your webhooks are described under `webhooks`. The prose contract: docs/api.md and docs/webhooks.md.",
      }
    : {
        title: "Allele admin API",
        version: "v1",
        description:
          "The operator's API: accounts, plans, overrides, credits, keys and dashboard sign-in links. Bearer token: the deployment's `ADMIN_TOKEN` secret; without one configured every path is 404. Not rate-limited. docs/api.md#admin-api.",
      };
}

const SECURITY_SCHEMES = {
  public: {
    apiKey: {
      type: "http",
      scheme: "bearer",
      description: `An API key (\`alk_\` + 8 + \`_\` + 40 base62 characters). Scopes: ${SCOPE_TEXT}; an operation's security requirement lists the scope it needs (docs/api.md#keys).`,
    },
  },
  admin: { adminToken: { type: "http", scheme: "bearer", description: "The deployment's ADMIN_TOKEN secret." } },
};

/** The error envelope's component (docs/api.md#errors), with every code; each response narrows `code`. */
const ERROR = "Error";
const codeIsOneOf = (codes: ErrorCode[]) => ({ properties: { error: { properties: { code: { enum: codes } } } } });

/**
 * The error responses of an operation: its codes grouped by status, each with its `error.code` values;
 * and those it answers in another shape (`other`), whose statuses the envelope's codes must not share.
 */
function errorResponses(codes: ErrorCode[], headers: Json, other: Record<number, OtherErrors>, schemas: Schemas): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  const out: Record<string, Json> = {};
  for (const [status, { description, schema }] of Object.entries(other)) {
    if (byStatus.has(Number(status))) throw new Error(`status ${status} is answered in two shapes`);
    out[status] = { description, headers, content: { "application/json": { schema: schemas.convert(schema, "output") } } };
  }
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const extra =
      status === 429 ? { "Retry-After": ref("Retry-After") } : status === 401 ? { "WWW-Authenticate": ref("WWW-Authenticate") } : {};
    out[String(status)] = {
      description: `Error: ${list.map((c) => `\`${c}\``).join(", ")}`,
      headers: { ...headers, ...extra },
      content: { "application/json": { schema: { allOf: [{ $ref: `#/components/schemas/${ERROR}` }, codeIsOneOf(list)] } } },
    };
  }
  return out;
}

function successResponse(status: number, body: SuccessBody, schemas: Schemas, headers: Json): Json {
  const description = status === 204 ? "Done; no body" : status === 201 ? "Created" : status === 202 ? "Accepted" : "OK";
  if (body === null) return { description, headers };
  if ("raw" in body)
    return { description: body.description, headers, content: Object.fromEntries(body.raw.map((type) => [type, { schema: {} }])) };
  return { description, headers, content: { "application/json": { schema: schemas.convert(body, "output") } } };
}

function queryParameters(schema: z.ZodType, schemas: Schemas): Json[] {
  const json = schemas.convert(schema, "input") as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: "query", required: json.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest };
  });
}

/** One operation, from the fragments hono-openapi merged for it. */
function buildOperation(kind: DocumentKind, raw: Operation, schemas: Schemas): Json {
  const auth = raw["x-allele-auth"] ?? "none";
  const scope = raw["x-allele-scope"];
  const idempotent = raw["x-allele-idempotent"] === true;
  const rateLimited = raw["x-allele-rate-limited"] === true;
  // A route that needs no key cannot answer 401, whatever the path's context says.
  const declared = (raw["x-allele-errors"] ?? []).filter((code) => auth !== "none" || code !== "unauthorized");
  const errors = [...new Set<ErrorCode>([...declared, ...(rateLimited ? (["rate_limited"] as const) : []), "internal_error"])];

  const headers: Json = rateLimited
    ? {
        "X-Request-Id": ref("X-Request-Id"),
        "Cache-Control": ref("Cache-Control"),
        "X-RateLimit-Limit": ref("X-RateLimit-Limit"),
        "X-RateLimit-Remaining": ref("X-RateLimit-Remaining"),
        "X-RateLimit-Reset": ref("X-RateLimit-Reset"),
      }
    : { "X-Request-Id": ref("X-Request-Id"), "Cache-Control": ref("Cache-Control") };
  const successHeaders = idempotent ? { ...headers, "Idempotent-Replayed": ref("Idempotent-Replayed") } : headers;

  const parameters: Json[] = (raw.parameters ?? []).map((p) => (p.in === "path" ? { ...p, schema: { type: "string", minLength: 1 } } : p));
  const query = raw["x-allele-query"];
  if (query) parameters.push(...queryParameters(query, schemas));
  if (idempotent) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "1..255 printable ASCII characters (a fresh UUID per distinct request): a retry with the same key and body answers the first response (with `Idempotent-Replayed: true`) for 24 hours; the same key with another body is 422, while the first is still running 409 (docs/api.md#idempotency)",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
    });
  }

  const body = raw["x-allele-body"];
  const success = raw["x-allele-success"] ?? {};
  const security = auth === "none" ? [] : auth === "admin" ? [{ adminToken: [] }] : [{ apiKey: scope ? [scope] : [] }];
  return {
    operationId: raw.operationId,
    summary: raw.summary,
    ...(raw.description ? { description: raw.description } : {}),
    tags: raw.tags,
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: body.required,
            content: Object.fromEntries(
              (body.mediaTypes ?? ["application/json"]).map((type) => [type, { schema: schemas.convert(body.schema, "input") }]),
            ),
          },
        }
      : {}),
    responses: {
      ...Object.fromEntries(
        Object.entries(success).map(([status, b]) => [status, successResponse(Number(status), b, schemas, successHeaders)]),
      ),
      ...errorResponses(errors, headers, raw["x-allele-other-errors"] ?? {}, schemas),
    },
    security,
    ...(kind === "public" && scope ? { "x-required-scope": scope } : {}),
  };
}

/** The OpenAPI 3.1 `webhooks`: one POST per event type, with the signature headers (docs/webhooks.md). */
function webhooks(schemas: Schemas): Json {
  const headers = [
    [
      "X-Event-Id",
      "The event's UUID: the same on every attempt, equal to `event_id`; deduplicate by it",
      { type: "string", format: "uuid" },
    ],
    ["X-Event-Type", "The event type", { type: "string", enum: [...EVENT_TYPES] }],
    [
      "X-Signature-Timestamp",
      "Unix time in seconds of this attempt; reject a timestamp more than 5 minutes from your clock",
      { type: "string", pattern: "^\\d+$" },
    ],
    [
      "X-Signature",
      "`sha256=` + hex HMAC-SHA256, keyed by the webhook's secret, of `<X-Signature-Timestamp>.<raw body>`; compare in constant time",
      { type: "string", pattern: "^sha256=[0-9a-f]{64}$" },
    ],
    ["User-Agent", "`Allele-Webhook/1.0`", { type: "string" }],
  ] as const;
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\W/g, "_")}`,
          summary: `The \`${type}\` event`,
          description:
            "Sent as a signed POST to every active webhook subscribed to this type; retried with backoff for 24 hours until it gets a 2xx (docs/webhooks.md).",
          tags: ["Webhook events"],
          parameters: headers.map(([name, description, schema]) => ({ name, in: "header", required: true, description, schema })),
          requestBody: { required: true, content: { "application/json": { schema: schemas.convert(eventEnvelope(type), "output") } } },
          responses: {
            "2XX": { description: "Received: any 2xx ends the delivery" },
            default: { description: "Anything else (or no answer in 10 s) is retried" },
          },
          security: [],
        },
      },
    ]),
  );
}

const TAG_ORDER = [
  "Submissions",
  "Sweeps",
  "Results",
  "Imports",
  "Code uploads",
  "Webhooks",
  "Account",
  "Device login",
  "Environment",
  "Health",
  "Documents",
  "Accounts",
  "Keys",
];

const normalise = (path: string) => (path.length > 1 ? path.replace(/\/+$/, "") : path);

/** The OpenAPI 3.1 document of one API, generated from `app`'s routes. */
export async function generateDocument<E extends Env>(app: Hono<E>, kind: DocumentKind): Promise<Json> {
  const generated = (await generateSpecs(app, {
    excludeStaticFile: false,
    defaultValidationErrorResponse: false,
    excludeMethods: ["OPTIONS", "HEAD"],
  })) as unknown as {
    paths: Record<string, Record<string, Operation>>;
  };
  const schemas = new Schemas();
  const root = API_ROOT[kind];
  const paths: Record<string, Record<string, Json>> = {};
  for (const [fullPath, item] of Object.entries(generated.paths).sort(([a], [b]) => a.localeCompare(b))) {
    const path = normalise(fullPath);
    if (!path.startsWith(`${root}/`)) continue;
    const relative = path.slice(root.length);
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw?.operationId || !raw["x-allele-success"]) continue;
      paths[relative] ??= {};
      paths[relative][method] = buildOperation(kind, raw, schemas);
    }
  }
  schemas.convert(AnyError, "output"); // the ERROR component every error response refers to
  const hooks = kind === "public" ? webhooks(schemas) : undefined;
  const used = new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags as string[])));
  // The order a reader meets them in; a tag not listed here goes last.
  const tags = [...TAG_ORDER.filter((t) => used.has(t)), ...[...used].filter((t) => !TAG_ORDER.includes(t)).sort()];
  return {
    openapi: "3.1.0",
    info: documentInfo(kind),
    servers: [{ url: root, description: "this deployment" }],
    tags: [...tags, ...(hooks ? ["Webhook events"] : [])].map((name) => ({ name })),
    paths,
    ...(hooks ? { webhooks: hooks } : {}),
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.named).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: SECURITY_SCHEMES[kind],
      headers: HEADERS,
    },
  };
}

const cache = new WeakMap<object, Map<DocumentKind, Promise<Json>>>();

/** The document of `app`, generated once per app instance. */
export function documentOf<E extends Env>(app: Hono<E>, kind: DocumentKind): Promise<Json> {
  const byKind = cache.get(app) ?? new Map<DocumentKind, Promise<Json>>();
  cache.set(app, byKind);
  if (!byKind.has(kind)) byKind.set(kind, generateDocument(app, kind));
  return byKind.get(kind)!;
}
