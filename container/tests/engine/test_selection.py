"""engine/selection.py: the vectorised parent selections against stock PyGAD (``sss`` exactly, the
random ones by their law), and stock's errors kept."""

from __future__ import annotations

import numpy as np
import pygad
import pytest

from .conftest import pair


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
