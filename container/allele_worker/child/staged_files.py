"""Result files built from a validated outcome, by the run's relay (``child.collector``) into the run's
store, and uploaded by the worker before its completion report (``PUT {report.url}/files/{name}``,
docs/runner-protocol.md): the data too large for a report.

- ``pareto_front.json`` ``{"num_objectives", "objectives": [[...]], "solutions": [[...]]}`` and
  ``pareto_front.csv`` ``index,objective_0..,gene_0..`` (several objectives);
- ``pareto_history.json`` ``{"num_objectives", "objectives_shown", "snapshots": [{"generation",
  "population_size", "front", "dominated"}]}`` (several objectives: the population's fronts over the run,
  ``jobs.ParetoHistory``);
- ``solutions.json`` ``[{"generation", "solutions", "fitness"}]`` (``save_solutions``);
- ``best_solutions.json`` ``[{"generation", "solution", "fitness"}]`` (``save_best_solutions``).

The completion report keeps the front's size and objective vectors (``pareto_front: {size,
objectives}``), which the Worker plots; the solutions travel only in the files.
"""

from __future__ import annotations

from ..wire import STAGED_FILES, Fitness, Genes, ResultBody, to_json

__all__ = ["STAGED_FILES", "take_files"]


def _cell(value: object) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


def _front_csv(objectives: list[Fitness], solutions: list[Genes]) -> bytes:
    count = len(objectives[0]) if objectives and isinstance(objectives[0], list) else 0
    genes = len(solutions[0]) if solutions else 0
    lines = [",".join(["index", *(f"objective_{i}" for i in range(count)), *(f"gene_{i}" for i in range(genes))])]
    for index, (values, solution) in enumerate(zip(objectives, solutions)):
        cells = values if isinstance(values, list) else [values]
        lines.append(",".join([str(index), *map(_cell, cells), *map(_cell, solution)]))
    return ("\n".join(lines) + "\n").encode()


def take_files(result: ResultBody) -> dict[str, bytes]:
    """Take the bulky parts out of a validated ``result`` (in place) and return them as files."""
    files: dict[str, bytes] = {}
    front = result.pop("pareto_front", None)
    if front is not None:
        objectives, solutions = front["objectives"], front["solutions"]
        files["pareto_front.json"] = to_json(
            {"num_objectives": result["num_objectives"], "objectives": objectives, "solutions": solutions}
        )
        files["pareto_front.csv"] = _front_csv(objectives, solutions)
        result["pareto_front"] = {"size": len(objectives), "objectives": objectives}
    history = result.pop("pareto_history", None)
    if history is not None:
        files["pareto_history.json"] = to_json(history)
    solutions_saved = result.pop("solutions", None)
    if solutions_saved is not None:
        files["solutions.json"] = to_json(solutions_saved)
    best_saved = result.pop("best_solutions", None)
    if best_saved is not None:
        files["best_solutions.json"] = to_json(best_saved)
    return files
