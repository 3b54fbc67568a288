"""child/collector.py in-process: what the run's relay makes of the lines a job writes (a pipe in,
a store and a channel out).  Through the real sandbox: test_channel.py."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from allele_worker.child.collector import Collector, outcome_lines
from allele_worker.sandbox import Limits
from allele_worker.sandbox.process import collected_summary
from allele_worker.sandbox.store import Store
from allele_worker.wire import POPULATION_PREFIX, to_json

LIMITS = Limits.from_caps(time_seconds=10, memory_mb=256).channel()
RESULT = {
    "best_solution": [1.0, 2.0],
    "best_solution_fitness": 3.0,
    "best_solution_generation": 1,
    "best_solutions_fitness": [1.0, 3.0],
    "generations_completed": 1,
    "stopped_reason": "completed",
}


def outcome(population: Any) -> dict[str, Any]:
    return {
        "type": "outcome",
        "status": "succeeded",
        "hit_time_cap": False,
        "hit_memory_cap": False,
        "engine": "pygad",
        "result": {**RESULT, "population": population},
    }


def relay(
    written: bytes, sources: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, Store]:
    """``written`` through a collector as the job's pipe: the channel's messages, the summary, the store."""
    job_r, job_w = os.pipe()
    channel_r, channel_w = os.pipe()
    store = Store()
    writer = threading.Thread(target=lambda: (os.write(job_w, written), os.close(job_w)))
    writer.start()
    Collector(job_r, channel_w, store.fd, LIMITS, sources=sources)(0)
    writer.join()
    os.close(job_r)
    os.close(channel_w)
    with os.fdopen(channel_r, "rb") as channel:
        messages = [json.loads(line) for line in channel.read().splitlines()]
    last = messages[-1] if messages and messages[-1]["type"] == "outcome" else None
    return messages, collected_summary(store, last) if last else None, store


def lines(*messages: Any) -> bytes:
    return b"".join(to_json(message) + b"\n" for message in messages)


def part(summary: dict[str, Any], store: Store, name: str) -> bytes:
    found = store.part(summary["parts"][name])
    assert found is not None
    return found.read()


def test_a_succeeded_outcome_sends_its_population_first_on_a_line_of_its_own():
    population = [[0.1, 2.5], [3.0, -1e-7]]
    sent = outcome_lines(outcome(population))  # type: ignore[arg-type]
    assert [message["type"] for message in sent] == ["population", "outcome"]
    assert to_json(sent[0]).startswith(POPULATION_PREFIX) and to_json(sent[0]).endswith(b"}")
    assert "population" not in sent[1]["result"]  # type: ignore[typeddict-item]
    failed = {"type": "outcome", "status": "failed", "error": {"code": "code_error", "message": "x"}}
    assert outcome_lines(failed) == [failed]  # type: ignore[arg-type]


def test_a_finite_population_is_stored_as_the_job_wrote_it_else_made_finite_and_encoded_again():
    """The relay parses the population line to check it; when every value is a finite number its
    bytes are stored as they came (never encoded again), else encoded again with null for each
    value JSON cannot carry."""
    population = [[0.1, 2.5], [3.0, -1e-7]]
    _, summary, store = relay(lines(*outcome_lines(outcome(population))))  # type: ignore[arg-type]
    assert summary is not None and summary["population_finite"] is True
    assert part(summary, store, "population") == to_json(population)
    assert json.loads(part(summary, store, "result"))["best_solution_fitness"] == 3.0
    written = POPULATION_PREFIX + b"[[1.0, NaN], [1e999, 2]]}\n" + to_json({**outcome(None), "result": RESULT}) + b"\n"
    _, summary, store = relay(written)
    assert summary is not None and summary["population_finite"] is False
    assert part(summary, store, "population") == b"[[1.0,null],[null,2]]"


def test_a_population_line_counts_only_for_an_outcome_without_a_population():
    """An outcome (user code may write its own) that has a population keeps it; a population line
    with no outcome after it is no outcome; one that is not a list of rows makes the outcome invalid."""
    own = [[5.0]]
    _, summary, store = relay(POPULATION_PREFIX + b"[[1.0]]}\n" + to_json(outcome(own)) + b"\n")
    assert summary is not None and json.loads(part(summary, store, "population")) == own
    messages, summary, _ = relay(POPULATION_PREFIX + b"[[1.0]]}\n")
    assert messages == [] and summary is None
    written = POPULATION_PREFIX + b'"rows"}\n' + to_json({**outcome(None), "result": RESULT}) + b"\n"
    messages, summary, _ = relay(written)
    assert messages == [{"type": "outcome", "at": None}] and summary == {}


def test_a_failure_to_compile_is_kept_only_when_the_relay_cannot_compile_the_code_either():
    # docs/runner-protocol.md: "stage": "compile" makes the run free, so the relay checks the job's word.
    error = {"code": "code_error", "message": "fitness_func line 1: SyntaxError: x", "stage": "compile"}
    failed = {"type": "outcome", "status": "failed", "error": error, "hit_time_cap": False, "hit_memory_cap": False}
    broken = {"fitness_func": "def f(ga, s, i):\n    return (", "fitness_func_entry": "f"}
    fine = {"fitness_func": "def f(ga, s, i):\n    return 1.0\n", "fitness_func_entry": "f"}
    _, summary, _ = relay(lines(failed), sources=broken)
    assert summary is not None and summary["error"] == error
    _, summary, _ = relay(lines(failed), sources=fine)  # user code that compiled forged the claim
    assert summary is not None and summary["error"] == {"code": "code_error", "message": error["message"]}
    _, summary, _ = relay(lines({**failed, "error": {**error, "code": "internal_error"}}), sources=broken)
    assert summary is not None and "stage" not in summary["error"]  # only a code_error has a stage
