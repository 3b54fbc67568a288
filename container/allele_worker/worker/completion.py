"""The completion report's body (``wire.CompleteReport``): what the worker knows about a finished child —
its process facts and the relay's summary of its outcome — folded by fixed precedence.

The job's outcome message is hostile output (user code shares its message channel): the run's relay
validated it (``validation.validate_outcome``, in the run's own process and control group) and put it
in the run's store; the worker checks the relay's small summary again (``wire.CollectedOutcome``: its
error, engine, warnings, progress, and that every part lies in the store) and never parses the parts
— the result's JSON, the population, the staged files — which go to the Worker as they are
(``Completion``).  The outcome only counts when the child ended by itself.  Precedence, first match
wins:

1. killed by the parent for wall time          → failed, time_limit_exceeded, hit_time_cap
2. killed by the parent for memory             → failed, memory_limit_exceeded, hit_memory_cap
3. killed for an output flood, a message or an outcome past its bound, or too many messages (by the
   relay or the parent, whether or not the run's process had ended by then) → failed,
   resource_limit_exceeded
4. ended by SIGXCPU (CPU-time rlimit)          → failed, time_limit_exceeded, hit_time_cap
5. ended by SIGXFSZ (file-size rlimit)         → failed, resource_limit_exceeded
6. a valid outcome                             → as the child said (succeeded with its stopped_reason,
                                                 or failed with its error)
7. ended by SIGKILL that the parent did not send (the kernel's OOM killer) → memory_limit_exceeded
8. ended by another signal                     → failed, code_error
9. an outcome that is not valid                → failed, internal_error
10. exited without an outcome                  → failed, code_error
"""

from __future__ import annotations

import math
import signal
from dataclasses import dataclass, field

from ..sandbox import Limits, ProcessReport
from ..sandbox.store import Part, Store
from ..validation import ENGINE, engine_of, error_of, progress_of, warnings_of
from ..wire import STAGED_FILES, CompleteReport, ErrorCode, Metrics, RunError

__all__ = ["Completion", "failure", "fold", "metrics"]

PARTS = ("result", "population", *STAGED_FILES)  # what a succeeded run's store holds besides the summary


@dataclass
class Completion:
    """A run's completion report: its ``body`` and, for a succeeded run, its result in the run's store
    — the result's JSON (``body["result"]`` is None until the report is sent: it is spliced in
    unparsed), the final population's and the staged files'."""

    body: CompleteReport
    result: Part | None = None
    population: Part | None = None
    population_finite: bool = False
    files: dict[str, Part] = field(default_factory=dict)


@dataclass
class _Summary:
    status: str
    error: RunError | None
    hit_time_cap: bool
    hit_memory_cap: bool
    engine: str
    parts: dict[str, Part]
    population_finite: bool


def _summary(outcome: object, store: Store | None) -> _Summary | None:
    """The relay's summary (``wire.CollectedOutcome``) if it has the expected shape and its parts lie
    in the store (a succeeded run's result among them), else None."""
    if not isinstance(outcome, dict):
        return None
    status = outcome.get("status")
    error = error_of(outcome.get("error"))
    if not ((status == "failed" and error is not None) or (status == "succeeded" and outcome.get("error") is None)):
        return None
    listed = outcome.get("parts")
    if not isinstance(listed, dict):
        return None
    parts: dict[str, Part] = {}
    for name, at in listed.items():
        part = store.part(at) if store is not None and name in PARTS else None
        if part is None:
            return None
        parts[name] = part
    if status == "succeeded" and "result" not in parts:
        return None
    return _Summary(
        status=status,
        error=error,
        hit_time_cap=outcome.get("hit_time_cap") is True,
        hit_memory_cap=outcome.get("hit_memory_cap") is True,
        engine=engine_of(outcome),
        parts=parts,
        population_finite=outcome.get("population_finite") is True,
    )


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


def fold(report: ProcessReport, limits: Limits) -> Completion:
    """The completion report for this run (``POST {report.url}/complete``)."""
    if report.killed == "time":
        return Completion(
            failure(
                "time_limit_exceeded",
                f"the run passed its wall-time cap of {limits.time_seconds:g} s with no "
                f"generation boundary in time and was stopped",
                time_cap=True,
                report=report,
            )
        )
    if report.killed == "memory":
        return Completion(
            failure(
                "memory_limit_exceeded",
                f"the run used more than its memory cap of {limits.memory_mb} MB and was stopped",
                memory_cap=True,
                report=report,
            )
        )
    stopped = {
        "output": f"the run printed more than {limits.output_flood_bytes // (1024 * 1024)} MiB and was stopped",
        "message": f"the run wrote a message of more than {limits.message_bytes // 1024} KiB to the worker's "
        f"message channel and was stopped",
        "outcome": "the run produced a result larger than allowed and was stopped",
        "messages": f"the run wrote more than {limits.messages_per_second:g} messages a second to the "
        f"worker's message channel and was stopped",
    }
    if report.killed in stopped:
        return Completion(failure("resource_limit_exceeded", stopped[report.killed], report=report))
    if report.signal == signal.SIGXCPU:
        return Completion(
            failure(
                "time_limit_exceeded",
                f"the run used more than {limits.cpu_seconds} CPU seconds and was stopped",
                time_cap=True,
                report=report,
            )
        )
    if report.signal == signal.SIGXFSZ:
        return Completion(
            failure(
                "resource_limit_exceeded",
                f"the run wrote a file larger than {limits.file_size_mb} MiB and was stopped",
                report=report,
            )
        )
    summary = _summary(report.outcome, report.store) if report.killed is None else None
    if summary is not None and report.outcome is not None:
        body: CompleteReport = {
            "status": "succeeded" if summary.status == "succeeded" else "failed",
            "result": None,
            "error": summary.error,
            "metrics": metrics(report, hit_time_cap=summary.hit_time_cap, hit_memory_cap=summary.hit_memory_cap),
            "output": report.output,
            "engine": summary.engine,
            "warnings": warnings_of(report.outcome),
            "progress": progress_of(report.outcome),
        }
        files = {name: part for name, part in summary.parts.items() if name in STAGED_FILES}
        return Completion(
            body,
            result=summary.parts.get("result"),
            population=summary.parts.get("population"),
            population_finite=summary.population_finite,
            files=files,
        )
    if report.signal == signal.SIGKILL and report.killed is None:
        return Completion(
            failure(
                "memory_limit_exceeded",
                "the run was killed by the system, most likely for using too much memory",
                memory_cap=True,
                report=report,
            )
        )
    if report.signal is not None:
        try:
            name = signal.Signals(report.signal).name
        except ValueError:
            name = str(report.signal)
        return Completion(failure("code_error", f"the run's process died from signal {name}", report=report))
    if report.outcome is not None:
        return Completion(failure("internal_error", "the run's process sent an unreadable result", report=report))
    return Completion(
        failure(
            "code_error",
            f"the run's process exited with status {report.exit_code} before sending a result",
            report=report,
        )
    )
