"""Crossover (PyGAD's ``utils/crossover.py`` seam): the vectorised kernel and the ``Crossover``
mixin that puts it behind stock's method names, handing each call to stock PyGAD when the genes or
the parents are not covered."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .base import EngineBase, Genes, Indices, Mask, frozen, row_range

__all__ = ["CROSSOVERS", "Crossover", "crossover_offspring", "mates", "uniform_index"]

CROSSOVERS = ("single_point", "two_points", "uniform", "scattered")
# A crossover method of stock PyGAD's: (parents, offspring size) → offspring.
Crossing = Callable[[Genes, tuple[int, int]], Genes]


def uniform_index(n: int, size: int, rng: np.random.Generator) -> Indices:
    """``size`` uniform integers in ``range(n)`` as ``floor(U * n)`` with ``U = rng.random()``
    (53-bit uniforms: each value's probability is ``1/n`` within ``n / 2**53``); several times
    cheaper than ``Generator.integers`` for the small arrays of a small population.  ``U * n`` is
    below ``n`` for every ``n <= 2**53``: ``U <= 1 - 2**-53``, and ``n - n * 2**-53`` is at least half
    an ulp below ``n``, so it rounds down (exactly representable when ``n`` is a power of two)."""
    values = rng.random(size)
    values *= n
    return values.astype(np.intp)


_POINT_TABLE_MAX = 128  # genes: the single-point masks are cached as a table up to 128 x 128


def _point_table(num_genes: int) -> Mask:
    genes = np.arange(num_genes)
    return genes[None, :] >= genes[:, None]


def _fixed_mates(num_offspring: int, num_parents: int) -> tuple[Indices, Indices]:
    k = np.arange(num_offspring)
    return k % num_parents, (k + 1) % num_parents


def mates(
    num_offspring: int, num_parents: int, probability: float | None, rng: np.random.Generator
) -> tuple[Indices, Indices]:
    """The two parents of each offspring.  Without ``crossover_probability``: parents ``k % P`` and
    ``(k + 1) % P`` (cached).  With it (PyGAD's rule): the parents whose draw is below the
    probability qualify; none → offspring ``k`` copies parent ``k % P``; one → it mates with itself;
    more → an ordered pair of two distinct qualifying parents chosen uniformly."""
    if probability is None:
        return frozen(("mates", num_offspring, num_parents), _fixed_mates, num_offspring, num_parents)
    k = np.arange(num_offspring)
    qualifies = rng.random((num_offspring, num_parents)) < probability
    keys = np.where(qualifies, rng.random((num_offspring, num_parents)), np.inf)
    first = np.argmin(keys, axis=1)
    keys[k, first] = np.inf
    second = np.argmin(keys, axis=1)
    count = qualifies.sum(axis=1)
    first = np.where(count == 0, k % num_parents, first)
    second = np.where(count >= 2, second, first)
    return first, second


def crossover_offspring(
    kind: str, parents: Genes, num_offspring: int, probability: float | None, rng: np.random.Generator
) -> Genes:
    """Offspring of ``single_point``, ``two_points``, ``uniform`` or ``scattered`` crossover: a
    fresh C-contiguous array (rows gathered with ``ndarray.take``, which is fancy indexing's
    result at a fraction of its cost on small arrays)."""
    num_parents, num_genes = parents.shape
    first, second = mates(num_offspring, num_parents, probability, rng)
    if kind == "single_point":
        point = uniform_index(num_genes, num_offspring, rng)
        if num_genes <= _POINT_TABLE_MAX:  # row p of the table is genes >= p: one gather
            from_second = frozen(("points", num_genes), _point_table, num_genes).take(point, axis=0)
        else:
            from_second = row_range(num_genes) >= point[:, None]
    elif kind == "two_points":
        point_a = rng.integers(0, num_genes + 1, size=num_offspring)
        point_b = rng.integers(0, num_genes, size=num_offspring)
        point_b[point_b >= point_a] += 1
        low, high = np.minimum(point_a, point_b), np.maximum(point_a, point_b)
        genes = row_range(num_genes)[None, :]
        from_second = (genes >= low[:, None]) & (genes < high[:, None])
    elif kind in ("uniform", "scattered"):
        from_second = rng.random((num_offspring, num_genes)) < 0.5
    else:
        raise ValueError(f"not a vectorised crossover: {kind}")
    return np.where(from_second, parents.take(second, axis=0), parents.take(first, axis=0))


class Crossover(EngineBase):
    """Stock's crossover methods, vectorised for one gene type with duplicates allowed."""

    def _crossover(self, kind: str, parents: Genes, offspring_size: tuple[int, int], stock: Crossing) -> Genes:
        if not (
            self._base_ok()
            and isinstance(parents, np.ndarray)
            and parents.ndim == 2
            and parents.dtype.kind in "fiu"
            and parents.shape[0] > 0
        ):
            self._note("crossover", False)
            return stock(parents, offspring_size)
        self._note("crossover", True)
        offspring: Genes = self.initialize_parents_array(offspring_size)
        offspring[:, :] = crossover_offspring(
            kind, parents, int(offspring_size[0]), self.crossover_probability, self._generator()
        )
        return offspring

    def single_point_crossover(self, parents: Genes, offspring_size: tuple[int, int]) -> Genes:
        return self._crossover("single_point", parents, offspring_size, super().single_point_crossover)

    def two_points_crossover(self, parents: Genes, offspring_size: tuple[int, int]) -> Genes:
        return self._crossover("two_points", parents, offspring_size, super().two_points_crossover)

    def uniform_crossover(self, parents: Genes, offspring_size: tuple[int, int]) -> Genes:
        return self._crossover("uniform", parents, offspring_size, super().uniform_crossover)

    def scattered_crossover(self, parents: Genes, offspring_size: tuple[int, int]) -> Genes:
        return self._crossover("scattered", parents, offspring_size, super().scattered_crossover)
