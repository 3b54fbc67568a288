"""worker/completion.py: the child's outcome is validated (by its relay, ``child.collector``, which
keeps it in the run's store; the worker checks the relay's summary), and process facts win by fixed
precedence."""

from __future__ import annotations

import json
import signal

from conftest import materialize

from allele_worker import validation
from allele_worker.child.collector import Collector
from allele_worker.sandbox import Limits, ProcessReport
from allele_worker.sandbox.process import collected_summary
from allele_worker.sandbox.store import Store
from allele_worker.worker import completion

LIMITS = Limits.from_caps(time_seconds=10, memory_mb=256)
GOOD = {
    "type": "outcome",
    "status": "succeeded",
    "hit_time_cap": False,
    "hit_memory_cap": False,
    "result": {
        "best_solution": [1.0, 2.0],
        "best_solution_fitness": 3.0,
        "best_solution_generation": 4,
        "best_solutions_fitness": [1.0, None, 3.0],
        "generations_completed": 5,
        "population": [[1.0, 2.0]],
        "stopped_reason": "completed",
    },
}


def report(**changes) -> ProcessReport:
    """The process report of a run whose job sent ``outcome`` (a message as the job writes it, NaN and
    infinities as JSON's extensions): collected as the run's relay does, into a store of its own."""
    values = dict(
        exit_code=0,
        signal=None,
        killed=None,
        outcome=GOOD,
        output="out",
        output_truncated=False,
        cpu_seconds=1.23456,
        peak_memory_mb=40.2,
        wall_ms=1500,
    )
    values.update(changes)
    outcome = values.pop("outcome")
    store = Store()
    sent: list[dict] = []
    if outcome is not None:
        collector = Collector(-1, -1, store.fd, LIMITS.channel())
        collector.send = sent.append  # type: ignore[method-assign]
        collector.collect(json.dumps(outcome).encode())
    summary = collected_summary(store, sent[-1]) if sent else None
    return ProcessReport(**values, outcome=summary, store=store)


def fold(process: ProcessReport, limits: Limits = LIMITS) -> dict:
    return materialize(completion.fold(process, limits))


def test_success():
    body = fold(report())
    assert body["status"] == "succeeded" and body["result"]["generations_completed"] == 5
    assert body["metrics"] == {
        "cpu_seconds_used": 1.235,
        "peak_memory_mb": 41,
        "execution_duration_ms": 1500,
        "hit_time_cap": False,
        "hit_memory_cap": False,
    }
    assert body["output"] == "out" and body["engine"] == "pygad"


def test_kill_beats_outcome():
    body = fold(report(killed="time", signal=signal.SIGKILL, exit_code=None))
    assert body["error"]["code"] == "time_limit_exceeded" and body["metrics"]["hit_time_cap"]
    body = fold(report(killed="memory", signal=signal.SIGKILL, exit_code=None))
    assert body["error"]["code"] == "memory_limit_exceeded" and body["metrics"]["hit_memory_cap"]
    body = fold(report(killed="output", signal=signal.SIGKILL, exit_code=None))
    assert body["error"]["code"] == "resource_limit_exceeded"


def test_signals():
    assert fold(report(signal=signal.SIGXCPU, exit_code=None, outcome=None))["error"]["code"] == "time_limit_exceeded"
    assert (
        fold(report(signal=signal.SIGXFSZ, exit_code=None, outcome=None))["error"]["code"] == "resource_limit_exceeded"
    )
    assert fold(report(signal=signal.SIGKILL, exit_code=None, outcome=None))["error"]["code"] == "memory_limit_exceeded"
    body = fold(report(signal=signal.SIGSEGV, exit_code=None, outcome=None))
    assert body["error"] == {"code": "code_error", "message": "the run's process died from signal SIGSEGV"}


def test_exit_without_outcome():
    body = fold(report(exit_code=3, outcome=None))
    assert body["error"]["code"] == "code_error" and "status 3" in body["error"]["message"]


def test_hostile_outcomes_rejected():
    bad = [
        {"type": "outcome", "status": "succeeded", "result": "x"},
        {"type": "outcome", "status": "succeeded", "result": dict(GOOD["result"], population=[1])},
        {"type": "outcome", "status": "succeeded", "result": dict(GOOD["result"], stopped_reason="because")},
        {"type": "outcome", "status": "failed", "error": {"code": "pwned", "message": "x"}},
        {"type": "outcome", "status": "maybe"},
        ["not", "a", "dict"],
    ]
    for message in bad:
        assert validation.validate_outcome(message) is None, message
        assert fold(report(outcome=message))["error"]["code"] == "internal_error"


def test_failed_outcome_passes_through():
    message = {
        "type": "outcome",
        "status": "failed",
        "error": {"code": "code_error", "message": "fitness_func line 2: KeyError: 'a'"},
    }
    body = fold(report(outcome=message))
    assert body["status"] == "failed" and body["result"] is None
    assert body["error"] == message["error"]


def test_non_finite_numbers_anywhere_become_null():
    """Hostile code can write inf/nan into any field of its outcome; the report must stay JSON."""
    import json

    inf, nan = float("inf"), float("nan")
    hostile = {
        **GOOD,
        "result": {
            **GOOD["result"],
            "best_solution": [inf, 1.0],
            "best_solution_fitness": nan,
            "best_solutions_fitness": [-inf, 2.0],
            "population": [[nan, 1.0]],
        },
    }
    body = fold(report(outcome=hostile))
    result = body["result"]
    assert result["best_solution"] == [None, 1.0] and result["best_solution_fitness"] is None
    assert result["best_solutions_fitness"] == [None, 2.0] and result["population"] == [[None, 1.0]]
    json.dumps(body, allow_nan=False)


def test_warnings_and_progress_pass_through_checked():
    message = {
        "type": "outcome",
        "status": "failed",
        "error": {"code": "code_error", "message": "fitness_func line 2: ValueError"},
        "warnings": [{"message": "UserWarning: x" * 100, "count": 3}],
        "progress": {"generations_completed": 5, "best_solution_fitness": -0.5},
    }
    body = fold(report(outcome=message))
    assert body["warnings"] == [{"message": ("UserWarning: x" * 100)[:500], "count": 3}]
    assert body["progress"] == {"generations_completed": 5, "best_solution_fitness": -0.5}
    for warnings in (
        "many",
        [{"message": 1, "count": 1}],
        [{"message": "m", "count": 0}],
        [{"message": "m", "count": 1}] * 52,
    ):
        assert fold(report(outcome={**message, "warnings": warnings}))["warnings"] == []
    for progress in (
        "far",
        {"generations_completed": -1, "best_solution_fitness": 1.0},
        {"generations_completed": 2, "best_solution_fitness": "inf"},
    ):
        assert fold(report(outcome={**message, "progress": progress}))["progress"] is None


def test_an_infinite_fitness_in_text_and_several_objectives_pass():
    infinite = {
        **GOOD,
        "result": {**GOOD["result"], "best_solution_fitness": "inf", "best_solutions_fitness": [1.0, "-inf", "inf"]},
    }
    assert fold(report(outcome=infinite))["result"]["best_solution_fitness"] == "inf"
    several = {
        **GOOD,
        "result": {
            **GOOD["result"],
            "num_objectives": 2,
            "best_solution_fitness": [1.0, 2.0],
            "best_solution_objectives": [1.0, 2.0],
            "best_solutions_fitness": [[1.0, 2.0]],
            "objective_maxima": [[1.5, 2.0]],
            "pareto_front": {"solutions": [[1.0, 2.0]], "objectives": [[1.0, 2.0]]},
        },
    }
    result = fold(report(outcome=several))["result"]
    assert result["num_objectives"] == 2 and result["best_solution_fitness"] == [1.0, 2.0]
    assert result["objective_maxima"] == [[1.5, 2.0]]
    for wrong in (
        {"best_solution_fitness": "inf"},
        {"best_solution_fitness": None},
        {"best_solution_fitness": [1.0]},
        {"best_solutions_fitness": [[1.0]]},
        {"best_solution_objectives": [1.0]},
        {"objective_maxima": [[1.0, 2.0], [1.0, 2.0]]},  # not one per generation of the history
        {"objective_maxima": [[1.0, "x"]]},
        {"num_objectives": 1001},
        {"pareto_front": None},
    ):
        bad = {**several, "result": {**several["result"], **wrong}}
        assert fold(report(outcome=bad))["error"]["code"] == "internal_error", wrong
