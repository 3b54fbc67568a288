"""engine/loop.py: the lean ``run()`` loop is stock's loop with the same operators — the same draws,
attributes, fitness calls, callbacks and stops — and hands over to stock's ``run()`` where it must."""

from __future__ import annotations

import numpy as np
import pygad
import pytest

from allele_worker.engine import (
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import STATE, base, pair, sphere


class Recorder:
    """A fitness function (per solution or batch) that records the rows of every call."""

    def __init__(self, batch=False):
        self.batch = batch
        self.groups = []

    def __call__(self, ga, solution, index):
        if self.batch:
            self.groups.append(list(index))
            return -np.sum(np.asarray(solution, dtype=float) ** 2, axis=1)
        self.groups.append([index])
        return -float(np.sum(solution**2))


def lean_pair(**overrides):
    """Two seeded AcceleratedGA runs of one configuration: lean loop, and stock's run() loop with
    the same accelerated operators (the same draws, so the same trajectory)."""
    runs = []
    for lean in (True, False):
        recorder = Recorder(batch=bool(overrides.get("fitness_batch_size")))
        ga = AcceleratedGA(**base(**{"fitness_func": recorder, **overrides}))
        ga.lean_run = lean
        assert ga.lean_run_covered() is lean
        ga.run()
        runs.append((ga, recorder))
    return runs


LEAN_CONFIGS = [
    {},
    {"fitness_batch_size": 50, "sol_per_pop": 50, "num_parents_mating": 10, "num_genes": 10},
    {"fitness_batch_size": 7},
    {"keep_elitism": 0},
    {"keep_elitism": 0, "keep_parents": 2},
    {"keep_elitism": 0, "keep_parents": 0},
    {"keep_elitism": 3, "keep_parents": 0},
    {"keep_elitism": 8},  # more elites than parents mating
    {"gene_type": int, "init_range_low": -3, "init_range_high": 3},  # many cache hits
    {"gene_type": int, "gene_space": [0, 1, 2], "fitness_batch_size": 5},
    {"gene_space": {"low": -1.0, "high": 1.0}},
    {"parent_selection_type": "tournament", "crossover_type": "two_points", "crossover_probability": 0.6},
    {"parent_selection_type": "rank", "crossover_type": "uniform", "mutation_probability": 0.2},
    {"parent_selection_type": "rws", "crossover_type": "scattered", "mutation_num_genes": 3},
    {"mutation_type": None},
    {"mutation_by_replacement": True, "random_mutation_min_val": 2.0, "random_mutation_max_val": -2.0},
    {"gene_constraint": [lambda solution, values: [v for v in values if v > 0]] * 8, "sample_size": 50},
    {"stop_criteria": ["saturate_2", "reach_-0.5"], "num_generations": 30},
]


@pytest.mark.parametrize("overrides", LEAN_CONFIGS)
def test_lean_loop_is_the_stock_loop_with_the_same_operators(overrides):
    (lean, lean_calls), (loop, loop_calls) = lean_pair(**overrides)
    assert lean_calls.groups == loop_calls.groups  # same rows evaluated, same batches
    assert lean.num_fitness_evaluations == loop.num_fitness_evaluations
    for name in STATE:
        a, b = getattr(lean, name), getattr(loop, name)
        assert type(a) is type(b), name
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape, name
            np.testing.assert_array_equal(a, b, err_msg=name)
    assert lean.generations_completed == loop.generations_completed
    assert lean.best_solutions_fitness == loop.best_solutions_fitness
    assert [type(v) for v in lean.best_solutions_fitness] == [type(v) for v in loop.best_solutions_fitness]
    assert lean.best_solutions_generations == loop.best_solutions_generations
    assert lean.best_solution_generation == loop.best_solution_generation
    assert lean.run_completed and loop.run_completed
    assert lean.solutions == loop.solutions == [] and lean.solutions_fitness == []
    assert engine_label(lean) == engine_label(loop)


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"fitness_batch_size": 50, "sol_per_pop": 50},
        {"fitness_batch_size": 3, "keep_elitism": 0},
        {"keep_elitism": 0, "keep_parents": 2},
    ],
)
def test_lean_loop_attributes_and_fitness_calls_match_stock(overrides):
    overrides = {"num_generations": 12, **overrides}
    batch = bool(overrides.get("fitness_batch_size"))
    stock_calls, fast_calls = Recorder(batch), Recorder(batch)
    stock = pygad.GA(**base(fitness_func=stock_calls, **overrides))
    fast = AcceleratedGA(**base(fitness_func=fast_calls, **overrides))
    assert fast.lean_run_covered()
    stock.run()
    fast.run()
    # Float genes, continuous mutation: the cache hits are the carried-over rows only, so
    # the number of calls and the size of every batch are stock's.
    assert [len(g) for g in fast_calls.groups] == [len(g) for g in stock_calls.groups]
    assert fast.num_fitness_evaluations == stock.num_fitness_evaluations
    for name in STATE:
        a, b = getattr(fast, name), getattr(stock, name)
        assert type(a) is type(b), name
        if a is not None:
            assert (a.dtype, a.shape) == (b.dtype, b.shape), name
    assert fast.generations_completed == stock.generations_completed == 12
    assert len(fast.best_solutions_fitness) == len(stock.best_solutions_fitness) == 13
    assert fast.best_solutions_generations == stock.best_solutions_generations
    assert fast.run_completed and stock.run_completed
    np.testing.assert_array_equal(fast.previous_generation_fitness, fast.last_generation_fitness)
    # The first generation starts from the same (stock-built) population: same first best.
    assert fast.best_solutions_fitness[0] == stock.best_solutions_fitness[0]
    best, fitness, index = fast.best_solution(fast.last_generation_fitness)
    assert fitness == fast.best_solutions_fitness[-1]
    np.testing.assert_array_equal(best, fast.population[index])


def callback_log(cls, stop_at=None, **overrides):
    log = []

    def on_start(ga):
        log.append(("on_start", ga.generations_completed, ga.last_generation_fitness is None))

    def on_generation(ga):
        log.append(
            (
                "on_generation",
                ga.generations_completed,
                len(ga.best_solutions_fitness),
                ga.last_generation_fitness.shape,
                ga.population.shape,
            )
        )
        if stop_at is not None and ga.generations_completed == stop_at:
            return "STOP"
        return None

    def on_stop(ga, fitness):
        log.append(
            (
                "on_stop",
                ga.generations_completed,
                fitness is ga.last_generation_fitness,
                ga.run_completed,
                len(ga.best_solutions_fitness),
            )
        )

    ga = cls(**base(on_start=on_start, on_generation=on_generation, on_stop=on_stop, **overrides))
    ga.run()
    return ga, log


@pytest.mark.parametrize("stop_at", [None, 3])
def test_lean_loop_callbacks_order_arguments_and_stop(stop_at):
    stock, stock_log = callback_log(pygad.GA, stop_at)
    fast, fast_log = callback_log(AcceleratedGA, stop_at)
    assert fast.lean_run_covered()
    assert fast_log == stock_log
    assert fast.generations_completed == stock.generations_completed == (stop_at or 5)


def generation_fitness(ga, solution, index):
    return float(ga.generations_completed)  # RNG-independent: the stopping generation is fixed


def capped_generation_fitness(ga, solution, index):
    return float(min(ga.generations_completed, 3))


def constant_fitness(ga, solution, index):
    return 1.0


@pytest.mark.parametrize(
    "overrides",
    [
        {"fitness_func": generation_fitness, "stop_criteria": "reach_4"},
        {"fitness_func": capped_generation_fitness, "stop_criteria": ["reach_100", "saturate_3"]},
        {"fitness_func": constant_fitness, "stop_criteria": "saturate_3"},
        {"fitness_func": constant_fitness, "stop_criteria": "evaluations_50"},
        {"fitness_func": constant_fitness, "stop_criteria": ["saturate_30", "reach_1"]},
    ],
)
def test_lean_loop_stops_at_stocks_generation(overrides):
    stock = pygad.GA(**base(num_generations=20, **overrides))
    fast = AcceleratedGA(**base(num_generations=20, **overrides))
    assert fast.lean_run_covered()
    stock.run()
    fast.run()
    assert fast.generations_completed == stock.generations_completed < 20
    assert fast.num_fitness_evaluations == stock.num_fitness_evaluations
    assert fast.best_solutions_fitness == stock.best_solutions_fitness


def test_lean_loop_continues_a_completed_run_like_stock():
    stock, fast = pair(num_generations=4)
    for ga in (stock, fast):
        ga.run()
        ga.run()
    assert fast.generations_completed == stock.generations_completed == 8
    assert fast.best_solutions_generations == stock.best_solutions_generations
    assert len(fast.best_solutions_fitness) == len(stock.best_solutions_fitness)


@pytest.mark.parametrize(
    "overrides",
    [
        {"on_fitness": lambda ga, fitness: None},
        {"on_parents": lambda ga, parents: None},
        {"on_crossover": lambda ga, offspring: None},
        {"on_mutation": lambda ga, offspring: None},
        {"save_solutions": True},
        {"parent_selection_type": "nsga2"},
        {"crossover_type": "sbx"},
        {"crossover_type": lambda parents, size, ga: parents[np.arange(size[0]) % len(parents)]},
        {"mutation_type": "swap"},
        {"gene_space": [[0, 1]] * 8},  # nested: the random mutation falls back
        {"stop_criteria": "time_100"},
    ],
)
def test_lean_loop_falls_back_to_stock_run(overrides, monkeypatch):
    if overrides.get("parent_selection_type") == "nsga2":
        overrides["fitness_func"] = lambda ga, solution, index: [sphere(ga, solution, index), 1.0]
    fast = AcceleratedGA(**base(**overrides))
    if "stop_criteria" in overrides:
        assert fast.lean_run_covered()  # time_ is covered; a delay is not
        fast.delay_after_gen = 0.0001
    assert not fast.lean_run_covered()
    calls = []
    stock_run = pygad.GA.run
    monkeypatch.setattr(pygad.GA, "run", lambda ga: (calls.append(1), stock_run(ga))[1])
    fast.run()
    assert calls == [1] and fast.run_completed and fast.generations_completed == 5


def test_lean_loop_hands_a_multi_objective_run_to_stock():
    def two(ga, solution, index):
        return [sphere(ga, solution, index), float(solution[0])]

    starts = []
    stock = pygad.GA(**base(fitness_func=two, on_start=starts.append))
    fast = AcceleratedGA(**base(fitness_func=two, on_start=starts.append))
    assert fast.lean_run_covered()  # the fitness is only known after the first evaluation
    stock.run()
    fast.run()
    assert starts == [stock, fast]  # on_start once each
    assert fast.num_fitness_evaluations == stock.num_fitness_evaluations
    assert fast.generations_completed == 5 and fast.run_completed
    assert fast.on_start is not None and fast._handover is None
    # From the first evaluation on the exact mode: stock's operators, so stock's population.
    assert engine_label(fast) == "exact:sss+single_point=pygad+random"
    np.testing.assert_array_equal(fast.population, stock.population)
    np.testing.assert_array_equal(np.array(fast.best_solutions_fitness), np.array(stock.best_solutions_fitness))


def test_lean_loop_takes_stocks_steps_after_a_callback_edits_the_state():
    def on_generation(ga):
        if ga.generations_completed == 2:
            ga.last_generation_fitness = ga.last_generation_fitness.copy()
            ga.last_generation_fitness[3] = np.nan  # stock's sort, not the vectorised one
        if ga.generations_completed == 3:
            ga.population = ga.population.astype(object)  # not the storage dtype

    (lean, lean_calls), (loop, loop_calls) = lean_pair(on_generation=on_generation)
    assert lean_calls.groups == loop_calls.groups
    for name in STATE:
        a, b = getattr(lean, name), getattr(loop, name)
        if a is not None:
            np.testing.assert_array_equal(a, b, err_msg=name)
    assert lean.best_solutions_fitness == loop.best_solutions_fitness
    assert lean.generations_completed == 5
