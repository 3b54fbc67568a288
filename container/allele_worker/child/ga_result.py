"""A finished GA's result as the outcome message carries it (runs inside the sandboxed child).

Single objective: ``best_solution_fitness`` and each entry of ``best_solutions_fitness`` is a number,
or ``"inf"`` / ``"-inf"`` (PyGAD allows an infinite scalar fitness; JSON has no infinity).  A fitness
answer of one value in a list or array (shape ``(1,)``) is one objective, as in stock PyGAD.

Several objectives (``num_objectives`` > 1), as PyGAD gives them: ``best_solution_fitness`` is the
objective vector of PyGAD's ``best_solution()`` (front 0, largest crowding distance; also given as
``best_solution_objectives``), ``best_solutions_fitness`` is PyGAD's own history (per generation, that
generation's best solution's objective vector); beside it ``objective_maxima`` holds per generation
each objective's maximum over the population (the values may come from different solutions, kept by
``jobs.GenerationGuard``), and ``pareto_front`` the distinct non-dominated solutions of the final
population with their objective vectors, and ``pareto_history`` the population's fronts over the run
(``jobs.ParetoHistory``; the worker moves it to ``pareto_history.json``).

Also: ``constraint_violations`` (genes of the best solution that their ``gene_constraint`` refuses),
and the data of ``save_solutions`` / ``save_best_solutions``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UserCodeError
from ..wire import (
    JSON,
    POPULATION_HISTORY_POINTS,
    POPULATION_HISTORY_VALUES,
    Fitness,
    JSONObject,
    OutcomeResult,
    ParetoHistory,
    PopulationPoint,
    StoppedReason,
    Violation,
)

if TYPE_CHECKING:
    from pygad import GA  # untyped: the GA's attributes are PyGAD's, and Any to the type checker

__all__ = ["collect", "constraint_violations", "fitness_value", "jsonable"]

_GENES_MESSAGE = (
    "the population contains NaN, infinite or out-of-range genes (a callback or the "
    "code changed them); genes must be finite 64-bit numbers"
)


def jsonable(value: Any) -> JSON:  # any value of the GA's: PyGAD's, numpy's or the user's
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


def _unreportable(value: object) -> UserCodeError:
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


def _number(value: object) -> float:
    """A fitness number as given (a numpy scalar unwrapped), if a 64-bit float can hold it."""
    if hasattr(value, "item") and not isinstance(value, (list, tuple)):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _unreportable(value)
    try:
        float(value)
    except OverflowError:
        raise _unreportable(value) from None
    return value


def _objective(value: object) -> float:
    """One objective value as reported: finite."""
    number = _number(value)
    if not math.isfinite(number):
        raise _unreportable(None)
    return number


def _scalar(value: object) -> float | str:
    """A one-objective fitness as reported: finite, or ``"inf"``/``"-inf"``."""
    number = _number(value)
    if math.isfinite(number):
        return number
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    raise _unreportable(None)


def fitness_value(value: Any) -> Fitness:  # a fitness as the GA holds it: a number or an array
    """A solution's fitness as reported: one number (a one-value vector unwrapped), or a vector of
    finite numbers."""
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _scalar(value[0])
        objectives: list[float | None] = [_objective(v) for v in value]
        return objectives
    return _scalar(value)


def _objectives(fitness: object) -> int:
    shape: tuple[int, ...] = tuple(getattr(fitness, "shape", ()))
    return int(shape[1]) if len(shape) == 2 else 1


def _check_genes(rows: object) -> None:
    import numpy as np

    try:  # per-gene types make an object array: each gene must still be a 64-bit number
        array = np.asarray(rows).astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise UserCodeError(_GENES_MESSAGE) from None
    if not np.isfinite(array).all():
        raise UserCodeError(_GENES_MESSAGE)


def constraint_violations(
    ga: GA,
    best: Any,  # the best solution: a numpy row of the GA's population
    constraints: Sequence[Callable[..., object] | None] | None,
    note: Callable[[str], object],
) -> list[Violation] | None:
    """Genes of ``best`` whose constraint does not keep their own value: each constraint is asked as
    in PyGAD (a copy of the solution, an array holding the one value) and the value must be in what
    it returns.  None when the job gave no ``gene_constraint``."""
    import numpy as np

    if not constraints:
        return None
    found: list[Violation] = []
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


def _saved(generations: list[int], sizes: list[int], rows: Any, fitness: Any) -> list[JSONObject]:
    """``save_solutions`` data grouped by generation: ``[{generation, solutions, fitness}]`` (``rows``
    and ``fitness``: PyGAD's ``solutions`` and ``solutions_fitness``, one entry per solution)."""
    grouped: list[JSONObject] = []
    start = 0
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


def population_points(rows: Sequence[Any], objectives: int) -> list[PopulationPoint]:
    """``population_history`` of the result: each recorded generation's [best, mean, median, worst]
    (``jobs.population_stats``; row i is generation i) as a point, a value that is not finite as null.
    Bounded (wire.POPULATION_HISTORY_POINTS, POPULATION_HISTORY_VALUES): past the bound, generations
    spread evenly over the run, the first and the last included."""
    import numpy as np

    total = len(rows)
    if total == 0:
        return []
    limit = max(2, min(POPULATION_HISTORY_POINTS, POPULATION_HISTORY_VALUES // (4 * objectives)))
    kept = range(total) if total <= limit else np.unique(np.linspace(0, total - 1, limit).round().astype(int)).tolist()

    def value(v: float) -> float | None:
        return v if math.isfinite(v) else None

    points: list[PopulationPoint] = []
    for generation in kept:
        row = np.asarray(rows[generation], dtype=np.float64).reshape(4, -1).tolist()
        if objectives == 1:
            best, mean, median, worst = (value(r[0]) for r in row)
            points.append({"generation": generation, "best": best, "mean": mean, "median": median, "worst": worst})
        else:
            b, m, d, w = ([value(v) for v in r] for r in row)
            points.append({"generation": generation, "best": b, "mean": m, "median": d, "worst": w})
    return points


def collect(
    ga: GA,
    *,
    stopped_reason: StoppedReason,
    objective_history: list[list[float]] | None,
    constraints: Sequence[Callable[..., object] | None] | None,
    note: Callable[[str], object],
    population_history: Sequence[Any] = (),
    fronts: Callable[[Any, int], ParetoHistory] | None = None,
) -> OutcomeResult:
    """The ``result`` of a succeeded outcome (raises ``UserCodeError`` for numbers JSON cannot carry)."""
    import numpy as np

    from . import objectives

    fitness = ga.last_generation_fitness
    best, best_fitness, _ = ga.best_solution(pop_fitness=fitness)
    count = _objectives(fitness)
    _check_genes(ga.population)
    best_solution = jsonable(best)
    best_generation = jsonable(ga.best_solution_generation)
    generations = int(ga.generations_completed)
    population = jsonable(ga.population)
    violations = constraint_violations(ga, best, constraints, note)
    front: JSONObject | None = None
    best_objectives: Fitness = None
    maxima: list[list[float | None]] | None = None
    best_value: Fitness = fitness_value(best_fitness)
    if count == 1:
        history: list[Fitness] = [fitness_value(f) for f in ga.best_solutions_fitness]
    else:
        best_objectives = best_value
        history = [[_objective(v) for v in np.ravel(row).tolist()] for row in ga.best_solutions_fitness]
        if objective_history is not None and len(objective_history) == len(history):
            maxima = [[_objective(v) for v in row] for row in objective_history]
        indices = objectives.distinct_rows(ga.population, objectives.pareto_front(fitness))
        front = {
            "solutions": jsonable(ga.population[indices]),
            "objectives": [fitness_value(fitness[i]) for i in indices.tolist()],
        }
    result: OutcomeResult = {
        "best_solution": best_solution,
        "best_solution_generation": best_generation,
        "generations_completed": generations,
        "population": population,
        "stopped_reason": stopped_reason,
        "num_objectives": count,
        "constraint_violations": violations,
        "best_solution_fitness": best_value,
        "best_solution_objectives": best_objectives,
        "best_solutions_fitness": history,
        "objective_maxima": maxima,
        "population_history": population_points(population_history, count),
    }
    if front is not None:
        result["pareto_front"] = front
        if fronts is not None:
            result["pareto_history"] = fronts(ga, count)
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
