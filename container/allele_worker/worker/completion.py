"""The completion report's body (``wire.CompleteReport``): what the worker knows about a finished child —
its process facts and its outcome message — folded by fixed precedence.

The child's outcome message is hostile output (user code shares its message channel): it is
validated here (``validate_outcome``), every value of it, and it only counts when the child ended by
itself.  Precedence, first match wins:

1. killed by the parent for wall time          → failed, time_limit_exceeded, hit_time_cap
2. killed by the parent for memory             → failed, memory_limit_exceeded, hit_memory_cap
3. killed by the parent for an output/message flood (bytes or count) → failed, resource_limit_exceeded
4. ended by SIGXCPU (CPU-time rlimit)          → failed, time_limit_exceeded, hit_time_cap
5. ended by SIGXFSZ (file-size rlimit)         → failed, resource_limit_exceeded
6. a valid outcome message                     → as the child said (succeeded with its stopped_reason,
                                                 or failed with its error)
7. ended by SIGKILL that the parent did not send (the kernel's OOM killer) → memory_limit_exceeded
8. ended by another signal                     → failed, code_error
9. an outcome message that is not valid        → failed, internal_error
10. exited without an outcome                  → failed, code_error
"""

from __future__ import annotations

import math
import signal
from typing import TypedDict, TypeVar, cast

from ..sandbox import Limits, ProcessReport
from ..wire import (
    ERROR_CODES,
    MAX_OBJECTIVES,
    STOPPED_REASONS,
    WARNING_MESSAGE_LIMIT,
    WARNING_TEMPLATES,
    CompleteReport,
    ErrorCode,
    Metrics,
    Progress,
    ResultBody,
    RunError,
    RunStatus,
    WarningEntry,
    is_count,
    is_number,
)

__all__ = ["ValidOutcome", "failure", "fold", "metrics", "validate_outcome"]

ENGINE = "pygad"  # when the child did not say (killed, or failed before its GA was built)
_ENGINE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_:+=-.")
MAX_WARNINGS = WARNING_TEMPLATES + 1  # the templates kept and one entry for the others
ERROR_MESSAGE_LIMIT = 2000  # characters of the child's error message kept
_T = TypeVar("_T")


class ValidOutcome(TypedDict):
    """The child's outcome message once ``validate_outcome`` has checked it."""

    status: RunStatus
    result: ResultBody | None
    error: RunError | None
    hit_time_cap: bool
    hit_memory_cap: bool
    engine: str
    warnings: list[WarningEntry]
    progress: Progress | None


def _engine(message: dict[object, object]) -> str:
    """The engine path the child reports (``engine.engine_label``), if it looks like one."""
    value = message.get("engine")
    if isinstance(value, str) and 0 < len(value) <= 64 and set(value) <= _ENGINE_CHARS:
        return value
    return ENGINE


def _number(value: object) -> bool:
    """A number as the child reports one: null for one that was not finite."""
    return value is None or is_number(value)


def _finite(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _finite_all(value: _T) -> _T:
    """``value`` with every non-finite float (nested in lists and objects) as None: JSON has no inf/nan.
    Its type stays: every number the wire carries may be null (``wire.Genes``, ``wire.Fitness``)."""
    if isinstance(value, list):
        return cast(_T, [_finite_all(v) for v in value])
    if isinstance(value, dict):
        return cast(_T, {k: _finite_all(v) for k, v in value.items()})
    return cast(_T, _finite(value))


def _numbers(value: object, *, depth: int = 1) -> bool:
    if not isinstance(value, list):
        return False
    if depth == 1:
        return all(_number(v) for v in value)
    return all(_numbers(v, depth=depth - 1) for v in value)


def _scalar(value: object) -> bool:
    """One objective's fitness: a number, ``"inf"``/``"-inf"``, or None (not finite)."""
    return _number(value) or value in ("inf", "-inf")


def _fitness(value: object, objectives: int) -> bool:
    """A solution's fitness: one number (one objective), or one number per objective."""
    if objectives == 1:
        return _scalar(value)
    return isinstance(value, list) and _numbers(value) and len(value) == objectives


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


def _warnings(message: dict[object, object]) -> list[WarningEntry]:
    """The child's deduplicated warnings, if they have the expected shape (else none)."""
    value = message.get("warnings")
    if not isinstance(value, list) or len(value) > MAX_WARNINGS:
        return []
    if not all(
        isinstance(w, dict) and isinstance(w.get("message"), str) and is_count(w.get("count"), 1) for w in value
    ):
        return []
    return [{"message": w["message"][:WARNING_MESSAGE_LIMIT], "count": w["count"]} for w in value]


def _progress(message: dict[object, object]) -> Progress | None:
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
        "best_solution_fitness": _finite_all(value["best_solution_fitness"]),
    }


def validate_outcome(message: object) -> ValidOutcome | None:
    """The outcome if it has exactly the expected shape, else None."""
    if not isinstance(message, dict) or message.get("type") != "outcome":
        return None
    status = message.get("status")
    if status == "failed":
        error = message.get("error")
        if (
            not isinstance(error, dict)
            or error.get("code") not in ERROR_CODES
            or not isinstance(error.get("message"), str)
        ):
            return None
        return {
            "status": "failed",
            "result": None,
            "error": {"code": error["code"], "message": error["message"][:ERROR_MESSAGE_LIMIT]},
            "hit_time_cap": False,
            "hit_memory_cap": error["code"] == "memory_limit_exceeded",
            "engine": _engine(message),
            "warnings": _warnings(message),
            "progress": _progress(message),
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
        isinstance(history, list) and all(_fitness(v, objectives) for v in history),
        maxima is None
        or (
            objectives > 1
            and isinstance(maxima, list)
            and isinstance(history, list)
            and len(maxima) == len(history)
            and all(_fitness(v, objectives) for v in maxima)
        ),
        is_count(result.get("generations_completed")),
        _numbers(result.get("population"), depth=2),
        result.get("stopped_reason") in STOPPED_REASONS,
        _violations_ok(result.get("constraint_violations")),
        _front_ok(result.get("pareto_front"), objectives),
        _saved_ok(result.get("solutions"), objectives, many=True),
        _saved_ok(result.get("best_solutions"), objectives, many=False),
    )
    if not all(checks):
        return None
    # Whatever the child wrote (hostile code can put inf/nan anywhere), the report must stay JSON.
    clean: ResultBody = {
        "best_solution": _finite_all(result["best_solution"]),
        "best_solution_fitness": _finite_all(result.get("best_solution_fitness")),
        "best_solution_objectives": _finite_all(result.get("best_solution_objectives")),
        "best_solution_generation": result["best_solution_generation"],
        "best_solutions_fitness": _finite_all(result["best_solutions_fitness"]),
        "objective_maxima": _finite_all(maxima),
        "generations_completed": result["generations_completed"],
        "population": _finite_all(result["population"]),
        "stopped_reason": result["stopped_reason"],
        "num_objectives": objectives,
        "constraint_violations": _finite_all(result.get("constraint_violations")),
    }
    if result.get("pareto_front") is not None:
        clean["pareto_front"] = _finite_all(result["pareto_front"])
    if result.get("solutions") is not None:
        clean["solutions"] = _finite_all(result["solutions"])
    if result.get("best_solutions") is not None:
        clean["best_solutions"] = _finite_all(result["best_solutions"])
    reason = clean["stopped_reason"]
    return {
        "status": "succeeded",
        "result": clean,
        "error": None,
        "hit_time_cap": reason == "time_cap",
        "hit_memory_cap": reason == "memory_cap",
        "engine": _engine(message),
        "warnings": _warnings(message),
        "progress": None,
    }


def metrics(
    report: ProcessReport | None,
    *,
    hit_time_cap: bool = False,
    hit_memory_cap: bool = False,
    cpu_seconds: float = 0.0,
    peak_memory_mb: float = 0.0,
    wall_ms: int = 0,
) -> Metrics:
    if report is not None:
        cpu_seconds, peak_memory_mb, wall_ms = report.cpu_seconds, report.peak_memory_mb, report.wall_ms
    return {
        "cpu_seconds_used": round(cpu_seconds, 3),
        "peak_memory_mb": int(math.ceil(peak_memory_mb)),
        "execution_duration_ms": int(wall_ms),
        "hit_time_cap": bool(hit_time_cap),
        "hit_memory_cap": bool(hit_memory_cap),
    }


def failure(
    code: ErrorCode,
    message: str,
    *,
    report: ProcessReport | None = None,
    time_cap: bool = False,
    memory_cap: bool = False,
) -> CompleteReport:
    """A failed run's complete-report body: ``report``'s metrics and output, or none (the run's
    process never ran)."""
    return {
        "status": "failed",
        "result": None,
        "error": {"code": code, "message": message},
        "metrics": metrics(report, hit_time_cap=time_cap, hit_memory_cap=memory_cap),
        "output": report.output if report is not None else "",
        "engine": ENGINE,
        "warnings": [],
        "progress": None,
    }


def fold(report: ProcessReport, limits: Limits) -> CompleteReport:
    """The body of ``POST {report.url}/complete`` for this run."""
    if report.killed == "time":
        return failure(
            "time_limit_exceeded",
            f"the run passed its wall-time cap of {limits.time_seconds:g} s with no "
            f"generation boundary in time and was stopped",
            time_cap=True,
            report=report,
        )
    if report.killed == "memory":
        return failure(
            "memory_limit_exceeded",
            f"the run used more than its memory cap of {limits.memory_mb} MB and was stopped",
            memory_cap=True,
            report=report,
        )
    if report.killed == "output":
        return failure(
            "resource_limit_exceeded",
            f"the run printed more than {limits.output_flood_bytes // (1024 * 1024)} MiB and was stopped",
            report=report,
        )
    if report.killed == "message":
        return failure(
            "resource_limit_exceeded", "the run produced a result larger than allowed and was stopped", report=report
        )
    if report.killed == "messages":
        return failure(
            "resource_limit_exceeded",
            f"the run wrote more than {limits.messages_per_second:g} messages a second to the "
            f"worker's message channel and was stopped",
            report=report,
        )
    if report.signal == signal.SIGXCPU:
        return failure(
            "time_limit_exceeded",
            f"the run used more than {limits.cpu_seconds} CPU seconds and was stopped",
            time_cap=True,
            report=report,
        )
    if report.signal == signal.SIGXFSZ:
        return failure(
            "resource_limit_exceeded",
            f"the run wrote a file larger than {limits.file_size_mb} MiB and was stopped",
            report=report,
        )
    outcome = validate_outcome(report.outcome) if report.killed is None else None
    if outcome is not None:
        return {
            "status": outcome["status"],
            "result": outcome["result"],
            "error": outcome["error"],
            "metrics": metrics(report, hit_time_cap=outcome["hit_time_cap"], hit_memory_cap=outcome["hit_memory_cap"]),
            "output": report.output,
            "engine": outcome["engine"],
            "warnings": outcome["warnings"],
            "progress": outcome["progress"],
        }
    if report.signal == signal.SIGKILL and report.killed is None:
        return failure(
            "memory_limit_exceeded",
            "the run was killed by the system, most likely for using too much memory",
            memory_cap=True,
            report=report,
        )
    if report.signal is not None:
        try:
            name = signal.Signals(report.signal).name
        except ValueError:
            name = str(report.signal)
        return failure("code_error", f"the run's process died from signal {name}", report=report)
    if report.outcome is not None:
        return failure("internal_error", "the run's process sent an unreadable result", report=report)
    return failure(
        "code_error", f"the run's process exited with status {report.exit_code} before sending a result", report=report
    )
