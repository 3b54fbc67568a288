"""Live progress of every generation (docs/runner-protocol.md, ``points``): each progress message carries
the trail points of the generations since the previous one — generation 0 first, the last one the
message's own generation, a final message for the generations after the last one — bounded per message
(downsampled: first, last and the best's extremes kept) and checked by the relay."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import params
from test_fidelity import TWO

from allele_worker import wire
from allele_worker.child import jobs

SLOW = (
    "import time\ndef fitness(ga, solution, idx):\n    time.sleep(0.0005)\n    return -float((solution ** 2).sum())\n"
)


def progress_of(job: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    monkeypatch.setattr(jobs.GenerationGuard, "PROGRESS_EVERY", 0.02)  # several generations a message
    sent: list[dict[str, Any]] = []
    outcome = jobs.execute(jobs.JobSpec(params=job), emit=sent.append)
    assert outcome["status"] == "succeeded", outcome.get("error")
    return [m for m in sent if m.get("type") == "progress"], outcome


def test_each_message_carries_every_generation_since_the_last(monkeypatch):
    job = params(random_seed=2, num_generations=120, sol_per_pop=8, num_parents_mating=4, fitness_func=SLOW)
    messages, outcome = progress_of(job, monkeypatch)
    assert len(messages) >= 3
    assert any(len(m["points"]) > 1 for m in messages)  # generations in between, not just the latest
    previous = -1
    for message in messages:
        generations = [p[0] for p in message["points"]]
        assert generations == list(range(previous + 1, message["generations_completed"] + 1))
        previous = message["generations_completed"]
        assert wire.checked_progress(message) == {k: v for k, v in message.items() if k != "type"}
    assert previous == 120  # the last message is the run's last generation
    history = outcome["result"]["population_history"]
    points = [p for m in messages for p in m["points"]]
    assert [p[0] for p in points] == list(range(121))
    for point, stats in zip(points, history, strict=True):  # the population's statistics, as the result has them
        assert point == [
            stats["generation"],
            stats["best"],
            None,
            None,
            [stats[k] for k in ("best", "mean", "median", "worst")],
        ]


def test_several_objectives_send_each_objectives_maximum_and_the_best_solution_at_the_message(monkeypatch):
    job = params(random_seed=2, num_generations=60, sol_per_pop=8, num_parents_mating=4, fitness_func=TWO)
    job["parent_selection_type"] = "nsga2"
    job["fitness_func"] = "import time\n" + TWO.replace(
        "def fitness(ga, solution, idx):\n", "def fitness(ga, solution, idx):\n    time.sleep(0.0005)\n"
    )
    messages, outcome = progress_of(job, monkeypatch)
    points = [p for m in messages for p in m["points"]]
    assert [p[0] for p in points] == list(range(61))
    assert [p[2] for p in points] == outcome["result"]["objective_maxima"]
    for message in messages:
        *before, last = message["points"]
        assert last == [
            message["generations_completed"],
            None,
            message["best_objectives"],
            message["best_solution_objectives"],
        ]
        assert all(len(p) == 3 for p in before)


def test_many_generations_are_downsampled_keeping_the_first_last_and_extremes():
    points = [[g, float(-abs(g - 3000)), None, None, [0.0, 0.0, 0.0, 0.0]] for g in range(5000)]
    points[1234][1] = -1e9  # the worst best
    kept = wire.downsample(points, wire.TRAIL_POINTS_PER_MESSAGE)
    assert wire.TRAIL_POINTS_PER_MESSAGE - 4 <= len(kept) <= wire.TRAIL_POINTS_PER_MESSAGE
    generations = [p[0] for p in kept]
    assert generations == sorted(generations)
    assert {0, 4999, 3000, 1234} <= set(generations)
    # Beside a large message, fewer: the message stays within wire.MESSAGE_BYTES.
    fitted = jobs.fit_points(points, wire.MESSAGE_BYTES - 4000)
    assert len(wire.to_json(fitted)) <= 3000 and fitted[-1][0] == 4999


def test_the_relay_drops_points_that_are_not_trail_points():
    base = {"type": "progress", "generations_completed": 3, "best_solution_fitness": 1.0}
    good = [[2, 1.0, None, None, [1.0, 0.5, 0.5, None]], [3, None, [1.0, 2.0], [0.5, 1.5]]]
    assert wire.checked_progress({**base, "points": good})["points"] == good
    for bad in (
        [["x", 1.0]],
        [[1, "a"]],
        [[1, 1.0, [1.0] * 7]],  # more objectives than a trail keeps
        [[1, 1.0, None, None, [1.0, 2.0]]],  # statistics are four values
        [[1, 1.0]] * (wire.TRAIL_POINTS_PER_MESSAGE + 1),
        "points",
    ):
        assert "points" not in wire.checked_progress({**base, "points": bad})
    assert wire.checked_progress({**base, "points": [[1, float("inf"), [float("nan"), 1.0]]]})["points"] == [
        [1, None, [None, 1.0]]
    ]
