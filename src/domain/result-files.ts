// The downloadable files of a result (docs/api.md#result-files), built from the worker's completion report,
// and the files the GA worker uploads apart before it (staged under runs/{run_id}/, filed by endRun).
import type { ConstraintViolation, PopulationPoint } from "../model/runs";
import { type Fitness, fitnessPlot, paretoPlot } from "./plots";

export type { Fitness } from "./plots";

export interface GaResult {
  best_solution: number[];
  /** PyGAD's best_solution() fitness: one objective's number ("inf"/"-inf" when infinite), or the objective values of several. */
  best_solution_fitness: Fitness | number[];
  /** Several objectives: the objective values of best_solution (as best_solution_fitness); one objective: null. */
  best_solution_objectives: number[] | null;
  best_solution_generation: number | null;
  /** PyGAD's history: per generation, the best solution's fitness (a number; several objectives: its values). */
  best_solutions_fitness: (Fitness | number[])[];
  /** Several objectives: per generation, each objective's maximum over the population; null for one (and imports). */
  objective_maxima: number[][] | null;
  /** The population's best, mean, median and worst fitness per generation (bounded); null for imports. */
  population_history: PopulationPoint[] | null;
  generations_completed: number;
  /** Inline only for small runs and tests; normally uploaded apart (see stagedKey). */
  population?: number[][] | null;
  stopped_reason: string;
  num_objectives: number;
  /** Several objectives: the final front's objective vectors (its solutions are in pareto_front.json). */
  pareto_front: { size: number; objectives: number[][] } | null;
  constraint_violations: ConstraintViolation[] | null;
}

/** A fitness as a row holds it: a finite number, else null (JSON and D1 rows have no infinity). */
export const rowFitness = (f: Fitness | number[]): number | null => (typeof f === "number" && Number.isFinite(f) ? f : null);

export interface ResultFile {
  name: string;
  contentType: string;
  body: string;
}

/** `stopped_reason` of an imported result (docs/api.md#imports): how the run ended elsewhere is not known. */
export const IMPORTED = "imported";

export const POPULATION_FILE = "population.json";
export const LOGS_FILE = "logs.txt";

/** Files the GA worker uploads before its completion report (PUT …/population, PUT …/files/{name}). */
export const STAGED_FILES = {
  [POPULATION_FILE]: "application/json",
  "pareto_front.json": "application/json",
  "pareto_front.csv": "text/csv",
  "pareto_history.json": "application/json",
  "solutions.json": "application/json",
  "best_solutions.json": "application/json",
} as const satisfies Record<string, string>;
export type StagedFile = keyof typeof STAGED_FILES;
export const STAGED_NAMES = Object.keys(STAGED_FILES) as StagedFile[];
export const isStagedFile = (name: string): name is StagedFile => Object.hasOwn(STAGED_FILES, name);

export const r2Key = (resultId: string, name: string) => `results/${resultId}/${name}`;

/** Where the GA worker's upload of `name` waits for the run's end (it stays there as the result's file). */
export const stagedKey = (runId: string, name: StagedFile) => `runs/${runId}/${name}`;

/** Where a durable run's last checkpoint is in R2 (one key per run, chosen by the server: the latest replaces it). */
export const checkpointKey = (runId: string) => `checkpoints/${runId}`;

const csvCell = (v: Fitness) => (v === null ? "" : String(v));

/**
 * fitness_history.csv: per generation the best fitness (one objective), or the best solution's value of
 * each objective (`objective_i`, PyGAD's history) followed, when the result has them, by each
 * objective's maximum over the population (`max_objective_i`, the objective_maxima series); then, when
 * the result has its population_history, the population's mean, median and worst fitness (one
 * objective: `mean_fitness`, `median_fitness`, `worst_fitness`; several: `mean_objective_i`, … per
 * objective), empty for a generation the bounded history does not hold.
 */
function historyCsv(result: GaResult): string {
  const count = result.num_objectives;
  const stats = result.population_history;
  const byGeneration = new Map((stats ?? []).map((p) => [p.generation, p]));
  const keys = ["mean", "median", "worst"] as const;
  const statColumns = keys.flatMap((key) =>
    count <= 1 ? [`${key}_fitness`] : Array.from({ length: count }, (_, i) => `${key}_objective_${i}`),
  );
  const statCells = (generation: number): string[] => {
    if (!stats) return [];
    const p = byGeneration.get(generation);
    return keys.flatMap((key) => {
      const v = p?.[key];
      if (count <= 1) return [p && !Array.isArray(v) ? csvCell(v ?? null) : ""];
      return Array.from({ length: count }, (_, i) => (Array.isArray(v) ? csvCell(v[i] ?? null) : ""));
    });
  };
  if (count <= 1) {
    return [
      ["generation", "best_fitness", ...(stats ? statColumns : [])].join(","),
      ...result.best_solutions_fitness.map((f, i) => [i, csvCell(f as Fitness), ...statCells(i)].join(",")),
    ].join("\n");
  }
  const maxima = result.objective_maxima;
  const header = [
    "generation",
    ...Array.from({ length: count }, (_, i) => `objective_${i}`),
    ...(maxima ? Array.from({ length: count }, (_, i) => `max_objective_${i}`) : []),
    ...(stats ? statColumns : []),
  ].join(",");
  const rows = result.best_solutions_fitness.map((row, i) =>
    [i, ...(Array.isArray(row) ? row : []), ...(maxima ? (maxima[i] ?? []) : []), ...statCells(i)].join(","),
  );
  return [header, ...rows].join("\n");
}

/**
 * result.json: the result's summary — its ids, what the report said (the population and the front's
 * vectors are files of their own: the front's size instead), then `more` (engine, warnings, parameters…).
 */
export function summaryFile(
  ids: { result_id: string; submission_id: string; run_id: string },
  result: GaResult,
  more: Record<string, unknown>,
): ResultFile {
  const { population: _population, pareto_front: front, ...reported } = result;
  return {
    name: "result.json",
    contentType: "application/json",
    body: JSON.stringify({ ...ids, ...reported, pareto_front_size: front?.size ?? null, ...more }, null, 2),
  };
}

/** A result's file as stored in R2: what its file row records. */
export interface StoredFile {
  name: string;
  contentType: string;
  size: number;
  key: string;
}

/** Writes `files` to R2 under the result's keys (each body encoded once); what each file row records. */
export function storeResultFiles(bucket: R2Bucket, resultId: string, files: ResultFile[]): Promise<StoredFile[]> {
  return Promise.all(
    files.map(async (f) => {
      const bytes = new TextEncoder().encode(f.body);
      const key = r2Key(resultId, f.name);
      await bucket.put(key, bytes, { httpMetadata: { contentType: f.contentType } });
      return { name: f.name, contentType: f.contentType, size: bytes.byteLength, key };
    }),
  );
}

/**
 * pareto_front.json and pareto_front.csv of a front the Worker computed (an import's; a run's are the GA
 * worker's uploads, container/allele_worker/child/staged_files.py, in the same forms).
 */
export function paretoFrontFiles(numObjectives: number, front: { objectives: number[][]; solutions: number[][] }): ResultFile[] {
  const genes = front.solutions[0]?.length ?? 0;
  const header = [
    "index",
    ...Array.from({ length: numObjectives }, (_, i) => `objective_${i}`),
    ...Array.from({ length: genes }, (_, i) => `gene_${i}`),
  ];
  const lines = front.objectives.map((values, i) => [i, ...values, ...front.solutions[i]!].join(","));
  return [
    {
      name: "pareto_front.json",
      contentType: STAGED_FILES["pareto_front.json"],
      body: JSON.stringify({ num_objectives: numObjectives, objectives: front.objectives, solutions: front.solutions }),
    },
    { name: "pareto_front.csv", contentType: STAGED_FILES["pareto_front.csv"], body: `${[header.join(","), ...lines].join("\n")}\n` },
  ];
}

/**
 * The files built from the report alone (besides result.json): fitness_history.csv, best_solution.csv,
 * fitness.svg, pareto_front.svg (several objectives), population.json when the report carried it
 * inline, logs.txt when the run printed anything (its own stdout and stderr, as the GA worker kept
 * them: ≤ 64 KiB).
 */
export function reportFiles(result: GaResult, output: string | null = null): ResultFile[] {
  const best = ["gene,value", ...result.best_solution.map((v, i) => `${i},${v}`)].join("\n");
  const files = [
    { name: "fitness_history.csv", contentType: "text/csv", body: `${historyCsv(result)}\n` },
    { name: "best_solution.csv", contentType: "text/csv", body: `${best}\n` },
    {
      name: "fitness.svg",
      contentType: "image/svg+xml",
      body: fitnessPlot(result.best_solutions_fitness, result.num_objectives, {
        imported: result.stopped_reason === IMPORTED,
        maxima: result.objective_maxima,
        population: result.population_history,
      }),
    },
  ];
  if (result.pareto_front)
    files.push({ name: "pareto_front.svg", contentType: "image/svg+xml", body: paretoPlot(result.pareto_front.objectives) });
  if (result.population) files.push({ name: POPULATION_FILE, contentType: "application/json", body: JSON.stringify(result.population) });
  if (output) files.push({ name: LOGS_FILE, contentType: "text/plain; charset=utf-8", body: output });
  return files;
}
