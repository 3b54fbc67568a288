"""A finished GA's result as the outcome message carries it (runs inside the sandboxed child).

Single objective: ``best_solution_fitness`` and each entry of ``best_solutions_fitness`` is a number,
or ``"inf"`` / ``"-inf"`` (PyGAD allows an infinite scalar fitness; JSON has no infinity).  A fitness
answer of one value in a list or array (shape ``(1,)``) is one objective, as in stock PyGAD.

Several objectives (``num_objectives`` > 1): ``best_solution_fitness`` is None,
``best_solution_objectives`` is the objective vector of PyGAD's ``best_solution()`` (front 0, largest
crowding distance), ``best_solutions_fitness`` holds per generation the best value of each objective
(the largest over the population, objective by objective), and ``pareto_front`` the distinct
non-dominated solutions of the final population with their objective vectors.

Also: ``constraint_violations`` (genes of the best solution that their ``gene_constraint`` refuses),
and the data of ``save_solutions`` / ``save_best_solutions``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import UserCodeError

__all__ = ["collect", "constraint_violations", "fitness_value", "jsonable"]

_GENES_MESSAGE = (
    "the population contains NaN, infinite or out-of-range genes (a callback or the "
    "code changed them); genes must be finite 64-bit numbers"
)


def jsonable(value: Any) -> Any:
    """Plain JSON data: numpy scalars/arrays → Python, non-finite floats → None."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "tolist"):  # numpy array or scalar
        return jsonable(value.tolist())
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else None


def _unreportable(value: Any) -> UserCodeError:
    shown = (
        f"an integer of {len(str(abs(value)))} digits"
        if isinstance(value, int)
        else "a non-finite value"
        if value is None
        else repr(value)[:80]
    )
    return UserCodeError(
        f"the fitness values include {shown}; a fitness must be a number within "
        f"the range of a 64-bit float (about ±1.8e308), or ±inf for one objective"
    )


def _number(value: Any, *, infinite: bool) -> float | int | str:
    """One fitness number as reported: finite, or ``"inf"``/``"-inf"`` where ``infinite``."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _unreportable(value)
    try:
        number = float(value)
    except OverflowError:
        raise _unreportable(value) from None
    if math.isfinite(number):
        return value
    if infinite and math.isinf(number):
        return "inf" if number > 0 else "-inf"
    raise _unreportable(None)


def fitness_value(value: Any) -> float | int | str | list[Any]:
    """A solution's fitness as reported: one number (a one-value vector unwrapped), or a vector of
    finite numbers."""
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _number(value[0], infinite=True)
        return [_number(v, infinite=False) for v in value]
    return _number(value, infinite=True)


def _objectives(fitness: Any) -> int:
    shape: tuple[int, ...] = tuple(getattr(fitness, "shape", ()))
    return int(shape[1]) if len(shape) == 2 else 1


def _check_genes(rows: Any) -> None:
    import numpy as np

    try:  # per-gene types make an object array: each gene must still be a 64-bit number
        array = np.asarray(rows).astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise UserCodeError(_GENES_MESSAGE) from None
    if not np.isfinite(array).all():
        raise UserCodeError(_GENES_MESSAGE)


def constraint_violations(
    ga: Any, best: Any, constraints: list[Any] | None, note: Callable[[str], object]
) -> list[dict[str, Any]] | None:
    """Genes of ``best`` whose constraint does not keep their own value: each constraint is asked as
    in PyGAD (a copy of the solution, an array holding the one value) and the value must be in what
    it returns.  None when the job gave no ``gene_constraint``."""
    import numpy as np

    if not constraints:
        return None
    found = []
    for gene, constraint in enumerate(constraints):
        if constraint is None:
            continue
        value = best[gene]
        try:
            kept = constraint(best.copy(), np.array([value], dtype=ga.population.dtype))
            accepted = isinstance(kept, (list, tuple, np.ndarray)) and bool(
                np.isin(np.asarray(kept, dtype=np.float64), [float(value)]).any()
            )
        except Exception as exc:  # noqa: BLE001 - user code; the check is a note, not the run's failure
            note(
                f"the gene_constraint of gene {gene} raised {type(exc).__name__} when the best "
                f"solution was checked; that gene is not reported as a violation"
            )
            continue
        if not accepted:
            found.append({"gene": gene, "value": jsonable(value)})
    if found:
        genes = ", ".join(str(v["gene"]) for v in found)
        note(
            f"the best solution violates the gene_constraint of gene(s) {genes} "
            f"(PyGAD found no allowed value and kept the gene as it was)"
        )
    return found


def _saved(generations: list[Any], sizes: list[int], rows: list[Any], fitness: list[Any]) -> list[dict[str, Any]]:
    """``save_solutions`` data grouped by generation: ``[{generation, solutions, fitness}]``."""
    grouped, start = [], 0
    for generation, size in zip(generations, sizes):
        grouped.append(
            {
                "generation": generation,
                "solutions": jsonable(rows[start : start + size]),
                "fitness": [fitness_value(f) for f in fitness[start : start + size]],
            }
        )
        start += size
    return grouped


def collect(
    ga: Any,
    *,
    stopped_reason: str,
    objective_history: list[list[Any]] | None,
    constraints: list[Any] | None,
    note: Callable[[str], object],
) -> dict[str, Any]:
    """The ``result`` of a succeeded outcome (raises ``UserCodeError`` for numbers JSON cannot carry)."""
    from . import objectives

    fitness = ga.last_generation_fitness
    best, best_fitness, _ = ga.best_solution(pop_fitness=fitness)
    count = _objectives(fitness)
    _check_genes(ga.population)
    result: dict[str, Any] = {
        "best_solution": jsonable(best),
        "best_solution_generation": jsonable(ga.best_solution_generation),
        "generations_completed": int(ga.generations_completed),
        "population": jsonable(ga.population),
        "stopped_reason": stopped_reason,
        "num_objectives": count,
        "constraint_violations": constraint_violations(ga, best, constraints, note),
    }
    if count == 1:
        result["best_solution_fitness"] = fitness_value(best_fitness)
        result["best_solution_objectives"] = None
        result["best_solutions_fitness"] = [fitness_value(f) for f in ga.best_solutions_fitness]
    else:
        history = objective_history
        if history is None or len(history) != len(ga.best_solutions_fitness):
            history = [list(f) for f in ga.best_solutions_fitness]  # PyGAD's own, if ours is off
        front = objectives.distinct_rows(ga.population, objectives.pareto_front(fitness))
        result["best_solution_fitness"] = None
        result["best_solution_objectives"] = fitness_value(best_fitness)
        result["best_solutions_fitness"] = [[_number(v, infinite=False) for v in row] for row in history]
        result["pareto_front"] = {
            "solutions": jsonable(ga.population[front]),
            "objectives": [fitness_value(fitness[i]) for i in front.tolist()],
        }
    if ga.save_solutions:
        result["solutions"] = _saved(
            list(ga.solutions_generations), list(ga._saved_population_sizes), ga.solutions, ga.solutions_fitness
        )
    if ga.save_best_solutions:
        result["best_solutions"] = [
            {"generation": generation, "solution": jsonable(solution), "fitness": fitness_value(f)}
            for generation, solution, f in zip(
                ga.best_solutions_generations, ga.best_solutions, ga.best_solutions_fitness
            )
        ]
    return result
