// What a result's pages read from its files in R2 besides its row (docs/dashboard.md#results): the
// objective vectors of the final Pareto front (pareto_front.json), and where a single objective's best
// fitness was infinite (rows hold null there; result.json says "inf" or "-inf").
import type { ParetoHistory } from "../../domain/pareto";
import type { Bindings } from "../../env";
import type { ResultFileRow, ResultRow } from "../../storage/results";

/** The most of a file a page reads: a front's objectives come first in pareto_front.json, so its head is enough. */
const READ_BYTES = 4 * 1024 * 1024;

const isVectors = (v: unknown): v is number[][] =>
  Array.isArray(v) && v.every((o) => Array.isArray(o) && o.length > 0 && o.every((x) => typeof x === "number"));

/**
 * The front's objective vectors, or null (no front, its upload failed, or it cannot be read). A front of
 * many genes can be large: past READ_BYTES only the head of the file is read, which holds
 * `{"num_objectives":…,"objectives":[…]` before the solutions (the GA worker writes it in that order).
 */
export async function frontObjectives(env: Bindings, files: ResultFileRow[]): Promise<number[][] | null> {
  const file = files.find((f) => f.name === "pareto_front.json");
  if (!file) return null;
  const whole = file.sizeBytes <= READ_BYTES;
  const object = await env.FILES.get(file.r2Key, whole ? undefined : { range: { offset: 0, length: READ_BYTES } });
  if (!object) return null;
  const text = await object.text();
  try {
    const cut = whole ? -1 : text.indexOf(',"solutions":');
    if (!whole && cut < 0) return null;
    const parsed = JSON.parse(whole ? text : `${text.slice(0, cut)}}`) as { objectives?: unknown };
    return isVectors(parsed.objectives) ? parsed.objectives : null;
  } catch {
    return null;
  }
}

const isRows = (v: unknown, width: number): v is (number | null)[][] =>
  Array.isArray(v) && v.every((o) => Array.isArray(o) && o.length === width && o.every((x) => x === null || typeof x === "number"));

/**
 * A run's history of fronts (pareto_history.json, several objectives), or null (none: an import, an older
 * result, its upload failed, larger than READ_BYTES, or not the documented shape).
 */
export async function paretoHistory(env: Bindings, files: ResultFileRow[]): Promise<ParetoHistory | null> {
  const file = files.find((f) => f.name === "pareto_history.json");
  if (!file || file.sizeBytes > READ_BYTES) return null;
  const text = await (await env.FILES.get(file.r2Key))?.text();
  if (!text) return null;
  try {
    const parsed = JSON.parse(text) as Partial<ParetoHistory>;
    const shown = parsed.objectives_shown;
    if (typeof shown !== "number" || typeof parsed.num_objectives !== "number" || !Array.isArray(parsed.snapshots)) return null;
    const ok = parsed.snapshots.every(
      (s) =>
        s &&
        typeof s.generation === "number" &&
        typeof s.population_size === "number" &&
        isRows(s.front, shown) &&
        isRows(s.dominated, shown),
    );
    return ok ? (parsed as ParetoHistory) : null;
  } catch {
    return null;
  }
}

export type InfiniteText = "+∞" | "−∞";
const INFINITE: Record<string, InfiniteText> = { inf: "+∞", "-inf": "−∞" };

/** Where a single-objective result's fitness was infinite: the best fitness's, and each generation's. */
export interface Infinities {
  best: InfiniteText | null;
  history: Record<number, InfiniteText>;
}

/**
 * The infinite values of a single-objective result whose row has nulls (null: nothing infinite, or it
 * cannot be told). result.json holds them as "inf" / "-inf".
 */
export async function infinitiesOf(env: Bindings, r: ResultRow, files: ResultFileRow[]): Promise<Infinities | null> {
  if (r.numObjectives !== 1 || (r.bestSolutionFitness !== null && !r.bestSolutionsFitness.includes(null))) return null;
  const file = files.find((f) => f.name === "result.json");
  if (!file || file.sizeBytes > READ_BYTES) return null;
  const text = await (await env.FILES.get(file.r2Key))?.text();
  if (!text) return null;
  try {
    const summary = JSON.parse(text) as { best_solution_fitness?: unknown; best_solutions_fitness?: unknown[] };
    const history: Record<number, InfiniteText> = {};
    (summary.best_solutions_fitness ?? []).forEach((v, g) => {
      if (typeof v === "string" && INFINITE[v]) history[g] = INFINITE[v];
    });
    const best = typeof summary.best_solution_fitness === "string" ? (INFINITE[summary.best_solution_fitness] ?? null) : null;
    return best || Object.keys(history).length ? { best, history } : null;
  } catch {
    return null;
  }
}
