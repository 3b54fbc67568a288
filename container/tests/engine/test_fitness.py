"""engine/fitness.py: stock's fitness bookkeeping (the cache, the calls, batches, dtypes) and its errors."""

from __future__ import annotations

import numpy as np
import pygad
import pytest

from allele_worker.engine import (
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import base, counted, sphere


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"gene_type": int, "gene_space": [0, 1], "mutation_probability": 0.05},
        {"keep_elitism": 0, "keep_parents": -1},
        {"keep_elitism": 3},
        {"fitness_batch_size": 7},
        {"keep_elitism": 0, "keep_parents": 2},
    ],
)
def test_fitness_bookkeeping_is_stocks(overrides):
    """Same state → same fitness array and same number of calls as stock cal_pop_fitness."""
    batched = "fitness_batch_size" in overrides
    counter, fitness_func = counted((lambda ga, rows, idx: -np.sum(rows**2, axis=1)) if batched else sphere)
    ga = AcceleratedGA(**base(fitness_func=fitness_func, **overrides))
    ga.run()
    for _ in range(3):
        # a next population with duplicates of parents/elites, as happens with int genes
        ga.previous_generation_fitness = ga.last_generation_fitness.copy()
        ga.run_select_parents()
        ga.run_crossover()
        ga.run_mutation()
        ga.run_update_population()
        ga.population[-1] = ga.last_generation_parents[0]
        before = counter.calls
        want = pygad.GA.cal_pop_fitness(ga)
        stock_calls = counter.calls - before
        got = ga.cal_pop_fitness()
        assert counter.calls - before - stock_calls == stock_calls
        assert np.array_equal(got, want) and got.dtype == want.dtype
        ga.last_generation_fitness = got


def test_fitness_errors_are_stocks():
    def nan_fitness(ga, solution, index):
        return float("nan") if index == 3 else 1.0

    calls = {"n": 0}

    def counting(ga, solution, index):
        calls["n"] += 1
        return nan_fitness(ga, solution, index)

    ga = AcceleratedGA(**base(fitness_func=counting))
    with pytest.raises(ValueError, match="NaN"):
        ga.run()
    assert calls["n"] == 4  # stops at the bad value, as stock does

    ga = AcceleratedGA(**base(fitness_func=lambda ga, s, i: True))
    with pytest.raises(ValueError, match=r"non-numeric|number"):
        ga.run()


@pytest.mark.parametrize(
    "overrides", [{}, {"fitness_batch_size": 4}, {"crossover_type": "two_points", "keep_elitism": 3}]
)
def test_user_calls_equal_stock_for_float_genes(overrides):
    """Float genes: every offspring is new, so calls are fixed by the configuration: equal."""
    totals = {}
    batched = "fitness_batch_size" in overrides
    for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
        counter, fitness_func = counted((lambda ga, rows, idx: -np.sum(rows**2, axis=1)) if batched else sphere)
        ga = cls(**base(fitness_func=fitness_func, num_generations=15, **overrides))
        ga.run()
        totals[name] = counter.calls
    assert totals["fast"] == totals["stock"], totals


def test_user_calls_not_more_than_stock_for_int_genes():
    """Int genes: offspring equal to a parent or elite reuse its fitness (same rule as stock, see
    test_fitness_bookkeeping_is_stocks); how many there are is random, so compare over seeds."""
    totals = {"stock": 0, "fast": 0}
    for seed in range(30):
        for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
            counter, fitness_func = counted()
            ga = cls(
                **base(
                    fitness_func=fitness_func,
                    num_generations=15,
                    random_seed=seed,
                    gene_type=int,
                    gene_space=[0, 1],
                    mutation_probability=0.05,
                )
            )
            ga.run()
            totals[name] += counter.calls
    assert totals["fast"] <= totals["stock"] * 1.03, totals


def test_batch_fitness_called_per_batch():
    sizes = []

    def batch(ga, rows, indices):
        sizes.append(len(indices))
        assert rows.shape == (len(indices), 8)
        return -np.sum(rows**2, axis=1)

    ga = AcceleratedGA(**base(fitness_func=batch, fitness_batch_size=6, num_generations=3))
    ga.run()
    assert sizes[:4] == [6, 6, 6, 2]  # initial population of 20
    assert sizes[4:7] == [6, 6, 6]  # 19 new offspring (the elite is cached)
    assert engine_label(ga) == "accelerated:sss+single_point+random"


def test_cache_hits_are_stocks_first_tuple_match():
    """``fitness.cache_hits``: for each row, the previous fitness of the first source row (elites
    before parents) equal to it as a tuple (-0.0 equals 0.0, NaN equals nothing, as in stock's
    dict of tuples); None when a row is not finite (stock evaluates then)."""
    from allele_worker.engine.fitness import cache_hits

    rng = np.random.default_rng(14)

    def stock_rule(rows, sources, previous):
        found = {}
        for index, row in enumerate(rows):
            for source, indices in sources:
                hits = [j for j, other in enumerate(source) if tuple(row) == tuple(other)]
                if hits:
                    found[index] = previous[indices[hits[0]]]
                    break
        return found

    for _ in range(100):
        rows = rng.integers(-2, 3, size=(30, 5)).astype(float)
        elites = rng.integers(-2, 3, size=(3, 5)).astype(float)
        parents = rng.integers(-2, 3, size=(7, 5)).astype(float)
        rows[:3], rows[3:5] = parents[:3], elites[1:]
        previous = rng.normal(size=30)
        sources = [(elites, rng.permutation(30)[:3]), (parents, rng.permutation(30)[:7])]
        if rng.random() < 0.3:
            rows[6], parents[1] = -0.0, 0.0
        for chosen in (sources, sources[1:]):
            assert cache_hits(rows, chosen, previous) == stock_rule(rows, chosen, previous)
            ints = rows.astype(np.int64)
            int_sources = [(source.astype(np.int64), indices) for source, indices in chosen]
            assert cache_hits(ints, int_sources, previous) == stock_rule(ints, int_sources, previous)
        for bad in (np.nan, np.inf):
            spoiled = rows.copy()
            spoiled[5, 0] = bad
            assert cache_hits(spoiled, sources, previous) is None


def test_batch_fitness_array_is_stocks_dtype_and_values():
    """Batch results placed as one float64 array: same array, dtype and calls as stock."""
    for result_type in (np.float64, np.float32, np.int64):
        counter, fitness_func = counted(lambda ga, rows, idx: (-np.sum(rows**2, axis=1)).astype(result_type))
        ga = AcceleratedGA(**base(fitness_func=fitness_func, fitness_batch_size=6, gene_type=int, keep_elitism=2))
        ga.run()
        ga.previous_generation_fitness = ga.last_generation_fitness.copy()
        ga.run_select_parents()
        ga.run_crossover()
        ga.run_mutation()
        ga.run_update_population()
        before = counter.calls
        want = pygad.GA.cal_pop_fitness(ga)
        stock_calls = counter.calls - before
        got = ga.cal_pop_fitness()
        assert counter.calls - before == 2 * stock_calls
        assert np.array_equal(got, want) and got.dtype == want.dtype
