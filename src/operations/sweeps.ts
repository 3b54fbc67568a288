// Parameter sweeps for both adapters (docs/api.md#sweeps): the body of POST /sweeps and its rules (the
// base is checked as a submission's body is, with every combination of the grid), the creation (one
// submission per combination × seed, each with its own random_seed; the gates counted per child), the
// list, and a sweep's answer with its statistics (docs/api.md#sweep-statistics).
import { z } from "zod";
import { limitsFor, withSweepAdmission } from "../admission/admission";
import { resolveCodeUploads } from "../domain/code-uploads";
import { type RunDataFile, resolveDataFiles } from "../domain/data-files";
import { childrenByCombination, combinationSamples, countedFitness } from "../domain/sweep-figures";
import { admitWaiting } from "../domain/sweep-progress";
import type { Bindings } from "../env";
import { ApiError, type FieldError } from "../errors";
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso } from "../lib/ids";
import { checkEntrySymbols } from "../model/entry-symbols";
import { fieldErrors, text } from "../model/fields";
import { CODE_FIELDS, GA_PARAMETER_SCHEMAS, MULTI_OBJECTIVE_SELECTIONS } from "../model/parameters";
import { meanOrNull } from "../model/statistics";
import {
  type Combination,
  childAt,
  combinationCount,
  combinationsOf,
  compareCombinations,
  GRID_PARAMETERS,
  type Grid,
  gridOperatorProblem,
  isGridParameter,
  MAX_GRID_PARAMETERS,
  MAX_GRID_VALUES,
  MAX_SEEDS,
  MAX_SWEEP_CHILDREN,
  SIGNIFICANCE,
  SWEEP_STATUSES,
  type SweepStatus,
  seedOf,
  verdict,
} from "../model/sweeps";
import { sweepDataFilesStatement } from "../storage/data-files";
import { getDb } from "../storage/db";
import {
  type ChildCounts,
  type ChildRow,
  childCounts,
  insertSweepStatements,
  listSweeps,
  type NewChild,
  noChildren,
  SWEEP_ORDERINGS,
  type SweepOrdering,
  type SweepRow,
  shownStatus,
} from "../storage/sweeps";
import { DEFAULT_ORDERING, type LinkedPage, last, linked, openCursor, paged, paging } from "./paging";
import { type Starter, whileFilesKept } from "./runs";
import { createSubmissionSchema, createSubmissionShape, creationParameters, refuseUnsupported } from "./submissions";

// ---- The body ----

/** What a sweep's base may hold: a submission's fields (each optional here: a combination may supply one), but its name. */
// A start population is a submission's own (stored once per submission); a sweep's children do not share one.
const { name: _name, description: _description, initial_population: _population, ...baseShape } = createSubmissionShape;
const baseSchema = z.strictObject(baseShape).partial();

const valueText = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
/** "sol_per_pop=20, mutation_type=swap": a combination in words. */
export const combinationText = (combo: Combination) =>
  Object.entries(combo)
    .map(([k, v]) => `${k}=${valueText(v)}`)
    .join(", ");

/** The grid's own rules: known parameters a grid may vary, each value valid for it, no repeats. */
function gridIssues(grid: Record<string, unknown[]>): FieldError[] {
  const issues: FieldError[] = [];
  const keys = Object.keys(grid);
  if (keys.length === 0) issues.push({ field: "grid", message: "must name at least one parameter" });
  if (keys.length > MAX_GRID_PARAMETERS) issues.push({ field: "grid", message: `may vary at most ${MAX_GRID_PARAMETERS} parameters` });
  for (const key of keys) {
    if (!isGridParameter(key)) {
      const why =
        key === "random_seed"
          ? "is set per child (base.random_seed seeds the derivation, docs/api.md#sweep-seeds)"
          : key === "data_files"
            ? "cannot be varied by a grid: every child reads the base's data_files (docs/api.md#sweep-data-files)"
            : GA_PARAMETER_SCHEMAS[key]
              ? "cannot be varied by a grid (code fields and their entries are the base's)"
              : `is not a parameter a grid may vary (one of: ${GRID_PARAMETERS.join(", ")})`;
      issues.push({ field: `grid.${key}`, message: why });
      continue;
    }
    const seen = new Set<string>();
    grid[key]!.forEach((value, i) => {
      const parsed = GA_PARAMETER_SCHEMAS[key]!.safeParse(value);
      if (!parsed.success || value === undefined) {
        const message = parsed.success ? "is required" : fieldErrors(parsed.error)[0]!.message;
        issues.push({ field: `grid.${key}.${i}`, message });
      } else if (gridOperatorProblem(key, value)) {
        issues.push({ field: `grid.${key}.${i}`, message: gridOperatorProblem(key, value)! });
      } else if (seen.has(JSON.stringify(value))) {
        issues.push({ field: `grid.${key}.${i}`, message: "repeats an earlier value" });
      }
      seen.add(JSON.stringify(value));
    });
  }
  return issues;
}

/**
 * Each combination checked as a submission's body is (the same schema and rules between fields, on the
 * base with the combination's values): the first combination that fails names its problems — a grid
 * parameter's at its entry (`grid.<parameter>.<i>`), another at `base.<field>`, each saying the combination.
 */
function combinationIssues(base: Record<string, unknown>, grid: Grid): FieldError[] {
  const keys = Object.keys(grid);
  for (const combo of combinationsOf(grid)) {
    const parsed = createSubmissionSchema.safeParse({ ...base, ...combo });
    if (parsed.success) continue;
    const where = keys.length ? ` (in the combination ${combinationText(combo)})` : "";
    return parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? "");
      const at = keys.includes(field)
        ? `grid.${field}.${grid[field]!.findIndex((v) => JSON.stringify(v) === JSON.stringify(combo[field]))}`
        : issue.path.length
          ? `base.${issue.path.join(".")}`
          : "base";
      return { field: at, message: `${issue.message}${where}` };
    });
  }
  return [];
}

/** The body of POST /sweeps. */
export const createSweepSchema = z
  .strictObject({
    name: text(200).default(""),
    description: text(2000).default(""),
    base: baseSchema.meta({
      description:
        "the submission's body (docs/api.md#creation-parameters) every child shares, but `name`, `description` and `initial_population`; a field a grid parameter supplies may be left out",
    }),
    grid: z
      .record(z.string(), z.array(z.unknown()).min(1).max(MAX_GRID_VALUES))
      .meta({ description: "each parameter to vary with the values it takes (docs/api.md#sweep-grid)" }),
    seeds: z.number().int().min(1).max(MAX_SEEDS).meta({ description: "children per combination, each with its own random_seed" }),
  })
  .superRefine((body, ctx) => {
    const add = (issues: FieldError[]) => {
      for (const { field, message } of issues) ctx.addIssue({ code: "custom", path: field.split("."), message });
    };
    const own = gridIssues(body.grid);
    if (own.length) return add(own);
    const selections = [body.base.parent_selection_type, ...(body.grid.parent_selection_type ?? [])];
    if (selections.some((s) => typeof s === "string" && (MULTI_OBJECTIVE_SELECTIONS as readonly string[]).includes(s))) {
      return add([
        {
          field: body.base.parent_selection_type !== undefined ? "base.parent_selection_type" : "grid.parent_selection_type",
          message: `multi-objective sweeps (${MULTI_OBJECTIVE_SELECTIONS.join(", ")}) are not supported yet: a sweep compares one best fitness per run`,
        },
      ]);
    }
    const children = combinationCount(body.grid) * body.seeds;
    if (children > MAX_SWEEP_CHILDREN) {
      return add([
        { field: "seeds", message: `makes ${children} children (combinations × seeds); a sweep has at most ${MAX_SWEEP_CHILDREN}` },
      ]);
    }
    add(combinationIssues(body.base, body.grid));
  });
export type CreateSweepBody = z.output<typeof createSweepSchema>;

// ---- Creation ----

/** An error of the base's fields named as the body holds them (`base.<field>`). */
function inBase(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  const details = { ...err.details };
  if (typeof details.field === "string") details.field = `base.${details.field}`;
  if (Array.isArray(details.fields))
    details.fields = details.fields.map((f: unknown) =>
      typeof f === "string" ? `base.${f}` : f && typeof f === "object" && "field" in f ? { ...f, field: `base.${String(f.field)}` } : f,
    );
  return new ApiError(err.code, err.message, details, err.headers);
}

/** A child's name: the sweep's, its combination and its seed (at most 200 characters, as any name). */
const childName = (name: string, combo: Combination, seed: number) => {
  const full = `${name || "sweep"} · ${combinationText(combo)} · seed ${seed}`;
  return full.length <= 200 ? full : `${full.slice(0, 199)}…`;
};

/** The first seed of a sweep without base.random_seed: the first 4 bytes of SHA-256 of its id. */
const derivedSeedBase = async (sweepId: string) => Number.parseInt((await sha256Hex(sweepId)).slice(0, 8), 16);

export interface StartedSweep {
  row: SweepRow;
  children: NewChild[];
}

/**
 * Creates a sweep: one submission per combination × seed, waiting for the account's slots (each is
 * admitted as a submission is, one at a time, as slots free). Refused up front, with nothing created,
 * past the children cap (403) or any gate counted per child: the daily quota for every child (429), a
 * combination's parameter caps (403), credits (402); the request itself counts once per minute.
 */
export async function startSweep(env: Bindings, who: Starter, body: CreateSweepBody): Promise<StartedSweep> {
  const account = who.account;
  const db = getDb(env.DB);
  let base: Record<string, unknown>;
  // What the base's data_files stand for, recorded with every child as with a submission (docs/api.md#sweep-data-files).
  let dataFiles: RunDataFile[];
  try {
    base = await resolveCodeUploads(db, account.id, body.base as Record<string, unknown>, CODE_FIELDS);
    refuseUnsupported(base, ["new"]); // a sweep varies a job of your own code (docs/api.md#sweeps), not a quick type
    checkEntrySymbols(base);
    dataFiles = await resolveDataFiles(env, account, body.base.data_files);
  } catch (err) {
    throw inBase(err);
  }
  const combos = combinationsOf(body.grid);
  const children = combos.length * body.seeds;
  const limits = limitsFor(env, account, who.payment);
  if (children > limits.max_sweep_children) {
    throw new ApiError(
      "tier_limit_exceeded",
      `This sweep makes ${children} children (${combos.length} combinations × ${body.seeds} seeds); your limit is ${limits.max_sweep_children} per sweep.`,
      { parameter: "sweep_children", limit: limits.max_sweep_children, requested: children },
    );
  }
  // Every combination as a submission's parameters (defaults filled in), for the parameter caps.
  const parameters = combos.map((combo) => creationParameters(createSubmissionSchema.parse({ ...base, ...combo })).parameters);
  const gridKeys = Object.keys(body.grid);
  const shared = Object.fromEntries(
    Object.entries(parameters[0]!).filter(([k, v]) => v !== undefined && !gridKeys.includes(k) && k !== "random_seed"),
  );

  const id = newId();
  const given = typeof base.random_seed === "number" ? base.random_seed : null;
  const seedBase = given ?? (await derivedSeedBase(id));
  const now = nowIso();
  const newChildren: NewChild[] = Array.from({ length: children }, (_, index) => {
    const at = childAt(index, combos.length);
    const seed = seedOf(seedBase, at.seed);
    return {
      id: newId(),
      run_id: newId(),
      index,
      name: childName(body.name, combos[at.combination]!, seed),
      seed,
      o: combos[at.combination]!,
    };
  });
  const row: SweepRow = {
    id,
    accountId: account.id,
    name: body.name,
    description: body.description,
    source: who.source,
    status: "running",
    paidWithCredits: who.payment === "credits",
    base: shared,
    grid: body.grid,
    combinations: combos,
    seeds: body.seeds,
    seedBase,
    seedGiven: given !== null,
    children,
    waitingOn: null,
    cancelRequestedAt: null,
    endToken: null,
    endedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await withSweepAdmission(
    env,
    account,
    parameters,
    newChildren.map((c) => c.run_id),
    who.deferredRate,
    async () => {
      const statements = [
        ...insertSweepStatements(db, row, newChildren, gridKeys),
        ...(dataFiles.length ? [sweepDataFilesStatement(db, row.id, dataFiles, now)] : []),
      ];
      await whileFilesKept(db.batch(statements as unknown as [(typeof statements)[0], ...(typeof statements)[number][]])).catch((err) => {
        throw inBase(err);
      });
    },
    who.payment,
  );
  // The first children take the slots that are free now (the rest as runs end; the cron if this fails).
  await admitWaiting(env, account.id).catch((err) => console.error("admitting a new sweep's children failed; the cron will", id, err));
  return { row, children: newChildren };
}

// ---- The list ----

export const sweepsListQuery = paged(
  z.strictObject({
    ...paging,
    status: last(
      z
        .string()
        .transform((csv) => csv.split(",").map((s) => s.trim()))
        .refine(
          (list): list is SweepStatus[] => list.every((s) => (SWEEP_STATUSES as readonly string[]).includes(s)),
          `must be a comma-separated list of: ${SWEEP_STATUSES.join(", ")}`,
        ),
    ).optional(),
    ordering: last(z.enum(Object.keys(SWEEP_ORDERINGS) as [SweepOrdering, ...SweepOrdering[]])).default(DEFAULT_ORDERING),
  }),
);
export type SweepsListQuery = z.output<typeof sweepsListQuery>;

/** A page of the account's sweeps with their children's counts, and its links. */
export async function sweepsPage(
  env: Bindings,
  accountId: string,
  q: SweepsListQuery,
  url: string,
): Promise<LinkedPage<SweepRow> & { counts: Map<string, ChildCounts> }> {
  const cursor = await openCursor(env, accountId, q.cursor);
  const db = getDb(env.DB);
  const page = await linked(env, accountId, url, await listSweeps(db, accountId, { status: q.status }, q.ordering, q.page_size, cursor));
  return {
    ...page,
    counts: await childCounts(
      db,
      page.rows.map((r) => r.id),
    ),
  };
}

// ---- Answers ----

export const sweepUrl = (origin: string, id: string) => `${origin}/api/v1/sweeps/${id}`;

/** The 202 of POST /sweeps: the sweep and every child submission (all queued). */
export function sweepAccepted(origin: string, started: StartedSweep, requestId: string) {
  const { row, children } = started;
  return {
    id: row.id,
    name: row.name,
    status: "running" as const,
    children: row.children,
    created_at: row.createdAt,
    status_url: sweepUrl(origin, row.id),
    submissions: children.map((c) => ({
      id: c.id,
      combination: childAt(c.index, row.combinations.length).combination,
      random_seed: c.seed,
      status: "queued" as const,
      status_url: `${origin}/api/v1/submissions/${c.id}`,
    })),
    request_id: requestId,
  };
}

export function sweepListItem(row: SweepRow, counts: ChildCounts) {
  return {
    id: row.id,
    name: row.name,
    status: shownStatus(row),
    source: row.source,
    children: counts.queued + counts.running + counts.succeeded + counts.failed + counts.cancelled,
    counts,
    created_at: row.createdAt,
    ended_at: row.endedAt,
  };
}

/** The counts of a sweep's children by status (waiting ones also counted apart). */
export function countChildren(children: readonly ChildRow[]): ChildCounts {
  const counts = noChildren();
  for (const c of children) {
    counts[c.status]++;
    if (c.status === "queued" && c.awaitingSlot) counts.waiting++;
  }
  return counts;
}

const credits = (micro: number | null) => (micro === null ? null : micro / 1_000_000);

/** Whether a child ran (its time and credits enter the means): it succeeded or failed. */
const ran = (c: ChildRow) => c.status === "succeeded" || c.status === "failed";

/**
 * A sweep with its children and statistics (docs/api.md#sweep-statistics): per combination its values,
 * runs, the summary of the final best fitness over its seeds, mean run time and credits, and the
 * Mann–Whitney test against the best combination.
 */
export function sweepFull(origin: string, row: SweepRow, children: readonly ChildRow[]) {
  const count = row.combinations.length;
  const groups = childrenByCombination(count, children);
  const { best, rows } = compareCombinations(combinationSamples(count, children));
  return {
    ...sweepListItem(row, countChildren(children)),
    description: row.description,
    base: row.base,
    grid: row.grid,
    seeds: row.seeds,
    seed_base: row.seedBase,
    payment: row.paidWithCredits ? ("credits" as const) : ("plan" as const),
    waiting_on: row.waitingOn,
    cancel_requested: row.cancelRequestedAt !== null,
    credits_charged: children.reduce((sum, c) => sum + (c.creditsChargedMicro ?? 0), 0) / 1_000_000,
    best_combination: best,
    combinations: row.combinations.map((parameters, index) => {
      const group = groups[index]!;
      const ranRuns = group.filter(ran);
      const { summary, test } = rows[index]!;
      return {
        index,
        parameters,
        is_best: index === best,
        runs: group.map((c) => ({
          submission_id: c.submissionId,
          run_id: c.runId,
          random_seed: c.randomSeed,
          status: c.status,
          waiting: c.status === "queued" && c.awaitingSlot,
          result_id: c.resultId,
          best_solution_fitness: countedFitness(c),
          generations_completed: c.generationsCompleted,
          execution_duration_ms: c.executionDurationMs,
          credits_charged: credits(c.creditsChargedMicro),
        })),
        statistics: {
          n: summary.n,
          min: summary.min,
          q1: summary.q1,
          median: summary.median,
          q3: summary.q3,
          max: summary.max,
          mean: summary.mean,
          mean_execution_duration_ms: meanOrNull(ranRuns.flatMap((c) => (c.executionDurationMs === null ? [] : [c.executionDurationMs]))),
          mean_credits_charged: meanOrNull(
            ranRuns.flatMap((c) => (c.creditsChargedMicro === null ? [] : [c.creditsChargedMicro / 1_000_000])),
          ),
        },
        comparison: test && {
          u: test.u,
          p_value: test.p,
          method: test.method,
          significant: test.p < SIGNIFICANCE,
          verdict: verdict(test.p),
        },
      };
    }),
    status_url: sweepUrl(origin, row.id),
    updated_at: row.updatedAt,
  };
}
export type SweepView = ReturnType<typeof sweepFull>;
