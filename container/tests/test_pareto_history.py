"""``pareto_history`` (docs/api.md#result-files, ``pareto_history.json``): a multi-objective run's
population at a bounded set of generations, its front apart from the rest; every generation while few,
then evenly spread (the stride doubles), generation 0 and the last always kept; the caps on snapshots,
objectives and solutions; recording it draws nothing (the run is stock PyGAD's) and a resumed run's
history is its twin's."""

from __future__ import annotations

import builtins
import itertools
from types import SimpleNamespace

import numpy as np
from conftest import params
from test_fidelity import THREE, TWO, same_as_stock, stock_ga, succeeded
from test_resume import assert_resumes_exactly

from allele_worker import validation
from allele_worker.child import jobs, objectives, staged_files
from allele_worker.wire import (
    PARETO_HISTORY_OBJECTIVES,
    PARETO_HISTORY_POINTS,
    PARETO_HISTORY_SNAPSHOTS,
    PARETO_HISTORY_VALUES,
    to_json,
)

RECORDER = (
    "import builtins\n"
    "def record(ga):\n"
    "    kept = builtins.__dict__.setdefault('_allele_test_fronts', [])\n"
    "    if not kept:\n"
    "        kept.append(ga.previous_generation_fitness.copy())\n"
    "    kept.append(ga.last_generation_fitness.copy())\n"
)


def non_dominated(rows: np.ndarray) -> list[bool]:
    """Each row: does no other row beat it (at least as good on each objective, better on one)?"""
    return [not any(np.all(o >= r) and np.any(o > r) for o in rows) for r in rows]


def as_set(vectors: list[list[float]]) -> list[tuple[float, ...]]:
    return sorted(tuple(v) for v in vectors)


def test_each_snapshot_is_that_generations_population_split_at_its_front():
    job = params(random_seed=3, num_generations=20, sol_per_pop=12, num_parents_mating=6, fitness_func=TWO) | {
        "parent_selection_type": "nsga2"
    }
    outcome = succeeded(job)
    same_as_stock(outcome, stock_ga(job))  # recording the fronts changed nothing the GA draws
    job.update(on_generation=RECORDER, on_generation_entry="record")
    try:
        recorded = succeeded(job)
        kept = builtins.__dict__.pop("_allele_test_fronts")
    finally:
        builtins.__dict__.pop("_allele_test_fronts", None)
    assert recorded["result"]["population"] == outcome["result"]["population"]  # the same run
    history = outcome["result"]["pareto_history"]
    assert history["num_objectives"] == history["objectives_shown"] == 2
    snapshots = history["snapshots"]
    assert [s["generation"] for s in snapshots] == list(range(21))  # every generation while few
    for snapshot in snapshots:
        population = np.asarray(kept[snapshot["generation"]], dtype=float)
        flags = non_dominated(population)
        assert snapshot["population_size"] == 12
        assert as_set(snapshot["front"]) == as_set(population[flags].tolist())
        assert as_set(snapshot["dominated"]) == as_set(population[[not f for f in flags]].tolist())
    # The last snapshot's front holds the final front's vectors (which has each solution once).
    final = {tuple(v) for v in outcome["result"]["pareto_front"]["objectives"]}
    assert {tuple(v) for v in snapshots[-1]["front"]} == final


def test_a_single_objective_run_has_no_history():
    assert "pareto_history" not in succeeded(params(random_seed=1))["result"]


def spaced(generations: int) -> list[int]:
    """The generations a history keeps of a run of ``generations`` generations (a GA stand-in)."""
    history = jobs.ParetoHistory()
    rng = np.random.default_rng(0)
    previous = rng.random((6, 2))
    for generation in range(1, generations + 1):
        fitness = rng.random((6, 2))
        ga = SimpleNamespace(
            generations_completed=generation, last_generation_fitness=fitness, previous_generation_fitness=previous
        )
        history.record(ga)
        previous = fitness
    file = history.snapshots(ga, 2)
    return [s["generation"] for s in file["snapshots"]]


def test_snapshots_are_every_generation_while_few_then_evenly_spread_with_the_first_and_last():
    assert spaced(1) == [0, 1]
    assert spaced(48) == list(range(49))
    assert spaced(49) == [*range(0, 49, 2), 49]  # a 50th would be one too many: the stride doubles
    for generations in (50, 97, 300, 1000, 4321):
        kept = spaced(generations)
        assert len(kept) <= PARETO_HISTORY_SNAPSHOTS
        assert len(kept) >= PARETO_HISTORY_SNAPSHOTS // 2
        assert kept[0] == 0 and kept[-1] == generations
        steps = {b - a for a, b in itertools.pairwise(kept[:-1])}
        assert len(steps) == 1, steps  # evenly spread (the last one wherever the run ended)
        assert kept[-1] - kept[-2] <= steps.pop()


def test_a_snapshot_is_capped_front_first_and_the_first_objectives_only():
    rng = np.random.default_rng(1)
    fitness = rng.random((5000, 8))
    rows = objectives.snapshot_rows(fitness)
    shown = PARETO_HISTORY_OBJECTIVES
    assert rows.shape == (objectives.snapshot_size(shown), shown + 1)
    assert objectives.snapshot_size(shown) * shown * PARETO_HISTORY_SNAPSHOTS <= PARETO_HISTORY_VALUES
    assert objectives.snapshot_size(2) == PARETO_HISTORY_POINTS
    flags = rows[:, -1]
    count = int(flags.sum())
    assert count > 0 and np.all(flags[:count] == 1) and np.all(flags[count:] == 0)  # the front first
    front = objectives.pareto_front(fitness)
    assert rows[:count, :shown].tolist() == fitness[front[:count], :shown].tolist() or count < len(front)
    # A small population is kept whole.
    small = rng.random((30, 3))
    whole = objectives.snapshot_rows(small)
    assert whole.shape == (30, 4)
    assert as_set(whole[whole[:, -1] == 1, :3].tolist()) == as_set(small[non_dominated(small)].tolist())


def test_the_history_is_validated_and_staged_as_its_own_file():
    outcome = succeeded(
        params(random_seed=2, num_generations=5, fitness_func=THREE) | {"parent_selection_type": "nsga2"}
    )
    valid = validation.validate_outcome(outcome)
    assert valid is not None and valid["result"] is not None
    result = valid["result"]
    history = result["pareto_history"]
    assert history["objectives_shown"] == 3 and len(history["snapshots"]) == 6
    files = staged_files.take_files(result)
    assert "pareto_history" not in result
    assert files["pareto_history.json"] == to_json(history)
    # Past a bound, or not the shape: the outcome is refused.
    too_many = {**history, "snapshots": [dict(history["snapshots"][0], generation=g) for g in range(51)]}
    bad = {**history, "snapshots": [dict(history["snapshots"][0], front=[[1.0, 2.0]])]}
    for wrong in (too_many, bad, {**history, "objectives_shown": 2}, [1]):
        broken = succeeded(
            params(random_seed=2, num_generations=5, fitness_func=THREE) | {"parent_selection_type": "nsga2"}
        )
        broken["result"]["pareto_history"] = wrong
        assert validation.validate_outcome(broken) is None


def test_a_resumed_run_keeps_its_twins_history_across_a_doubled_stride():
    job = params(random_seed=4, num_generations=130, sol_per_pop=8, num_parents_mating=4, fitness_func=TWO) | {
        "parent_selection_type": "nsga2"
    }
    assert_resumes_exactly(job, at=(20, 70, 101))
    history = succeeded(job)["result"]["pareto_history"]["snapshots"]
    assert [s["generation"] for s in history] == [*range(0, 129, 4), 130]
