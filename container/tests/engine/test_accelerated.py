"""engine/accelerated.py: ``AcceleratedGA`` as a whole — seeded runs are reproducible, callbacks see
what stock shows them, and the engine label names each step that fell back."""

from __future__ import annotations

import numpy as np
import pygad
import pytest

from allele_worker.engine import (
    build_ga,
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import base


def test_seeded_runs_are_reproducible():
    results = []
    for _ in range(2):
        ga = AcceleratedGA(
            **base(
                num_generations=30,
                crossover_type="two_points",
                parent_selection_type="tournament",
                mutation_probability=0.2,
            )
        )
        ga.run()
        results.append((ga.population.copy(), list(ga.best_solutions_fitness)))
    assert np.array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def test_callbacks_see_the_documented_attributes():
    seen = {"stock": [], "fast": []}

    def make(name):
        def on_generation(ga):
            fitness = ga.last_generation_fitness
            seen[name].append(
                (
                    ga.generations_completed,
                    ga.population.shape,
                    ga.population.dtype,
                    len(ga.best_solutions_fitness),
                    type(fitness),
                    fitness.shape,
                    ga.last_generation_parents.shape,
                    ga.last_generation_offspring_crossover.shape,
                    ga.last_generation_offspring_mutation.shape,
                    ga.last_generation_elitism.shape,
                    ga.num_fitness_evaluations,
                )
            )
            assert ga.best_solution(pop_fitness=fitness)[1] == fitness.max()
            if ga.generations_completed == 4:
                return "stop"

        return on_generation

    for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
        log = []
        ga = cls(
            **base(
                num_generations=10,
                on_generation=make(name),
                on_start=lambda g: log.append("start"),
                on_fitness=lambda g, f: log.append("fitness"),
                on_parents=lambda g, p: log.append("parents"),
                on_crossover=lambda g, o: log.append("crossover"),
                on_mutation=lambda g, o: log.append("mutation"),
                on_stop=lambda g, f: log.append("stop"),
            )
        )
        ga.run()
        seen[name + "_log"] = log
        assert ga.generations_completed == 4 and len(ga.best_solutions_fitness) == 5
        assert ga.best_solution_generation <= 4
    assert seen["stock"] == seen["fast"]
    assert seen["stock_log"] == seen["fast_log"]


def test_callbacks_can_replace_offspring():
    def on_mutation(ga, offspring):
        return np.zeros_like(offspring).tolist()

    ga = AcceleratedGA(**base(on_mutation=on_mutation, num_generations=2))
    ga.run()
    assert np.count_nonzero(ga.population[1:]) == 0


@pytest.mark.parametrize(
    "overrides,label",
    [
        (
            {"mutation_type": "adaptive", "mutation_probability": [0.3, 0.1]},
            "accelerated:sss+single_point+adaptive=pygad",
        ),
        ({"crossover_type": "sbx"}, "accelerated:sss+sbx=pygad+random"),
        ({"gene_space": [[0, 1]] * 8, "gene_type": int}, "accelerated:sss+single_point+random=pygad"),
        ({"gene_space": {"low": 0, "high": 10, "step": 2}}, "accelerated:sss+single_point+random=pygad"),
        ({"mutation_type": "swap", "crossover_type": None}, "accelerated:sss+none+swap=pygad"),
        ({"parent_selection_type": "tournament", "crossover_type": "uniform"}, "accelerated:tournament+uniform+random"),
    ],
)
def test_operator_fall_backs_are_recorded(overrides, label):
    ga = build_ga(base(**overrides))
    assert isinstance(ga, AcceleratedGA)
    ga.run()
    assert engine_label(ga) == label
    assert len(label) <= 64
