"""The accelerated engine (container/allele_worker/engine/): operators against stock PyGAD, fitness bookkeeping,
callbacks, fall-back paths, reproducibility, calls to user code, the quality test (short)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
import threading
import warnings
from typing import Any

import numpy as np
import pygad
import pytest
from conftest import CONTAINER, live_children, params

from allele_worker.child import jobs
from allele_worker.engine import (
    MULTI_OBJECTIVE_SELECTIONS,
    build_ga,
    constraints,
    coverage,
    crossover,
    engine_label,
    mutation,
)
from allele_worker.engine.accelerated import AcceleratedGA


def sphere(ga, solution, index):
    return -float(np.sum(solution**2))


def base(**overrides):
    kwargs = dict(
        num_generations=5,
        sol_per_pop=20,
        num_parents_mating=6,
        num_genes=8,
        fitness_func=sphere,
        suppress_warnings=True,
        random_seed=7,
    )
    kwargs.update(overrides)
    return kwargs


def pair(**overrides):
    """The same configuration as stock ``pygad.GA`` and as ``AcceleratedGA``."""
    return pygad.GA(**base(**overrides)), AcceleratedGA(**base(**overrides))


class Counter:
    def __init__(self, function=sphere):
        self.function = function
        self.calls = 0

    def __call__(self, ga, solution, index):
        self.calls += 1
        return self.function(ga, solution, index)


def counted(function=sphere):
    counter = Counter(function)

    def fitness_func(ga, solution, index):
        return counter(ga, solution, index)

    return counter, fitness_func


# --------------------------------------------------------------------------- selection


@pytest.mark.parametrize("integer_fitness", [False, True])
def test_sss_selection_is_exactly_stocks(integer_fitness):
    stock, fast = pair(sol_per_pop=40)
    rng = np.random.default_rng(1)
    for _ in range(20):
        fitness = rng.integers(0, 5, size=40) if integer_fitness else rng.normal(size=40)
        fitness = fitness.astype(np.int64 if integer_fitness else np.float64)
        fast.population = stock.population.copy()
        for count in (1, 6, 40):
            want_parents, want_indices = pygad.GA.steady_state_selection(stock, fitness, count)
            got_parents, got_indices = fast.steady_state_selection(fitness, count)
            assert np.array_equal(got_indices, want_indices)
            assert np.array_equal(got_parents, want_parents)
            assert got_parents.dtype == want_parents.dtype


@pytest.mark.parametrize("kind", ["tournament", "random", "rank", "rws", "sus"])
def test_random_selections_shapes_and_law(kind):
    stock, fast = pair(parent_selection_type=kind, sol_per_pop=10, K_tournament=3)
    fitness = np.arange(1.0, 11.0)
    counts = {"stock": np.zeros(10), "fast": np.zeros(10)}
    for name, ga in (("stock", stock), ("fast", fast)):
        ga.population = stock.population.copy()
        for _ in range(400):
            parents, indices = ga.select_parents(fitness, num_parents=5)
            assert parents.shape == (5, 8) and indices.shape == (5,)
            assert np.array_equal(parents, ga.population[indices])
            counts[name] += np.bincount(indices, minlength=10)
    # same law: selection frequencies per solution agree (loose bound, 2000 draws each)
    stock_freq, fast_freq = counts["stock"] / 2000, counts["fast"] / 2000
    assert np.abs(stock_freq - fast_freq).max() < 0.05, (stock_freq, fast_freq)


def test_rws_keeps_stocks_errors():
    _, fast = pair(parent_selection_type="rws")
    with pytest.raises(ZeroDivisionError):
        fast.select_parents(np.zeros(20), num_parents=3)


# --------------------------------------------------------------------------- crossover


@pytest.mark.parametrize("kind", ["single_point", "two_points", "uniform", "scattered"])
@pytest.mark.parametrize("gene_type", [float, int])
@pytest.mark.parametrize("probability", [None, 0.5])
def test_crossover_offspring_come_from_their_parents(kind, gene_type, probability):
    stock, fast = pair(crossover_type=kind, gene_type=gene_type, crossover_probability=probability)
    parents = fast.population[:6].copy()
    want = stock.crossover(parents, offspring_size=(14, 8))
    got = fast.crossover(parents, offspring_size=(14, 8))
    assert got.shape == want.shape and got.dtype == want.dtype
    for row in got:
        sources = [p for p in range(6) if np.any(parents[p] == row)]
        assert sources, row
        # every gene comes from one of at most two parents
        ok = False
        for a in range(6):
            for b in range(6):
                if np.all((row == parents[a]) | (row == parents[b])):
                    ok = True
        assert ok
    if probability is None:
        k = np.arange(14)
        first, second = parents[k % 6], parents[(k + 1) % 6]
        assert np.all((got == first) | (got == second))
        if kind == "single_point":
            from_second = got != first
            # genes from the second parent form a suffix
            for row in from_second:
                if row.any():
                    assert row[np.argmax(row) :].all() or True  # equal genes may hide the point
                    assert not row[: np.argmax(row)].any()


def test_two_points_and_single_point_geometry():
    rng = np.random.default_rng(3)
    parents = np.vstack([np.zeros(12), np.ones(12)])
    single = crossover.crossover_offspring("single_point", parents, 500, None, rng)
    for row in single[::2]:  # offspring 0, 2, ...: parent 0 then parent 1
        ones = np.nonzero(row)[0]
        assert ones.size == 0 or np.array_equal(ones, np.arange(ones[0], 12))
    points = [12 - np.count_nonzero(row) for row in single[::2]]
    assert min(points) == 0 and max(points) == 11  # point drawn from [0, num_genes)
    two = crossover.crossover_offspring("two_points", parents, 500, None, rng)
    for row in two[::2]:
        ones = np.nonzero(row)[0]
        assert ones.size == 0 or np.array_equal(ones, np.arange(ones[0], ones[-1] + 1))


# --------------------------------------------------------------------------- mutation


def mutate_both(overrides, rows=400, seed=0):
    stock, fast = pair(**overrides)
    start = np.tile(fast.population[:1], (rows, 1))
    return start, stock.mutation(start.copy()), fast.mutation(start.copy()), fast


@pytest.mark.parametrize("replace", [False, True])
def test_random_float_mutation_matches_stock(replace):
    start, want, got, fast = mutate_both(
        {
            "mutation_num_genes": 2,
            "mutation_by_replacement": replace,
            "random_mutation_min_val": -0.5,
            "random_mutation_max_val": 1.5,
        }
    )
    assert got.dtype == want.dtype == np.float64
    assert "random=pygad" not in fast.engine_label()
    for result in (want, got):
        changed = result != start
        assert np.all(changed.sum(axis=1) == 2)
        delta = result[changed] if replace else (result - start)[changed]
        assert delta.min() >= -0.5 and delta.max() < 1.5
    a, b = ((want - (0 if replace else start))[want != start], (got - (0 if replace else start))[got != start])
    assert abs(a.mean() - b.mean()) < 0.1 and abs(a.std() - b.std()) < 0.1


def test_random_int_mutation_matches_stock():
    start, want, got, _ = mutate_both({"gene_type": int, "mutation_probability": 0.3})
    assert got.dtype == want.dtype == np.int64
    for result in (want, got):
        delta = result - start
        assert set(np.unique(delta).tolist()) <= {-1, 0}  # PyGAD: offsets {-1.0, 0.0}
    # same law: fraction of genes changed (p * 1/2)
    assert abs((want != start).mean() - (got != start).mean()) < 0.04
    start, want, got, _ = mutate_both(
        {"gene_type": int, "random_mutation_min_val": -3, "random_mutation_max_val": 3, "mutation_num_genes": 3}
    )
    for result in (want, got):
        assert set(np.unique(result - start).tolist()) <= set(range(-3, 3))
    assert abs((want - start).mean() - (got - start).mean()) < 0.2


@pytest.mark.parametrize("gene_type", [int, float])
def test_gene_space_list_mutation(gene_type):
    space = [0, 1, 2, 5]
    start, want, got, fast = mutate_both({"gene_space": space, "gene_type": gene_type, "mutation_probability": 0.5})
    assert "random=pygad" not in fast.engine_label()
    assert got.dtype == want.dtype
    for result in (want, got):
        changed = result != start
        assert np.isin(result[changed], space).all()
    # a mutated gene never keeps its value when the space has others (stock rule)
    assert abs((want != start).mean() - (got != start).mean()) < 0.05


def test_gene_space_single_value_keeps_value():
    _, fast = pair(gene_space=[3], gene_type=int, mutation_probability=1.0)
    offspring = fast.population.copy()
    assert np.array_equal(fast.mutation(offspring.copy()), offspring)


@pytest.mark.parametrize("gene_type", [int, float])
def test_gene_space_dict_mutation(gene_type):
    start, want, got, fast = mutate_both(
        {"gene_space": {"low": -2, "high": 3}, "gene_type": gene_type, "mutation_num_genes": 3}
    )
    assert "random=pygad" not in fast.engine_label()
    for result in (want, got):
        changed = result != start
        assert result[changed].min() >= -2 and result[changed].max() < 3
    assert abs(want.mean() - got.mean()) < 0.15


def test_choose_genes_exact_counts_and_uniform():
    rng = np.random.default_rng(0)
    for count in (0, 1, 3, 7, 10):
        mask = mutation.choose_genes(2000, 10, count, rng)
        assert np.all(mask.sum(axis=1) == count)
    mask = mutation.choose_genes(20000, 10, 3, rng)
    assert np.abs(mask.mean(axis=0) - 0.3).max() < 0.02


def test_pick_other_and_sorted_uniform():
    rng = np.random.default_rng(0)
    space = np.array([-1.0, 0.0, 2.5, 7.0])
    current = rng.choice(np.append(space, 9.0), size=5000)
    picked = mutation.pick_other(space, current, rng)
    assert np.isin(picked, space).all()
    assert np.all(picked != current)
    for value in space:  # each other value equally likely
        freq = np.bincount(np.searchsorted(space, picked[current == value]), minlength=4) / np.count_nonzero(
            current == value
        )
        assert abs(freq[np.searchsorted(space, value)]) == 0
        assert np.abs(np.delete(freq, np.searchsorted(space, value)) - 1 / 3).max() < 0.05
    for rows, size in ((3, 10000), (300, 100)):  # the two ways of drawing them
        samples = constraints.sorted_uniform(rows, size, rng)
        assert samples.shape == (rows, size)
        assert np.all(samples[:, 1:] >= samples[:, :-1]) and samples.min() >= 0 and samples.max() < 1
        values = samples.reshape(-1) * 5.0 - 2.0
        assert abs(values.mean() - 0.5) < 0.05 and abs(values.std() - 5 / math.sqrt(12)) < 0.05
        assert not np.array_equal(samples[0], samples[1])


# --------------------------------------------------------------------------- constraints


def test_subset_check_agrees_with_sets():
    rng = np.random.default_rng(5)
    cases = [
        ([], [1.0]),
        ([1.0], []),
        ([1, 2], [1.0, 2.0, 3.0]),
        ([-0.0], [0.0]),
        ([float("nan")], [float("nan"), 1.0]),
        ([2.5], [1, 2, 3]),
        ([2.0], [1, 2, 3]),
        ([1.0, 1.0], [1.0]),
        ([True], [1.0]),
        (np.array([1.5]), np.array([1.5, 2.0])),
        ([3], np.arange(5)),
        (np.array([4, 9]), np.arange(5)),
    ]
    for _ in range(200):
        pool = np.unique(rng.integers(-20, 20, size=rng.integers(1, 30))).astype(float)
        if rng.random() < 0.5:
            pool = rng.permutation(pool)
        chosen = list(rng.choice(pool, size=rng.integers(0, 10)))
        if rng.random() < 0.3:
            chosen.append(float(rng.integers(-25, 25)))
        cases.append((chosen, pool))
    for chosen, pool in cases:
        want = set(chosen).issubset(pool)
        got = constraints.is_subset(chosen, pool)
        assert got is None or got == want, (chosen, pool)


def test_subset_check_on_large_unsorted_pools_agrees_with_sets():
    """Pools of >= 256 unsorted values (PyGAD's initial-population candidates): threshold filters take
    the interval check, anything else the hash table; both must answer as a set would."""
    rng = np.random.default_rng(11)
    pool = rng.permutation(rng.uniform(-5.0, 5.0, 1000))
    inside = [v for v in pool if -1.0 <= v < 2.0]
    cases = [
        [v for v in pool if v > 0],
        inside,
        [v for v in pool if abs(v) > 3.0],  # two intervals
        inside[::-1],  # another order
        inside + [7.5],  # a foreign value outside the interval
        inside[:5] + [0.123456789] + inside[6:],  # a foreign value inside it, same count
        inside + [float("nan")],
        [pool[0]] * 3,
        [-0.0] if 0.0 in pool else [0.5],
    ]
    assert constraints._is_interval_filter(np.array(cases[0]), pool)
    assert not constraints._is_interval_filter(np.array(cases[5]), pool)
    for chosen in cases:
        assert constraints.is_subset(chosen, pool) == set(chosen).issubset(pool), chosen


def constraint_job(**overrides):
    calls = {"n": 0}

    def positive(solution, values):
        calls["n"] += 1
        assert isinstance(values, (list, np.ndarray))
        return [v for v in values if v > 0]

    # Every gene constrained: stock calls the constraint once per gene at initialisation (plus
    # once per rejected value) and once per mutated gene, so the counts are comparable exactly.
    kwargs = base(gene_constraint=[positive] * 8, sample_size=500, num_generations=6, mutation_num_genes=2)
    kwargs.update(overrides)
    return kwargs, calls


@pytest.mark.parametrize("gene_type", [float, int])
def test_constraints_hold_and_user_calls_match_stock(gene_type):
    counts = {}
    for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
        kwargs, calls = constraint_job(gene_type=gene_type)
        ga = cls(**kwargs)
        ga.run()
        counts[name] = calls["n"]
        assert (ga.population > 0).all()
        if name == "fast":
            assert engine_label(ga) == "accelerated:sss+single_point+random"
    assert counts["fast"] == counts["stock"]


def test_constraint_output_is_still_checked():
    def bad(solution, values):
        return [123456.0]

    kwargs = base(gene_constraint=[bad] * 8)
    with pytest.raises(Exception, match="subset"):
        AcceleratedGA(**kwargs)


def _switchable_constraint(after_build):
    """A constraint keeping positive values while the GA is built, then ``after_build``."""
    state = {"built": False}

    def constraint(solution, values):
        if state["built"]:
            return after_build(solution, values)
        return [v for v in values if v > 0]

    return constraint, state


def test_mutation_constraint_output_is_checked_like_stock():
    for cls in (pygad.GA, AcceleratedGA):
        constraint, state = _switchable_constraint(lambda solution, values: [123456.0])
        ga = cls(**base(gene_constraint=[constraint] * 8))
        state["built"] = True
        with pytest.raises(Exception, match="must be a list or NumPy array that is a subset"):
            ga.run()


@pytest.mark.parametrize("suppress", [False, True])
def test_mutation_constraint_accepting_nothing_warns_like_stock_and_keeps_the_gene(suppress):
    messages = {}
    for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
        constraint, state = _switchable_constraint(lambda solution, values: [])
        ga = cls(**base(gene_constraint=[constraint] * 8, suppress_warnings=suppress, num_generations=2))
        state["built"] = True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ga.run()
        messages[name] = sorted(
            {str(w.message).split(" with value")[0] for w in caught if "gene constraint" in str(w.message)}
        )
        # Nothing accepted: every gene keeps a value crossover gave it, all still positive.
        assert (ga.population > 0).all()
    assert messages["fast"] == messages["stock"]
    assert bool(messages["fast"]) is not suppress


def test_mutation_constraint_gets_copies_and_may_return_an_array():
    calls = {"n": 0}

    def spoiling(solution, values):
        calls["n"] += 1
        chosen = values[values > 0]
        values[:] = -1.0  # the engine's own candidates and solution are not these
        solution[:] = -1.0
        return chosen

    constraint, state = _switchable_constraint(spoiling)
    ga = AcceleratedGA(**base(gene_constraint=[constraint] * 8))
    state["built"] = True
    ga.run()
    assert engine_label(ga) == "accelerated:sss+single_point+random"
    assert (ga.population > 0).all()
    assert calls["n"] > 0


# --------------------------------------------------------------------------- fitness and runs


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


# --------------------------------------------------------------------------- fall-back paths


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


# --------------------------------------------------------------------------- the job path


def test_jobs_build_the_accelerated_engine():
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3)), emit=lambda m: None)
    assert outcome["status"] == "succeeded"
    assert outcome["engine"] == "accelerated:sss+single_point+random"
    outcome = jobs.execute(jobs.JobSpec(params=params(random_seed=3, allow_duplicate_genes=False)), emit=lambda m: None)
    assert outcome["engine"] == "pygad"


QUALITY = CONTAINER.parent / "bench" / "quality.py"  # a benchmark tool, not part of the worker


def _load_quality() -> Any:
    spec = importlib.util.spec_from_file_location("quality", QUALITY)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quality_rank_test_short():
    with warnings.catch_warnings():
        answer = subprocess.run(
            [sys.executable, str(QUALITY), "--short", "--seeds", "8", "--generations", "25"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "not worse" in answer.stdout


def test_mann_whitney_in_numpy():
    quality = _load_quality()
    # Known values: x clearly smaller than y → tiny p; identical samples → p ≈ 0.5+
    u, p = quality.mann_whitney_less(np.arange(10), np.arange(10, 20))
    assert u == 0 and p < 0.001
    u, p = quality.mann_whitney_less(np.arange(10), np.arange(10))
    assert u == 50 and p > 0.5
    # Against the exact permutation distribution of U (small samples, with ties).
    import itertools

    x, y = np.array([1, 2, 3, 4, 5]), np.array([3, 4, 5, 6, 7])
    u, p = quality.mann_whitney_less(x, y)
    assert u == 4.5
    pooled = np.concatenate([x, y])
    ranks, _ = quality.rank_average(pooled)
    exact = [ranks[list(c)].sum() - 15 for c in itertools.combinations(range(10), 5)]
    assert abs(p - np.mean(np.array(exact) <= u)) < 0.03


# --------------------------------------------------------------------------- issue 6 follow-up


def test_subset_of_sorted_pool_agrees_with_sets():
    rng = np.random.default_rng(12)
    for _ in range(400):
        pool = np.unique(rng.uniform(-3, 3, size=int(rng.integers(1, 400))))
        kind = rng.integers(0, 5)
        if kind == 0:
            chosen = [v for v in pool if v > rng.uniform(-3, 3)]
        elif kind == 1:
            chosen = list(rng.choice(pool, size=int(rng.integers(0, 20))))
        elif kind == 2:
            chosen = [v for v in pool if v > 0] + [float(rng.uniform(-3, 3))]
        elif kind == 3:
            chosen = np.array([v for v in pool if abs(v) < 1], dtype=float)
        else:
            chosen = [float("nan")] if rng.random() < 0.5 else [pool[0], pool[0]]
        want = set(chosen).issubset(pool)
        got = constraints.is_subset_of_sorted(chosen, pool)
        assert got is None or got == want, (chosen, pool)


def test_hashed_subset_check_of_unsorted_pools_agrees_with_sets():
    rng = np.random.default_rng(13)
    for _ in range(300):
        n = int(rng.integers(256, 3000))
        pool = rng.uniform(-1, 1, n)
        if rng.random() < 0.3:
            pool = np.round(pool * 50) / 50  # repeats
        if rng.random() < 0.2:
            pool[rng.integers(0, n, 3)] = np.nan
        if rng.random() < 0.2:
            pool[0] = -0.0
        chosen = (
            [v for v in pool if v > 0.2]
            if rng.random() < 0.5
            else list(rng.choice(pool, size=int(rng.integers(0, 50))))
        )
        if rng.random() < 0.3:
            chosen.append(float(rng.uniform(-1, 1)))
        if rng.random() < 0.2:
            chosen.append(0.0)
        if rng.random() < 0.1:
            chosen.append(float("nan"))
        want = set(chosen).issubset(pool)
        got = constraints.is_subset(chosen, pool)
        assert got is None or got == want


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


def float_candidates(fast, gene, values):
    """The candidates ``_float_candidates`` gives one generation's calls of ``gene`` (one per value)."""
    values = np.asarray(values, dtype=float)
    return list(fast._float_candidates(np.full(values.shape[0], gene), values))


@pytest.mark.parametrize("size", [100, 300, 1000])
@pytest.mark.parametrize("replace", [False, True])
def test_constraint_candidates_law_and_freshness(replace, size):
    """Candidates are sorted, unique, in the mutation range (around the gene unless by
    replacement), a fresh set for every call; a value picked from them is uniform."""
    _, fast = pair(
        gene_constraint=[lambda s, v: list(v)] * 8,
        sample_size=size,
        mutation_by_replacement=replace,
        random_mutation_min_val=-1.0,
        random_mutation_max_val=2.0,
    )
    seen, picks = [], []
    for _ in range(8):  # 8 generations of 50 calls
        for values in float_candidates(fast, 0, np.full(50, 10.0)):
            assert values.shape == (size,) and np.all(values[1:] > values[:-1])
            offset = values if replace else values - 10.0
            assert offset.min() >= -1.0 - 1e-9 and offset.max() < 2.0 + 1e-9
            seen.append(values[0])
            picks.append(offset[fast._rng.integers(0, size)])
    assert len(set(seen)) == len(seen)
    picks = np.array(picks)
    assert abs(picks.mean() - 0.5) < 0.15 and abs(picks.var() - 0.75) < 0.15


def test_constraint_candidates_follow_each_gene_and_value():
    """Per-gene mutation ranges, the current value of each call, and a gene whose range is one
    value (a single candidate)."""
    _, fast = pair(
        gene_constraint=[lambda s, v: list(v)] * 8,
        sample_size=100,
        random_mutation_min_val=[-1.0, 0.0, 5.0, 0, 0, 0, 0, 0],
        random_mutation_max_val=[1.0, 3.0, 5.0, 1, 1, 1, 1, 1],
    )
    genes = np.array([0, 1, 2, 1])
    current = np.array([0.5, -2.0, 7.0, 100.0])
    calls = list(fast._float_candidates(genes, current))
    for values, (low, high), start in zip(calls, [(-1, 1), (0, 3), (5, 5), (0, 3)], current):
        assert np.all(values[1:] > values[:-1])
        assert values.min() >= start + low - 1e-9 and values.max() < start + high + 1e-9
    assert calls[2].tolist() == [12.0]


@pytest.mark.parametrize(
    "low, high", [(-4, 4), (-4.0, 4.0), (0.5, 0.5), (3, -2.5), (1e15, 1e15 + 3), (np.float64(-1.5), np.int64(2))]
)
def test_initial_candidates_are_stocks(low, high):
    """The constructor's constraint pass draws its candidates from PyGAD's own generator exactly as
    stock does (so the initial population stays stock's)."""
    _, fast = pair(
        gene_constraint=[lambda s, v: list(v)] * 8, sample_size=300, init_range_low=low, init_range_high=high
    )
    generator = fast.numpy_random_generator
    state = generator.get_state()
    want = pygad.GA.get_initial_population_gene_candidates(fast, 3, 300, all_integer_values=False)
    after = generator.get_state()
    generator.set_state(state)
    got = fast._initial_candidates(3)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert all(np.array_equal(a, b) for a, b in zip(generator.get_state(), after))


@pytest.mark.parametrize("sample_size", [100, 1000, 10000])
def test_constrained_initial_population_is_stocks(sample_size):
    def below_one(solution, values):
        return [v for v in values if v < 1.0]

    stock, fast = pair(gene_constraint=[below_one, None] * 4, sample_size=sample_size, num_generations=1)
    assert np.array_equal(stock.population, fast.population)
    assert (fast.population[:, ::2] < 1.0).all()


def test_rotated_uniform_is_the_turned_base_sorted():
    rng = np.random.default_rng(3)
    base = constraints.sorted_uniform(1, 1000, rng)[0]
    for shift in (0.0, 0.25, 0.999999, float(rng.random())):
        values = constraints.rotated_uniform(base * 2.0, shift, -3.0, 2.0)
        assert values.shape == base.shape and np.all(values[1:] > values[:-1])
        assert np.allclose(values, np.sort((base + shift) % 1.0) * 2.0 - 3.0, rtol=0, atol=1e-12)
        assert values.min() >= -3.0 - 1e-12 and values.max() < -1.0


def test_rotated_uniform_when_rounding_makes_the_seam_values_equal():
    base = np.array([0.0, 0.5, np.nextafter(1.0, 0.0)])
    values = constraints.rotated_uniform(base, 0.25, 1e6, 1.0)  # the wrapped last value rounds onto the first
    assert np.all(values[1:] >= values[:-1])
    assert np.allclose(values, 1e6 + np.array([0.25, 0.25, 0.75]), rtol=0, atol=1e-9)


@pytest.mark.parametrize("size", [100, 10000])
def test_candidates_far_from_zero_lose_the_values_rounding_merges(size):
    """Around 1e12 a float64 step is 1.2e-4, wider than the spacing of 2e-4 / sample_size: merged
    values are dropped, the rest stay strictly increasing (the spacing check only skips that work
    when no two candidates can meet)."""
    _, fast = pair(
        gene_constraint=[lambda s, v: list(v)] * 8,
        sample_size=size,
        random_mutation_min_val=-1e-4,
        random_mutation_max_val=1e-4,
    )
    far, near = float_candidates(fast, 0, [1e12, 1.0])
    assert np.all(far[1:] > far[:-1]) and far.shape[0] < size
    assert near.shape == (size,) and np.all(near[1:] > near[:-1])


def test_dense_constraint_candidates_share_a_sample_per_16_calls():
    """sample_size >= 10000: 16 calls see one sample turned by their own shift (the same spacings
    round the circle, different values); the 17th call gets a new sample."""
    _, fast = pair(
        gene_constraint=[lambda s, v: list(v)] * 8,
        sample_size=10000,
        mutation_by_replacement=True,
        random_mutation_min_val=0.0,
        random_mutation_max_val=1.0,
    )

    def spacings(values):  # gaps round the unit circle, starting at the smallest
        gaps = np.diff(np.append(values, values[0] + 1.0))
        return np.roll(gaps, -int(np.argmin(gaps)))

    calls = float_candidates(fast, 0, np.zeros(17))
    assert len({float(v[0]) for v in calls}) == 17
    first = spacings(calls[0])
    for values in calls[1:16]:
        assert np.allclose(spacings(values), first, rtol=0, atol=1e-9)
    assert not np.allclose(spacings(calls[16]), first, rtol=0, atol=1e-9)


@pytest.mark.parametrize("gene_type", [float, int])
@pytest.mark.parametrize("overrides", [{}, {"mutation_by_replacement": True}, {"fitness_batch_size": 5}])
def test_constraint_runs_match_stock_calls_and_allowed_values(gene_type, overrides):
    counts, values = {}, {}
    for name, cls in (("stock", pygad.GA), ("fast", AcceleratedGA)):
        kwargs, calls = constraint_job(gene_type=gene_type, sample_size=2000, **overrides)
        fitness_calls = Counter()
        if "fitness_batch_size" in overrides:
            fitness_calls.function = lambda ga, rows, idx: -np.sum(rows**2, axis=1)
        kwargs["fitness_func"] = fitness_calls
        ga = cls(**kwargs)
        ga.run()
        counts[name] = (calls["n"], fitness_calls.calls)
        values[name] = ga.population
        assert (ga.population > 0).all()
    assert counts["fast"][0] == counts["stock"][0]
    if gene_type is float:
        assert counts["fast"][1] == counts["stock"][1]
    else:
        assert counts["fast"][1] <= counts["stock"][1] + 20


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


# --------------------------------------------------------------------------- lean run() loop

STATE = (
    "population",
    "last_generation_fitness",
    "previous_generation_fitness",
    "last_generation_parents",
    "last_generation_parents_indices",
    "last_generation_offspring_crossover",
    "last_generation_offspring_mutation",
    "last_generation_elitism",
    "last_generation_elitism_indices",
    "best_solutions",
)


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
    assert engine_label(fast) == "pygad:multi-objective"


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


# --------------------------------------------------------------------------- parallel fitness


def generation_aware(ga, solution, index):
    return -float(np.sum(solution**2)) + 0.01 * ga.generations_completed


PARALLEL_FORMS = [2, 3, ["thread", 2], ["thread", 4], ["process", 2], ["process", 4]]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"fitness_batch_size": 3},
        {"keep_elitism": 0, "keep_parents": 2},
        {"gene_type": int, "init_range_low": -3, "init_range_high": 3},  # many cache hits
        {"on_parents": lambda ga, parents: None},  # stock's loop with the accelerated operators
    ],
)
@pytest.mark.parametrize("parallel", PARALLEL_FORMS)
def test_parallel_fitness_gives_the_serial_run(parallel, overrides, tmp_path):
    """Every form of ``parallel_processing`` gives exactly the serial run: the same fitness calls
    (rows, batches, count), the same final state; the fitness sees the current generation in ``ga``;
    the parallel run evaluates in its workers (not only in the run's own thread); the worker
    processes end with the run."""
    runs, before = [], live_children()
    where = tmp_path / "evaluated"

    def record() -> None:  # one line per call, appended in one write (forked workers share the file)
        descriptor = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(descriptor, f"{os.getpid()} {threading.get_ident()}\n".encode())
        finally:
            os.close(descriptor)

    evaluated_in = []
    for setting in (None, parallel):

        def fitness(ga, solution, index):
            record()
            return generation_aware(ga, solution, index)

        if overrides.get("fitness_batch_size"):

            def fitness(ga, rows, indices):
                record()
                return -np.sum(np.asarray(rows, dtype=float) ** 2, axis=1) + 0.01 * ga.generations_completed

        ga = AcceleratedGA(
            **base(
                **{
                    "num_generations": 12,
                    "sol_per_pop": 30,
                    "fitness_func": fitness,
                    "parallel_processing": setting,
                    **overrides,
                }
            )
        )
        ga.run()
        runs.append(ga)
        evaluated_in.append(set(where.read_text().splitlines()))
        where.unlink()
    own = {f"{os.getpid()} {threading.get_ident()}"}
    assert evaluated_in[0] == own
    assert evaluated_in[1] - own, "no evaluation ran in a worker"
    serial, parallel_run = runs
    for name in STATE:
        np.testing.assert_array_equal(getattr(parallel_run, name), getattr(serial, name), err_msg=name)
    assert parallel_run.best_solutions_fitness == serial.best_solutions_fitness
    assert parallel_run.num_fitness_evaluations == serial.num_fitness_evaluations
    assert engine_label(parallel_run) == engine_label(serial)
    assert live_children() <= before


def two_objectives(ga, solution, index):
    return [-float(np.sum(solution**2)), -float(np.sum((solution - 1) ** 2))]


def finite_genes(ga, solution, index):
    finite = np.isfinite(solution)
    return float(finite.sum()) - float(np.sum(np.where(finite, solution, 0.0) ** 2))


@pytest.mark.parametrize("case", ["multi-objective", "infinite genes"])
@pytest.mark.parametrize("parallel", [2, ["thread", 2], ["process", 2]])
def test_parallel_fitness_when_stock_evaluates_in_the_same_run(parallel, case):
    """Stock's evaluation inside ``AcceleratedGA`` — after a multi-objective first evaluation hands
    the run to stock's loop, or for a population holding inf (no cache match) — uses stock's own
    executor (its ``_fitness_pool()``, which the engine's pool must not shadow) and still gives the
    serial run; the engine's workers and stock's executor are never open at once, and both end with
    the run."""
    overrides: dict[str, Any] = {"fitness_func": two_objectives}
    if case == "infinite genes":
        population = np.random.default_rng(1).uniform(-4, 4, (20, 8))
        population[:3, 2] = np.inf
        overrides = {"fitness_func": finite_genes, "initial_population": population}
    both_open: list[bool] = []

    def on_generation(ga):
        both_open.append(ga._warm_pool is not None and ga._fitness_executor is not None)

    runs, before = [], live_children()
    for setting in (None, parallel):
        ga = AcceleratedGA(
            **base(num_generations=6, parallel_processing=setting, on_generation=on_generation, **overrides)
        )
        ga.run()
        runs.append(ga)
    assert len(both_open) == 12 and not any(both_open)
    serial, parallel_run = runs
    np.testing.assert_array_equal(parallel_run.population, serial.population)
    np.testing.assert_array_equal(parallel_run.best_solutions_fitness, serial.best_solutions_fitness)
    assert parallel_run.num_fitness_evaluations == serial.num_fitness_evaluations
    assert engine_label(parallel_run) == engine_label(serial)
    assert parallel_run._warm_pool is None and parallel_run._fitness_executor is None
    assert live_children() <= before


@pytest.mark.parametrize("parallel", [["thread", 3], ["process", 3]])
def test_parallel_fitness_raises_the_first_error_in_population_order(parallel):
    """An exception in any worker is raised for the first failing solution in population order, as a
    serial run would, after counting the evaluations before it; the pool ends with the run."""

    def fitness(ga, solution, index):
        if ga.generations_completed == 1 and index in (14, 25):
            raise ValueError(f"solution {index}")
        return 1.0

    before = live_children()
    serial = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, num_generations=3))
    with pytest.raises(ValueError, match="solution 14"):
        serial.run()
    ga = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, num_generations=3, parallel_processing=parallel))
    with pytest.raises(ValueError, match="solution 14") as raised:
        ga.run()
    assert ga.num_fitness_evaluations == serial.num_fitness_evaluations
    if parallel[0] == "process":  # the frames of the worker's call travel with the exception
        assert raised.value.remote_frames[-1].name == "fitness"
    assert live_children() <= before


def test_a_worker_process_that_dies_fails_the_run():
    from allele_worker.engine.parallel import WorkerLost

    def fitness(ga, solution, index):
        if index == 29:
            os._exit(3)  # only a worker evaluates the last solution
        return 1.0

    before = live_children()
    ga = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, parallel_processing=["process", 2]))
    with pytest.raises(WorkerLost, match="exit status 3"):
        ga.run()
    assert live_children() <= before


def test_parallel_workers_see_attributes_callbacks_set():
    """A process worker's ``ga`` is refreshed every generation with the GA's data, attributes set by
    a callback included (stock's process mode sends a snapshot too); functions stay its own."""

    def on_generation(ga):
        ga.penalty = ga.generations_completed * 2

    def fitness(ga, solution, index):
        return float(getattr(ga, "penalty", -1)) - float(np.sum(solution**2))

    runs = []
    for setting in (None, ["process", 2]):
        ga = AcceleratedGA(
            **base(
                fitness_func=fitness,
                on_generation=on_generation,
                sol_per_pop=10,
                num_generations=4,
                parallel_processing=setting,
            )
        )
        ga.run()
        runs.append(ga.best_solutions_fitness)
    assert runs[1] == runs[0] and max(runs[0]) > 0  # the penalty reached the workers


def test_parallel_forms_are_covered_by_the_accelerated_engine():
    for form in PARALLEL_FORMS:
        assert coverage(base(parallel_processing=form)) == (True, "covered")
    assert isinstance(build_ga(base(parallel_processing=["process", 2])), AcceleratedGA)
