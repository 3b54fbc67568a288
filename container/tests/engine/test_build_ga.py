"""engine/__init__.py: ``coverage`` and ``build_ga`` — what runs stock PyGAD from the start (uncovered
configurations, multi-objective selections), and the job path building the accelerated engine."""

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


def test_multi_objective_falls_back_to_stock():
    def two(ga, solution, index):
        return [float(np.sum(solution)), -float(np.sum(solution**2))]

    ga = build_ga(base(fitness_func=two))
    ga.run()
    assert engine_label(ga) == "pygad:multi-objective"
    assert ga.last_generation_fitness.shape == (20, 2)
    for selection in MULTI_OBJECTIVE_SELECTIONS:  # multi-objective by construction: stock from the start
        ga = build_ga(base(fitness_func=two, parent_selection_type=selection, nsga3_num_divisions=4))
        assert type(ga) is pygad.GA and engine_label(ga) == "pygad"


def test_jobs_build_the_accelerated_engine():
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3)), emit=lambda m: None)
    assert outcome["status"] == "succeeded"
    assert outcome["engine"] == "accelerated:sss+single_point+random"
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3, allow_duplicate_genes=False)), emit=lambda m: None)
    assert outcome["engine"] == "pygad"
