// What the comparison of runs shows (docs/dashboard.md#compare): the runs a URL names — the signed-in
// account's only, in the order given — with their results, and the table of their parameters: the ones
// that differ first, those they share apart. A run is named by its run id (docs/decisions.md#run-id).
import type { Bindings } from "../../env";
import { notFound } from "../../errors";
import { isCodeField } from "../../model/parameters";
import type { RunKind, RunStatus, TrailPoint } from "../../model/runs";
import { getDb } from "../../storage/db";
import { type ResultRow, resultsOfRuns } from "../../storage/results";
import { accountRunsByIds } from "../../storage/submissions";
import { type ComparedCurve, compareChart } from "../shared/charts";
import { MAX_COMPARED } from "../shared/compare";
import { plain } from "../shared/layout";

/** The runs a comparison's URL asks for: `runs=a,b` (comma-separated, possibly repeated), distinct, in order. */
export function comparedIds(values: string[]): { ids: string[]; canonical: boolean; error: string | null } {
  const ids = [
    ...new Set(
      values
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ];
  const canonical = values.length <= 1 && (values[0] ?? "") === ids.join(",");
  if (ids.some((id) => !/^[A-Za-z0-9]{1,64}$/.test(id))) return { ids: [], canonical, error: "A run id is 12 letters and digits." };
  if (ids.length > MAX_COMPARED) {
    return {
      ids,
      canonical,
      error: `You picked ${ids.length} runs; at most ${MAX_COMPARED} can be compared at once. Remove some and compare again.`,
    };
  }
  return { ids, canonical, error: null };
}

/** One run of a comparison. */
export interface ComparedRun {
  runId: string;
  kind: RunKind | null;
  status: RunStatus;
  name: string;
  submissionId: string;
  result: ResultRow | null;
  parameters: Record<string, unknown>;
  generationsCompleted: number | null;
  bestSolutionFitness: number | null;
  trail: TrailPoint[];
}

/**
 * The account's runs `ids`, in that order, each with its result; a result whose submission (and so its
 * run) was deleted stands for its run. Any id that is not one of the account's runs is 404, as elsewhere.
 */
export async function loadCompared(env: Bindings, accountId: string, ids: string[]): Promise<ComparedRun[]> {
  const db = getDb(env.DB);
  const [runs, results] = await Promise.all([accountRunsByIds(db, accountId, ids), resultsOfRuns(db, accountId, ids)]);
  const runById = new Map(runs.map((r) => [r.run.id, r]));
  const resultByRun = new Map(results.map((r) => [r.runId, r]));
  return ids.map((id): ComparedRun => {
    const found = runById.get(id);
    const result = resultByRun.get(id) ?? null;
    if (found) {
      const { run, name } = found;
      return {
        runId: id,
        kind: run.kind,
        status: run.status,
        name,
        submissionId: run.submissionId,
        result,
        parameters: run.parameters,
        generationsCompleted: run.generationsCompleted,
        bestSolutionFitness: result ? result.bestSolutionFitness : run.bestSolutionFitness,
        trail: run.progressTrail ?? [],
      };
    }
    if (!result) throw notFound("run");
    return {
      runId: id,
      kind: null,
      status: "succeeded",
      name: result.name,
      submissionId: result.submissionId,
      result,
      parameters: result.parameters,
      generationsCompleted: result.generationsCompleted,
      bestSolutionFitness: result.bestSolutionFitness,
      trail: [],
    };
  });
}

/** A curve's label: the submission's name, the run's kind and its id. */
export const curveLabel = (r: ComparedRun) => `${r.name || "(unnamed)"} · ${r.kind ?? "run"} ${r.runId}`;

export const comparedChart = (runs: ComparedRun[]) =>
  compareChart(
    runs.map(
      (r): ComparedCurve => ({ label: curveLabel(r), runId: r.runId, history: r.result?.bestSolutionsFitness ?? null, trail: r.trail }),
    ),
  );

/** A row of the parameters table: the parameter and its value in each run, and whether they all agree. */
export interface ParameterRow {
  name: string;
  values: string[];
  same: boolean;
}

/**
 * Every parameter any of the runs has, as text per run ("—" where a run has none): code by a letter per
 * distinct source (A, B, …, with its size), so two runs with the same fitness function read the same.
 * Rows that differ come first, in the order of the parameters' first appearance.
 */
export function parameterRows(runs: ComparedRun[]): ParameterRow[] {
  const names = [...new Set(runs.flatMap((r) => Object.keys(r.parameters)))];
  const sources = new Map<string, string>();
  const codeText = (source: string) => {
    if (!sources.has(source)) sources.set(source, String.fromCharCode(65 + (sources.size % 26)));
    return `source ${sources.get(source)} (${source.split("\n").length} lines)`;
  };
  const rows = names.map((name): ParameterRow => {
    const raw = runs.map((r) => r.parameters[name]);
    const values = raw.map((v) => (v === undefined ? "—" : isCodeField(name) && typeof v === "string" ? codeText(v) : plain(v)));
    return { name, values, same: values.every((v) => v === values[0]) };
  });
  return [...rows.filter((r) => !r.same), ...rows.filter((r) => r.same)];
}
