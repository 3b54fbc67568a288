"""Random mutation (PyGAD's ``utils/mutation.py`` seam): the vectorised kernels and the ``Mutation``
mixin behind stock's ``random_mutation``, handing the call to stock PyGAD when the genes or the gene
space are not covered.  Genes under a ``gene_constraint`` take their values from ``Constraints``."""

from __future__ import annotations

import math
from typing import Literal, TypeAlias

import numpy as np

from .base import SCALAR_TYPES, EngineBase, Genes, Indices, Mask, row_range, row_starts

__all__ = ["Mutation", "MutationSpace", "choose_gene_positions", "choose_genes", "finite_offsets", "pick_other"]

Number: TypeAlias = float | np.integer | np.floating  # a bound of PyGAD's: a Python or numpy number
# The gene space as the fast mutation sees it: none, one sorted list of numbers, or one {low, high}.
MutationSpace: TypeAlias = (
    tuple[Literal["none"], None] | tuple[Literal["list"], Genes] | tuple[Literal["dict"], tuple[Number, Number]]
)


def choose_genes(num_rows: int, num_genes: int, count: int, rng: np.random.Generator) -> Mask:
    """A boolean mask with exactly ``count`` distinct genes per row, each subset equally likely
    (PyGAD draws the same with ``random.sample``).  Floyd's algorithm, vectorised over rows:
    ``min(count, num_genes - count)`` steps of O(rows)."""
    count = int(count)
    if count >= num_genes:
        return np.ones((num_rows, num_genes), dtype=bool)
    invert = count > num_genes // 2
    picks = num_genes - count if invert else count
    mask = np.zeros((num_rows, num_genes), dtype=bool)
    rows = np.arange(num_rows)
    for j in range(num_genes - picks, num_genes):
        chosen = rng.integers(0, j + 1, size=num_rows)
        taken = mask[rows, chosen]
        if taken.any():
            chosen[taken] = j
        mask[rows, chosen] = True
    return ~mask if invert else mask


def choose_gene_positions(
    num_rows: int, num_genes: int, count: int, rng: np.random.Generator
) -> tuple[Indices | None, Indices]:
    """``np.nonzero(choose_genes(...))`` (same draws): rows and genes to mutate, row-major.  One
    gene per row (the default 10 % of 10 genes) skips the mask; the rows are then None (every row
    once, in order)."""
    count = int(count)
    if count == 1 and num_genes > 2:
        # Floyd's single step: j = num_genes - 1, one draw in range(num_genes) per row (the same
        # Generator.integers draw as choose_genes).
        return None, rng.integers(0, num_genes, size=num_rows)
    rows, genes = np.nonzero(choose_genes(num_rows, num_genes, count, rng))
    return rows, genes


def finite_offsets(low: Number, high: Number) -> tuple[int, Number, Number]:
    """``(count, first, step)`` of the values PyGAD's integer random mutation adds
    (``_sample_finite_gene_space({'low': low, 'high': high, 'step': 1})``): ``first + i * step`` for
    ``i`` in ``range(count)``.  With the float defaults (-1.0, 1.0) that is {-1.0, 0.0}."""
    if low == high:
        return 1, low, 0
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (low, high)):
        return max(0, int(high) - int(low)), int(low), 1
    count = max(0, math.ceil((high - low) / 1))
    first = float(low)
    return count, first, (first + 1.0) - first


def pick_other(space: Genes, current: Genes, rng: np.random.Generator) -> Genes:
    """For each current value, a value of the sorted unique ``space`` other than it, uniformly
    (PyGAD's gene-space mutation with duplicates allowed); the current value itself when the
    space holds nothing else."""
    m = space.shape[0]
    position = np.searchsorted(space, current)
    inside = np.minimum(position, m - 1)
    present = space[inside] == current
    bound = np.where(present, m - 1, m)
    draw = np.floor(rng.random(current.shape[0]) * bound).astype(np.intp)
    draw = np.minimum(draw, np.maximum(bound - 1, 0))
    draw += present & (draw >= position)
    result: Genes = space[np.minimum(draw, m - 1)]
    keep = bound == 0
    if keep.any():
        result = result.copy()
        result[keep] = current[keep]
    return result


class Mutation(EngineBase):
    """Stock's ``random_mutation``, vectorised: one gene type ``int``/``float``, duplicates allowed,
    ``gene_space`` None / one list of numbers / one ``{low, high}`` dict; per-gene ``gene_constraint``
    with ``gene_space`` None."""

    _space_cache: tuple[object, MutationSpace | None] | None  # (gene_space, its MutationSpace)

    def _mutation_space(self) -> MutationSpace | None:
        """``("none", None)``, ``("list", sorted converted values)``, ``("dict", (low, high))``,
        or None when the gene space is not one the fast mutation covers."""
        space = self.gene_space
        if space is None:
            return ("none", None)
        cache = self._space_cache
        if cache is not None and cache[0] is space:
            return cache[1]
        result: MutationSpace | None = None
        if not self.gene_space_nested:
            if type(space) is dict and "step" not in space:
                result = ("dict", (space["low"], space["high"]))
            elif (
                type(space) in (list, tuple, np.ndarray) and len(space) and all(type(v) in SCALAR_TYPES for v in space)
            ):
                values = np.unique(self.change_gene_dtype_and_round(0, list(space)))
                if values.dtype.kind in "fiu" and not (values.dtype.kind == "f" and np.isnan(values).any()):
                    result = ("list", values)
        self._space_cache = (space, result)
        return result

    def _mutation_covered(self, offspring: object) -> MutationSpace | None:
        """The space for ``_random_mutation`` when it covers this state, else None."""
        if not (
            self._base_ok()
            and isinstance(offspring, np.ndarray)
            and offspring.ndim == 2
            and offspring.dtype.kind in "fiu"
        ):
            return None
        if self.mutation_probability is None and not isinstance(self.mutation_num_genes, (int, np.integer)):
            return None
        space = self._mutation_space()
        if space is None:
            return None
        constraints = self.gene_constraint
        if constraints and any(c is not None for c in constraints) and space[0] != "none":
            return None
        return space

    def random_mutation(self, offspring: Genes) -> Genes:
        space = self._mutation_covered(offspring)
        if space is None:
            if self._exact_mutation_covered(offspring):
                self._note("mutation", True)
                return self._exact_random_mutation(offspring)
            self._note("mutation", False)
            stock: Genes = super().random_mutation(offspring)
            return stock
        self._note("mutation", True)
        return self._random_mutation(offspring, space)

    def _exact_mutation_covered(self, offspring: object) -> bool:
        """Whether ``_exact_random_mutation`` gives stock's result here: stock's ``mutation_randomly``
        (no ``mutation_probability``, no ``gene_space``) on float64 genes of one float type without
        precision, duplicates allowed, no gene constraint."""
        constraints = self.gene_constraint
        return bool(
            self.mutation_probability is None
            and self.gene_space is None
            and self.allow_duplicate_genes
            and not (constraints and any(c is not None for c in constraints))
            and self.gene_type_single
            and self.gene_type[1] is None
            and self.gene_type[0] in (float, np.float64)
            and isinstance(self.mutation_num_genes, (int, np.integer))
            and not isinstance(self.mutation_num_genes, bool)
            and type(offspring) is np.ndarray
            and offspring.ndim == 2
            and offspring.dtype == np.float64
            and offspring.shape[1] == self.num_genes
        )

    def _exact_random_mutation(self, offspring: Genes) -> Genes:
        """Stock's ``mutation_randomly`` for float genes, with stock's draws: per offspring, in order,
        ``random.sample`` of the genes (PyGAD's ``python_random_generator``), then one
        ``numpy_random_generator.uniform(low, high)`` per chosen gene in that order — drawn here in one
        call (the legacy ``RandomState`` gives the same values one by one or as an array: each is
        ``low + (high - low) * next_double``) — added to the gene (or replacing it with
        ``mutation_by_replacement``) in float64, as stock's conversion does."""
        rows_n = offspring.shape[0]
        count = int(self.mutation_num_genes)
        if rows_n == 0:
            return offspring
        sample = self.python_random_generator.sample
        genes = range(self.num_genes)
        cols = np.array([sample(genes, count) for _ in range(rows_n)], dtype=np.intp).reshape(-1)
        rows = np.repeat(np.arange(rows_n), count)
        low, high = self.random_mutation_min_val, self.random_mutation_max_val
        draw = self.numpy_random_generator.uniform
        if type(low) in SCALAR_TYPES:
            low, high = sorted([low, high])
            values = draw(low=low, high=high, size=cols.shape[0])
        else:
            bounds = np.array([sorted([lo, hi]) for lo, hi in zip(low, high)], dtype=np.float64)
            values = draw(low=bounds[cols, 0], high=bounds[cols, 1])
        if self.mutation_by_replacement:
            offspring[rows, cols] = values
        else:
            offspring[rows, cols] += values
        return offspring

    def _random_mutation(self, offspring: Genes, space: MutationSpace) -> Genes:
        """The accelerated random mutation, in place (``space`` from ``_mutation_covered``)."""
        rng = self._generator()
        rows_n, genes_n = offspring.shape
        if rows_n == 0 or genes_n == 0:
            return offspring
        rows: Indices | None
        if self.mutation_probability is None:
            rows, cols = choose_gene_positions(rows_n, genes_n, self.mutation_num_genes, rng)
        else:
            rows, cols = np.nonzero(rng.random((rows_n, genes_n)) < self.mutation_probability)
        constraints = self.gene_constraint
        constrained = None
        if constraints and any(c is not None for c in constraints):
            constrained = np.array([c is not None for c in constraints], dtype=bool)
        if rows is None:  # one gene per row
            if constrained is None and offspring.flags.c_contiguous:
                # Read and write the cells by flat position: the same values as offspring[rows,
                # cols], at a third of its cost on arrays this small.
                cells = row_starts(rows_n, genes_n) + cols
                flat = offspring.reshape(-1)
                flat.put(cells, self._mutated_values(space, flat.take(cells), cols, rng))
                return offspring
            rows = row_range(rows_n)
        elif rows.shape[0] == 0:
            return offspring
        current = offspring[rows, cols]
        values = self._mutated_values(space, current, cols, rng)
        if constrained is None:
            offspring[rows, cols] = values
            return offspring
        # Rows with a constrained gene go gene by gene, in order (Constraints._mutate_in_order).
        hit = constrained[cols]
        slow_rows = np.zeros(rows_n, dtype=bool)
        slow_rows[rows[hit]] = True
        fast = ~slow_rows[rows]
        offspring[rows[fast], cols[fast]] = values[fast]
        slow = ~fast
        self._mutate_in_order(offspring, rows[slow], cols[slow], values[slow], constrained)
        return offspring

    def _mutated_values(self, space: MutationSpace, current: Genes, cols: Indices, rng: np.random.Generator) -> Genes:
        floats = self._single_type() is np.float64  # else np.int64
        k: int = current.shape[0]
        values: Genes
        if space[0] == "none" and floats:  # PyGAD's random mutation of float genes
            low = self.random_mutation_min_val  # a number, or one per gene
            high = self.random_mutation_max_val
            if type(low) not in SCALAR_TYPES:  # one range per gene
                bounds = np.array([sorted([lo, hi]) for lo, hi in zip(low, high)], dtype=np.float64)
                low, high = bounds[cols, 0], bounds[cols, 1]
            elif high < low:  # sorted([low, high])
                low, high = high, low
            values = rng.uniform(low, high, size=k)  # = low + (high - low) * rng.random(k)
            if not self.mutation_by_replacement:
                values += current
            return values
        if space[0] == "list":
            return pick_other(space[1], current, rng)
        if space[0] == "dict":
            low, high = space[1]
            if floats:
                if low == high:
                    return np.full(k, low, dtype=np.float64)
                values = rng.uniform(low, high, size=k)
                values[values >= high] = low  # float rounding; PyGAD falls back to low too
                return values
            first, last = self._continuous_gene_space_integer_bounds({"low": low, "high": high})
            if last < first:
                return current.copy()
            values = rng.integers(first, last + 1, size=k, dtype=np.int64)
            return values
        # Integer genes without a gene space: offsets first + i*step, i uniform in range(count),
        # per gene range.
        low, high = self.random_mutation_min_val, self.random_mutation_max_val
        if type(low) in SCALAR_TYPES:
            count, first, step = finite_offsets(*sorted([low, high]))
            offsets = first + rng.integers(0, max(count, 1), size=k) * step
        else:
            table = [finite_offsets(*sorted([lo, hi])) for lo, hi in zip(low, high)]
            counts = np.array([max(t[0], 1) for t in table])
            firsts = np.array([t[1] for t in table], dtype=object)
            steps = np.array([t[2] for t in table], dtype=object)
            index = np.floor(rng.random(k) * counts[cols]).astype(np.int64)
            offsets = (
                (firsts[cols] + index * steps[cols]).astype(np.float64)
                if any(isinstance(f, float) for f in firsts)
                else (firsts[cols] + index * steps[cols]).astype(np.int64)
            )
        return np.asarray(offsets if self.mutation_by_replacement else current + offsets).astype(np.int64)
