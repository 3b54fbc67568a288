"""``population_history`` (docs/api.md#results): the population's best, mean, median and worst fitness
per generation, generation 0 first, on the lean and stock paths and with several objectives, equal to
what stock PyGAD's own populations give; and recording it draws nothing (the fidelity tests stay exact)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
import pytest
from conftest import params
from test_fidelity import STOCK_PATH, TWO, same_as_stock, stock_ga, succeeded

from allele_worker.child import ga_result, jobs
from allele_worker.wire import POPULATION_HISTORY_POINTS

# The fitness of each generation's population, as the GA holds it, recorded by an on_generation of the
# job's own (its first call also keeps generation 0: the population the first generation started from).
# The job runs in this process (jobs.execute): the recorder leaves its list in builtins for the test.
RECORDER = (
    "import builtins\n"
    "def record(ga):\n"
    "    kept = builtins.__dict__.setdefault('_allele_test_kept', [])\n"
    "    if not kept:\n"
    "        kept.append(ga.previous_generation_fitness.copy())\n"
    "    kept.append(ga.last_generation_fitness.copy())\n"
)

CONFIGS = {
    "lean path": {},
    "stock path": STOCK_PATH,
    "several objectives (exact mode)": {"fitness_func": TWO, "parent_selection_type": "nsga2"},
}


def expected_points(kept: list[Any]) -> list[dict[str, Any]]:
    def value(v: float) -> Any:
        return float(v) if np.isfinite(v) else None

    points = []
    for generation, fitness in enumerate(kept):
        f = np.asarray(fitness, dtype=float)
        stats = [f.max(axis=0), f.mean(axis=0), np.median(f, axis=0), f.min(axis=0)]
        row = [value(s) if f.ndim == 1 else [value(v) for v in s] for s in stats]
        points.append(dict(zip(("generation", "best", "mean", "median", "worst"), [generation, *row], strict=True)))
    return points


@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
def test_population_history_is_every_generation_of_stock_pygads_populations(config):
    job = params(random_seed=5, num_generations=15, sol_per_pop=10, num_parents_mating=4, num_genes=3)
    job.update(CONFIGS[config])
    outcome = succeeded(job)
    if config != "lean path":  # the stock path and the exact mode are stock PyGAD's runs, draw for draw
        same_as_stock(outcome, stock_ga(job))  # recording the statistics changed nothing the GA draws
    job.update(on_generation=RECORDER, on_generation_entry="record")
    try:
        recorded = succeeded(job)
        kept = builtins.__dict__.pop("_allele_test_kept")
    finally:
        builtins.__dict__.pop("_allele_test_kept", None)
    assert recorded["result"]["population"] == outcome["result"]["population"]  # the same run
    got = outcome["result"]["population_history"]
    assert len(got) == outcome["result"]["generations_completed"] + 1 == 16
    want = expected_points(kept)
    assert [p["generation"] for p in got] == list(range(16))
    for g, w in zip(got, want, strict=True):
        for key in ("best", "mean", "median", "worst"):
            assert g[key] == pytest.approx(w[key], rel=1e-12, abs=1e-12), (g["generation"], key)
    if outcome["result"]["num_objectives"] == 1:  # PyGAD's own best per generation is the best
        assert [p["best"] for p in got] == outcome["result"]["best_solutions_fitness"]


def test_progress_carries_the_populations_statistics_for_one_objective():
    sent: list[dict[str, Any]] = []
    job = params(random_seed=1, num_generations=3, sol_per_pop=6, num_parents_mating=2, num_genes=2)
    jobs.execute(jobs.JobSpec(params=job), emit=sent.append)
    progress = [m for m in sent if m.get("type") == "progress"]
    assert progress and all(len(m["population"]) == 4 for m in progress)
    best, mean, median, worst = progress[0]["population"]
    assert best >= median >= worst and best >= mean >= worst


def test_a_long_history_is_bounded_with_its_first_and_last_generation():
    rows = [np.array([g, g / 2, g / 3, -g], dtype=float) for g in range(5001)]
    points = ga_result.population_points(rows, 1)
    assert len(points) == POPULATION_HISTORY_POINTS
    assert points[0]["generation"] == 0 and points[-1]["generation"] == 5000
    assert all(p["best"] == p["generation"] for p in points)
    nonfinite = ga_result.population_points([np.array([np.inf, np.nan, 1.0, -np.inf])], 1)
    assert nonfinite == [{"generation": 0, "best": None, "mean": None, "median": 1.0, "worst": None}]
    many = ga_result.population_points([np.zeros((4, 500)) for _ in range(300)], 500)
    assert len(many) == 100  # 200,000 numbers at most: 100 generations of 4 × 500
