// Imports: a pygad.GA run made elsewhere becomes a submission with one succeeded run and its result, so
// it can be inspected and continued here (docs/api.md#imports). No run starts and nothing is charged.
// A run of several objectives becomes a multi-objective result as a run's (docs/api.md#multi-objective),
// its Pareto front computed here from the final population's objective vectors (the SDK sends none).
import type { Bindings } from "../env";
import { newId, nowIso } from "../lib/ids";
import type { GaParameters } from "../model/parameters";
import { getDb } from "../storage/db";
import { insertImport } from "../storage/imports";
import { paretoFront } from "./pareto";
import { type GaResult, IMPORTED, paretoFrontFiles, r2Key, reportFiles, rowFitness, storeResultFiles, summaryFile } from "./result-files";

/** The outcome of a run as the client reported it (population included when it sent it), its objectives read. */
export type ImportedOutcome = {
  best_solution: number[];
  best_solution_generation: number | null;
  generations_completed: number;
  population?: number[][];
  best_solution_idx?: number;
  gene_type_single?: boolean;
} & (
  | {
      num_objectives: 1;
      best_solution_fitness: number;
      best_solution_objectives: null;
      best_solutions_fitness: (number | null)[];
      last_generation_fitness?: (number | null)[];
    }
  /**
   * Several objectives: their values for the best solution (best_solution_fitness, as PyGAD gives it, and
   * best_solution_objectives), per generation (PyGAD's best_solutions_fitness) and per solution of the
   * final population.
   */
  | {
      num_objectives: number;
      best_solution_fitness: number[];
      best_solution_objectives: number[];
      best_solutions_fitness: number[][];
      last_generation_fitness?: number[][];
    }
);

export interface ImportInput {
  name: string;
  description: string;
  parameters: GaParameters;
  result: ImportedOutcome;
  origin: Record<string, unknown>;
}

/** Stores an import: its files in R2 first, then every row in one batch; if either fails, the files are removed. */
export async function createImport(env: Bindings, accountId: string, input: ImportInput): Promise<{ id: string; resultId: string }> {
  const now = nowIso();
  const id = newId();
  const runId = newId();
  const resultId = newId();
  const { result } = input;
  // Several objectives: the front of the final population, when the client sent it with its objective vectors.
  const front =
    result.best_solution_objectives !== null && result.population && result.last_generation_fitness
      ? paretoFront(result.last_generation_fitness, result.population)
      : null;
  // What a run reports; its engine and warnings are not known, gene constraints not checked here.
  const outcome: GaResult = {
    ...result,
    // The SDK sends PyGAD's history only: each objective's maximum per generation is not known.
    objective_maxima: null,
    population_history: null,
    stopped_reason: IMPORTED,
    pareto_front: front && { size: front.objectives.length, objectives: front.objectives },
    constraint_violations: null,
  };
  const summary = summaryFile({ result_id: resultId, submission_id: id, run_id: runId }, outcome, {
    engine: null,
    warnings: [],
    parameters: input.parameters,
    origin: input.origin,
    created_at: now,
  });
  const files = [summary, ...reportFiles(outcome), ...(front ? paretoFrontFiles(result.num_objectives, front) : [])];
  try {
    const stored = await storeResultFiles(env.FILES, resultId, files);
    await insertImport(getDb(env.DB), {
      submission: {
        id,
        accountId,
        name: input.name,
        nameLower: input.name.toLowerCase(),
        description: input.description,
        source: "import",
        status: "succeeded",
        parameters: input.parameters,
        latestRunId: runId,
        createdAt: now,
        updatedAt: now,
      },
      run: {
        id: runId,
        submissionId: id,
        accountId,
        kind: "import",
        status: "succeeded",
        parameters: input.parameters,
        paidWithCredits: false,
        queuedAt: now,
        enqueuedAt: now,
        startedAt: now,
        finishedAt: now,
        generationsCompleted: result.generations_completed,
        bestSolutionFitness: rowFitness(result.best_solution_fitness),
        creditsChargedMicro: 0,
        createdAt: now,
        updatedAt: now,
      },
      result: {
        id: resultId,
        accountId,
        submissionId: id,
        runId,
        name: input.name,
        bestSolution: result.best_solution,
        bestSolutionFitness: rowFitness(result.best_solution_fitness),
        bestSolutionGeneration: result.best_solution_generation,
        bestSolutionsFitness: result.best_solutions_fitness,
        generationsCompleted: result.generations_completed,
        stoppedReason: IMPORTED,
        numObjectives: result.num_objectives,
        bestSolutionObjectives: result.best_solution_objectives,
        paretoFrontSize: outcome.pareto_front?.size ?? null,
        parameters: input.parameters,
        createdAt: now,
        updatedAt: now,
      },
      files: stored.map((f) => ({ resultId, name: f.name, contentType: f.contentType, sizeBytes: f.size, r2Key: f.key, createdAt: now })),
    });
  } catch (err) {
    await env.FILES.delete(files.map((f) => r2Key(resultId, f.name)));
    throw err;
  }
  return { id, resultId };
}
