"""engine/constraints.py: gene constraints during mutation and at initialisation against stock PyGAD
(calls, answers checked, warnings, allowed values), the subset checks against Python's sets, and the
constraint candidates' law."""

from __future__ import annotations

import warnings

import numpy as np
import pygad
import pytest

from allele_worker.engine import (
    constraints,
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import Counter, base, pair


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
