"""engine/__init__.py: ``coverage`` and ``build_ga`` — what runs stock PyGAD from the start (uncovered
configurations), what runs the exact mode (multi-objective selections), and the job path building the
accelerated engine."""

from __future__ import annotations

import numpy as np
import pygad
import pytest
from conftest import params

from allele_worker.child import jobs
from allele_worker.engine import (
    MULTI_OBJECTIVE_SELECTIONS,
    build_ga,
    coverage,
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import base


@pytest.mark.parametrize(
    "overrides,reason",
    [
        ({"allow_duplicate_genes": False}, "allow_duplicate_genes"),
        ({"gene_type": [int] * 8}, "gene_type"),
        ({"save_solutions": True}, "save_solutions"),
    ],
)
def test_uncovered_configurations_run_stock_pygad(overrides, reason):
    covered, why = coverage(base(**overrides))
    assert not covered and reason in why
    ga = build_ga(base(**overrides))
    assert type(ga) is pygad.GA and engine_label(ga) == "pygad"
    ga.run()


def test_multi_objective_runs_take_the_exact_mode():
    """A multi-objective fitness found at the first evaluation, or a multi-objective selection from
    the start: the exact mode (stock's operators and draws, the engine's exact steps), so the run is
    stock's for the seed."""

    def two(ga, solution, index):
        return [float(np.sum(solution)), -float(np.sum(solution**2))]

    ga = build_ga(base(fitness_func=two))
    ga.run()
    assert engine_label(ga) == "exact:sss+single_point=pygad+random"
    assert ga.last_generation_fitness.shape == (20, 2)
    stock = pygad.GA(**base(fitness_func=two))
    stock.run()
    np.testing.assert_array_equal(ga.population, stock.population)
    for selection in MULTI_OBJECTIVE_SELECTIONS:
        kwargs = base(fitness_func=two, parent_selection_type=selection, nsga3_num_divisions=4)
        ga = build_ga(kwargs)
        assert type(ga) is AcceleratedGA and not ga._accel_active
        ga.run()
        assert engine_label(ga) == f"exact:{selection}+single_point=pygad+random"
        stock = pygad.GA(**kwargs)
        stock.run()
        np.testing.assert_array_equal(ga.population, stock.population)
        np.testing.assert_array_equal(np.array(ga.best_solutions_fitness), np.array(stock.best_solutions_fitness))


def test_jobs_build_the_accelerated_engine():
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3)), emit=lambda m: None)
    assert outcome["status"] == "succeeded"
    assert outcome["engine"] == "accelerated:sss+single_point+random"
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3, allow_duplicate_genes=False)), emit=lambda m: None)
    assert outcome["engine"] == "pygad"
