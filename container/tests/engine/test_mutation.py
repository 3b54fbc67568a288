"""engine/mutation.py: random mutation against stock PyGAD (float and int genes, gene spaces), the
choice of the genes to mutate and the pick of another value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from allele_worker.engine import (
    constraints,
    mutation,
)

from .conftest import pair


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
