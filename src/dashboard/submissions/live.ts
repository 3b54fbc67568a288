// What a submission's progress panel shows and polls (docs/dashboard.md#live-progress): its latest run's
// progress, its trail as the chart draws it, and the best fitness of the progress line.
import { isLive } from "../../model/runs";
import type { ResultRow } from "../../storage/results";
import type { RunRow, SubmissionRow } from "../../storage/submissions";
import { trailChart } from "../shared/charts";
import { fmtNumber } from "../shared/layout";
import { bestFitnessText } from "../shared/result-parts";

/**
 * Several objectives, at the run's latest progress report: the best solution's objective values (PyGAD's
 * history), else — a trail kept before migration 0007 — each objective's maximum over the population; null for one.
 */
const bestObjectives = (run: RunRow) => {
  const last = run.progressTrail?.at(-1);
  return last?.[3] ?? last?.[2] ?? null;
};

/**
 * What the detail page's live panel polls every second: the latest run's progress and its trail as the
 * chart draws it (`points`: how many points the trail has, which tells the page whether to redraw).
 */
export function liveView(s: SubmissionRow, run: RunRow) {
  const trail = run.progressTrail ?? [];
  const live = isLive(s.status);
  return {
    status: s.status,
    run_id: run.id,
    run_kind: run.kind,
    generations_completed: run.generationsCompleted,
    num_generations: run.parameters.num_generations,
    best_solution_fitness: run.bestSolutionFitness,
    best_objectives: bestObjectives(run),
    points: trail.length,
    panels: trailChart(trail, live ? `run ${run.id} (live)` : `run ${run.id}`),
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    error: run.errorCode ? { code: run.errorCode, message: run.errorMessage ?? "" } : null,
  };
}
export type LiveView = ReturnType<typeof liveView>;

/** The best fitness the progress line shows: the result's when there is one, else the run's progress. */
export function progressFitness(run: RunRow, result: ResultRow | undefined): { label: string; text: string } {
  if (result)
    return result.numObjectives > 1
      ? { label: "best objectives", text: (result.bestSolutionObjectives ?? []).map((v) => fmtNumber(v)).join(", ") }
      : { label: "best fitness", text: bestFitnessText(result) };
  const objectives = bestObjectives(run);
  if (objectives) return { label: "best objectives", text: objectives.map((v) => fmtNumber(v)).join(", ") };
  return { label: "best fitness", text: fmtNumber(run.bestSolutionFitness) };
}
