// /api/v1/imports: a pygad.GA run made elsewhere, as the Vilvik SDK's `vilvik.push(ga)` sends it, becomes a
// submission (`source: import`) with one result, of one objective or several, that can be inspected and
// continued (docs/api.md#imports).
// It passes the per-minute gate and idempotency like every write, but starts no run: no slot, quota or credit.
import { Hono } from "hono";
import { createImport } from "../../domain/imports";
import type { AppEnv } from "../context";
import { requireScope } from "../middleware/auth";
import { idempotent } from "../middleware/idempotency";
import { describe } from "../openapi/describe";
import { checkImport, importSchema, MAX_IMPORT_BYTES } from "../validation/imports";
import { ImportCreated } from "../validation/responses";
import { jsonBody } from "../validation/validate";
import { origin, submissionUrls } from "../views";

export const importsRoutes = new Hono<AppEnv>().post(
  "/",
  describe({
    operationId: "createImport",
    tag: "Imports",
    summary: "Import a pygad.GA run made elsewhere (what the Vilvik SDK's `vilvik.push(ga)` sends)",
    description:
      "Creates a succeeded submission (`source: import`) with one result that can be continued: a run of several objectives (`result.best_solution_fitness` a list) becomes a multi-objective result, its Pareto front computed from `result.population` and `result.last_generation_fitness`. Starts no run; passes the per-minute limit and idempotency (docs/api.md#imports).",
    success: { 201: ImportCreated },
    errors: ["entry_symbol_required", "entry_symbol_not_found"],
  }),
  requireScope("submissions:write"),
  jsonBody(importSchema, {
    maxBytes: MAX_IMPORT_BYTES,
    tooLarge: "An import's size is mostly result.population: push a smaller population, or push without it (not continuable).",
  }),
  idempotent,
  async (c) => {
    const body = c.req.valid("json");
    const { parameters, outcome } = checkImport(body);
    const { id, resultId } = await createImport(c.env, c.get("caller").accountId, {
      name: body.name ?? "",
      description: body.description,
      parameters,
      result: outcome,
      origin: body.origin ?? {},
    });
    const base = origin(c);
    return c.json(
      {
        id,
        status: "succeeded",
        source: "import",
        result_id: resultId,
        ...submissionUrls(base, id),
        result_url: `${base}/api/v1/results/${resultId}`,
      },
      201,
    );
  },
);
