"""The checks of what a run's job sends: its outcome (``validate_outcome``, applied by the run's relay,
``child.collector``), and the small parts of it that the worker checks again in the relay's summary
(``wire.CollectedOutcome``: ``error_of``, ``engine_of``, ``warnings_of``, ``progress_of``).

The outcome is hostile output (user code shares the job's message channel): it counts only when it
has exactly the expected shape, every value of it checked, and whatever non-finite number hostile code
put in it becomes null (``finite_in_place``: JSON has no inf or NaN).  Pure functions over parsed
JSON, below both sides.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypedDict, TypeVar, cast

from .wire import (
    CODE_FIELDS,
    ERROR_CODES,
    MAX_OBJECTIVES,
    PARETO_HISTORY_OBJECTIVES,
    PARETO_HISTORY_POINTS,
    PARETO_HISTORY_SNAPSHOTS,
    PARETO_HISTORY_VALUES,
    POPULATION_HISTORY_POINTS,
    STOPPED_REASONS,
    WARNING_MESSAGE_LIMIT,
    WARNING_TEMPLATES,
    Progress,
    ResultBody,
    RunError,
    RunStatus,
    WarningEntry,
    is_count,
    is_number,
)

__all__ = [
    "ENGINE",
    "ERROR_MESSAGE_LIMIT",
    "MAX_WARNINGS",
    "ValidOutcome",
    "engine_of",
    "error_of",
    "finite_in_place",
    "progress_of",
    "validate_outcome",
    "warnings_of",
]

ENGINE = "pygad"  # when the child did not say (killed, or failed before its GA was built)
_ENGINE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_:+=-.")
MAX_WARNINGS = WARNING_TEMPLATES + 1  # the templates kept and one entry for the others
ERROR_MESSAGE_LIMIT = 2000  # characters of the child's error message kept
_T = TypeVar("_T")
_PLAIN = frozenset({int, float, type(None)})  # what json.loads gives for a number or null


class ValidOutcome(TypedDict):
    """The job's outcome message once ``validate_outcome`` has checked it."""

    status: RunStatus
    result: ResultBody | None
    error: RunError | None
    hit_time_cap: bool
    hit_memory_cap: bool
    engine: str
    warnings: list[WarningEntry]
    progress: Progress | None


def engine_of(message: Mapping[str, object]) -> str:
    """The engine path the child reports (``engine.engine_label``), if it looks like one."""
    value = message.get("engine")
    if isinstance(value, str) and 0 < len(value) <= 64 and set(value) <= _ENGINE_CHARS:
        return value
    return ENGINE


def _number(value: object) -> bool:
    """A number as the child reports one: null for one that was not finite."""
    return value is None or is_number(value)


def finite_in_place(value: _T) -> _T:
    """``value`` with every non-finite float (nested in lists and objects) replaced by None, in place
    (no copy of a population): JSON has no inf/nan.  Its type stays: every number the wire carries may
    be null (``wire.Genes``, ``wire.Fitness``)."""
    if isinstance(value, float):
        return cast(_T, value if math.isfinite(value) else None)
    if isinstance(value, list):
        try:
            if all(map(math.isfinite, value)):  # numbers, all finite: the common case, at C speed
                return value
        except (TypeError, OverflowError):  # null, a nested list or object, an int too large for a float
            pass
        for index, item in enumerate(value):
            if isinstance(item, float):
                if not math.isfinite(item):
                    value[index] = None
            elif isinstance(item, (list, dict)):
                finite_in_place(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, float):
                if not math.isfinite(item):
                    value[key] = None
            elif isinstance(item, (list, dict)):
                finite_in_place(item)
    return value


def _numbers(value: object, *, depth: int = 1) -> bool:
    if not isinstance(value, list):
        return False
    if depth == 1:  # plain JSON numbers at C speed, else each value checked
        return set(map(type, value)) <= _PLAIN or all(_number(v) for v in value)
    return all(_numbers(v, depth=depth - 1) for v in value)


def _scalar(value: object) -> bool:
    """One objective's fitness: a number, ``"inf"``/``"-inf"``, or None (not finite)."""
    return _number(value) or value in ("inf", "-inf")


def _history(value: object, objectives: int) -> bool:
    """``best_solutions_fitness``: one fitness per generation."""
    if not isinstance(value, list):
        return False
    if objectives == 1 and set(map(type, value)) <= _PLAIN:
        return True
    return all(_fitness(v, objectives) for v in value)


def _fitness(value: object, objectives: int) -> bool:
    """A solution's fitness: one number (one objective), or one number per objective."""
    if objectives == 1:
        return _scalar(value)
    return isinstance(value, list) and _numbers(value) and len(value) == objectives


def _population_ok(value: object, objectives: int) -> bool:
    """``population_history``: at most POPULATION_HISTORY_POINTS points of rising generations, each value
    a number or null (several objectives: a list of one per objective)."""
    if not isinstance(value, list) or len(value) > POPULATION_HISTORY_POINTS:
        return False
    last = -1
    for point in value:
        if not isinstance(point, dict) or set(point) != _POINT_KEYS:
            return False
        generation = point["generation"]
        if not is_count(generation) or generation <= last:
            return False
        last = generation
        for key in ("best", "mean", "median", "worst"):
            item = point[key]
            if objectives == 1:
                if not (item is None or _number(item)):
                    return False
            elif not (
                isinstance(item, list) and len(item) == objectives and all(v is None or _number(v) for v in item)
            ):
                return False
    return True


_POINT_KEYS = {"generation", "best", "mean", "median", "worst"}
_HISTORY_KEYS = {"num_objectives", "objectives_shown", "snapshots"}
_SNAPSHOT_KEYS = {"generation", "population_size", "front", "dominated"}


def _vectors(value: object, width: int) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, list) and len(v) == width and all(x is None or _number(x) for x in v) for v in value
    )


def _pareto_history_ok(value: object, objectives: int) -> bool:
    """``pareto_history`` (several objectives only): the documented shape within its bounds
    (wire.PARETO_HISTORY_*), generations rising."""
    if value is None:
        return True
    if objectives == 1 or not isinstance(value, dict) or set(value) != _HISTORY_KEYS:
        return False
    shown = value["objectives_shown"]
    snapshots = value["snapshots"]
    if value["num_objectives"] != objectives or shown != min(objectives, PARETO_HISTORY_OBJECTIVES):
        return False
    if not isinstance(snapshots, list) or len(snapshots) > PARETO_HISTORY_SNAPSHOTS:
        return False
    last, total = -1, 0
    for snapshot in snapshots:
        if not isinstance(snapshot, dict) or set(snapshot) != _SNAPSHOT_KEYS:
            return False
        generation, front, dominated = snapshot["generation"], snapshot["front"], snapshot["dominated"]
        if not is_count(generation) or generation <= last or not is_count(snapshot["population_size"]):
            return False
        last = generation
        if not (_vectors(front, shown) and _vectors(dominated, shown)):
            return False
        count = len(front) + len(dominated)
        if count > PARETO_HISTORY_POINTS or count > snapshot["population_size"]:
            return False
        total += count * shown
    return total <= PARETO_HISTORY_VALUES


def _saved_ok(value: object, objectives: int, *, many: bool) -> bool:
    """``save_solutions`` (``many``) / ``save_best_solutions`` data."""
    if value is None:
        return True
    if not isinstance(value, list):
        return False
    for entry in value:
        if not isinstance(entry, dict) or not (entry.get("generation") is None or is_count(entry.get("generation"))):
            return False
        if many:
            if not (
                _numbers(entry.get("solutions"), depth=2)
                and isinstance(entry.get("fitness"), list)
                and len(entry["fitness"]) == len(entry["solutions"])
                and all(_fitness(f, objectives) for f in entry["fitness"])
            ):
                return False
        elif not (_numbers(entry.get("solution")) and _fitness(entry.get("fitness"), objectives)):
            return False
    return True


def _front_ok(value: object, objectives: int) -> bool:
    if objectives == 1:
        return value is None
    return (
        isinstance(value, dict)
        and _numbers(value.get("solutions"), depth=2)
        and isinstance(value.get("objectives"), list)
        and len(value["objectives"]) == len(value["solutions"])
        and all(_fitness(f, objectives) for f in value["objectives"])
    )


def _violations_ok(value: object) -> bool:
    return value is None or (
        isinstance(value, list)
        and all(isinstance(v, dict) and is_count(v.get("gene")) and _number(v.get("value")) for v in value)
    )


def warnings_of(message: Mapping[str, object]) -> list[WarningEntry]:
    """The child's deduplicated warnings, if they have the expected shape (else none)."""
    value = message.get("warnings")
    if not isinstance(value, list) or len(value) > MAX_WARNINGS:
        return []
    if not all(
        isinstance(w, dict) and isinstance(w.get("message"), str) and is_count(w.get("count"), 1) for w in value
    ):
        return []
    return [{"message": w["message"][:WARNING_MESSAGE_LIMIT], "count": w["count"]} for w in value]


def progress_of(message: Mapping[str, object]) -> Progress | None:
    """How far a failed run got, if the child said so."""
    value = message.get("progress")
    if (
        not isinstance(value, dict)
        or not is_count(value.get("generations_completed"))
        or not _number(value.get("best_solution_fitness"))
    ):
        return None
    return {
        "generations_completed": value["generations_completed"],
        "best_solution_fitness": finite_in_place(value["best_solution_fitness"]),
    }


def error_of(value: object) -> RunError | None:
    """A run's error (a code of ``ERROR_CODES`` and a message, clipped), if it has that shape."""
    if not isinstance(value, dict) or value.get("code") not in ERROR_CODES or not isinstance(value.get("message"), str):
        return None
    error: RunError = {"code": value["code"], "message": value["message"][:ERROR_MESSAGE_LIMIT]}
    if value["code"] == "code_error" and value.get("stage") == "compile":
        error["stage"] = "compile"
    return error


def compile_refused(sources: Mapping[str, object]) -> bool:
    """Whether Python's ``compile()`` refuses one of the job's code fields (``sources``: the job's
    params; only the code fields are looked at).  The relay asks this before it keeps a job's claim
    that its code did not compile (``RunError.stage``): compiling runs none of the code, and a job
    whose code compiled cannot make its run look like one that did not."""
    for name in CODE_FIELDS:
        source = sources.get(name)
        if not isinstance(source, str):
            continue
        try:
            compile(source, f"<{name}>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return True
        except (RecursionError, MemoryError):
            return False
    return False


def validate_outcome(message: object) -> ValidOutcome | None:
    """The outcome if it has exactly the expected shape, else None.  Its result is ``message``'s own,
    made finite in place (the relay owns the parsed message: no copy of a population)."""
    if not isinstance(message, dict) or message.get("type") != "outcome":
        return None
    status = message.get("status")
    if status == "failed":
        error = error_of(message.get("error"))
        if error is None:
            return None
        return {
            "status": "failed",
            "result": None,
            "error": error,
            "hit_time_cap": False,
            "hit_memory_cap": error["code"] == "memory_limit_exceeded",
            "engine": engine_of(message),
            "warnings": warnings_of(message),
            "progress": progress_of(message),
        }
    if status != "succeeded":
        return None
    result = message.get("result")
    if not isinstance(result, dict):
        return None
    objectives = result.get("num_objectives", 1)
    if not is_count(objectives, 1) or objectives > MAX_OBJECTIVES:
        return None
    history = result.get("best_solutions_fitness")
    maxima = result.get("objective_maxima")
    checks = (
        _numbers(result.get("best_solution")),
        _fitness(result.get("best_solution_fitness"), objectives),
        result.get("best_solution_objectives") is None
        if objectives == 1
        else _fitness(result.get("best_solution_objectives"), objectives),
        isinstance(result.get("best_solution_generation"), int),
        _history(history, objectives),
        maxima is None
        or (
            objectives > 1
            and isinstance(maxima, list)
            and isinstance(history, list)
            and len(maxima) == len(history)
            and _history(maxima, objectives)
        ),
        is_count(result.get("generations_completed")),
        _population_ok(result.get("population_history", []), objectives),
        _numbers(result.get("population"), depth=2),
        result.get("stopped_reason") in STOPPED_REASONS,
        _violations_ok(result.get("constraint_violations")),
        _front_ok(result.get("pareto_front"), objectives),
        _pareto_history_ok(result.get("pareto_history"), objectives),
        _saved_ok(result.get("solutions"), objectives, many=True),
        _saved_ok(result.get("best_solutions"), objectives, many=False),
    )
    if not all(checks):
        return None
    # Whatever the child wrote (hostile code can put inf/nan anywhere), the report must stay JSON.
    clean: ResultBody = {
        "best_solution": finite_in_place(result["best_solution"]),
        "best_solution_fitness": finite_in_place(result.get("best_solution_fitness")),
        "best_solution_objectives": finite_in_place(result.get("best_solution_objectives")),
        "best_solution_generation": result["best_solution_generation"],
        "best_solutions_fitness": finite_in_place(result["best_solutions_fitness"]),
        "objective_maxima": finite_in_place(maxima),
        "population_history": finite_in_place(result.get("population_history", [])),
        "generations_completed": result["generations_completed"],
        "population": finite_in_place(result["population"]),
        "stopped_reason": result["stopped_reason"],
        "num_objectives": objectives,
        "constraint_violations": finite_in_place(result.get("constraint_violations")),
    }
    if result.get("pareto_front") is not None:
        clean["pareto_front"] = finite_in_place(result["pareto_front"])
    if result.get("pareto_history") is not None:
        clean["pareto_history"] = finite_in_place(result["pareto_history"])
    if result.get("solutions") is not None:
        clean["solutions"] = finite_in_place(result["solutions"])
    if result.get("best_solutions") is not None:
        clean["best_solutions"] = finite_in_place(result["best_solutions"])
    reason = clean["stopped_reason"]
    return {
        "status": "succeeded",
        "result": clean,
        "error": None,
        "hit_time_cap": reason == "time_cap",
        "hit_memory_cap": reason == "memory_cap",
        "engine": engine_of(message),
        "warnings": warnings_of(message),
        "progress": None,
    }
