"""Gene constraints during random mutation (PyGAD's ``helper/misc.py`` seam,
``filter_gene_values_by_constraint``): the candidates a constraint is offered, the check of its answer
(the vectorised subset checks, also used for the initial population's constraint pass), and the
``Constraints`` mixin that ``Mutation`` asks for a constrained gene's new value."""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Iterable, Iterator
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

from .base import EngineBase, Floats, Genes, Indices, Mask
from .mutation import finite_offsets

__all__ = ["Answer", "Constraints", "is_subset", "is_subset_of_sorted", "rotated_uniform", "sorted_uniform"]

# What a gene constraint returned, once it is known to be a list or an array (the only answers PyGAD
# accepts): its items are whatever the user's code put there.
Answer: TypeAlias = "list[object] | Genes"


def sorted_uniform(rows: int, size: int, rng: np.random.Generator) -> Floats:
    """``rows`` samples of ``size`` i.i.d. uniform draws on ``[0, 1)``, each row sorted, in one draw
    for all rows: below 400 values per row ``np.sort(rng.random((rows, size)), axis=1)`` (numpy's sort
    of a few hundred values beats the alternative), from 400 on in O(rows × size) without a sort, as
    the normalised partial sums of exponentials (the order statistics of uniforms, Rényi): the same
    joint law."""
    if size < 400:
        values = rng.random((rows, size))
        values.sort(axis=1)
        return values
    sums = np.cumsum(rng.standard_exponential((rows, size + 1)), axis=1)  # (in place: 5x slower)
    spacings: Floats = sums[:, :size] / sums[:, size:]
    return spacings


def rotated_uniform(scaled: Floats, shift: float, low: float, width: float) -> Floats:
    """The sorted values ``low + width * frac(base + shift)`` for ``scaled = width * base``, ``base``
    sorted in ``[0, 1)``, and a ``shift`` in ``[0, 1)``: the base's points turned round the unit
    circle by ``shift``, in two slice additions instead of a draw and a sort.  With a uniform
    ``shift`` every value is uniform on ``[low, low + width)``; the spacings are the base's."""
    n = scaled.shape[0]
    k = int(scaled.searchsorted((1.0 - shift) * width))  # scaled[k:] wraps round to the front
    out = np.empty(n)
    np.add(scaled[k:], low + (shift - 1.0) * width, out=out[: n - k])
    np.add(scaled[:k], low + shift * width, out=out[n - k :])
    if 0 < k < n and not out[n - k - 1] < out[n - k]:  # rounding at the seam: vanishingly rare
        out.sort()
    return out


def _floats(selected: list[object] | Genes) -> Floats | None:
    """A list of values returned by user code as float64, or None when it is not all numbers."""
    try:
        return np.fromiter(selected, dtype=np.float64, count=len(selected))
    except (TypeError, ValueError, OverflowError):
        return None


def _chosen(selected: Answer) -> Genes | None:
    """What a constraint returned as a 1-D numeric array (an array as it is, a list's items as
    float64), or None when it is neither."""
    if isinstance(selected, np.ndarray):
        return selected if selected.ndim == 1 and selected.dtype.kind in "fiu" else None
    return _floats(selected)


def is_subset_of_sorted(selected: Answer, pool: Floats) -> bool | None:
    """``is_subset(selected, pool)`` for a ``pool`` the caller knows is strictly increasing float64
    without NaN (the engine's own constraint candidates): the pool checks are skipped and, for the
    usual answer of an order-keeping filter (strictly increasing values), one linear merge."""
    chosen: Genes | None
    if type(selected) is list:
        try:
            chosen = np.fromiter(selected, dtype=np.float64, count=len(selected))
        except (TypeError, ValueError, OverflowError):
            return None
    elif isinstance(selected, np.ndarray) and selected.dtype.kind != "f":
        return is_subset(selected, pool)
    else:
        chosen = _chosen(selected)
        if chosen is None:
            return None
    m = chosen.shape[0]
    if m == 0:
        return True
    # An order-keeping filter with a threshold (``v > 0``, ``low <= v < high``) returns a run of
    # consecutive candidates: one comparison settles it — of the bytes first (equal bit patterns are
    # equal numbers: the pool holds no NaN), then of the values (-0.0 equals 0.0).
    run = pool[pool.searchsorted(chosen[0]) :]
    if run.shape[0] >= m:
        run = run[:m]
        if run.tobytes() == chosen.tobytes() or (run == chosen).all():
            return True
    if m == 1:
        if chosen[0] != chosen[0]:  # NaN never matches
            return False
    elif not (chosen[1:] > chosen[:-1]).all():  # repeats, NaN or another order: general check
        return is_subset(chosen, pool)
    if pool.shape[0] == 0:
        return False
    merged = np.concatenate((pool, chosen))
    merged.sort(kind="stable")  # two ascending runs: one merge
    return int(np.count_nonzero(merged[1:] == merged[:-1])) == int(m)


_HASH_MIN_POOL = 256
_HASH_TABLES = threading.local()
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _hash_slots(values: Floats, shift: np.uint64) -> NDArray[np.int64]:
    """Multiplicative hash of float64 bit patterns (``-0.0`` folded onto ``0.0``) → int64 slots."""
    bits = np.ascontiguousarray(values + 0.0).view(np.uint64)  # a fresh array: changed in place
    bits *= _HASH_MULTIPLIER
    bits >>= shift
    return bits.view(np.int64)


def _is_interval_filter(chosen: Genes, pool: Genes) -> bool:
    """Whether ``chosen`` is exactly the pool's values between its smallest and largest, in pool
    order — what a threshold filter (``v > 0``, ``lo <= v < hi``) returns.  True proves every chosen
    value is in the pool; False proves nothing (the caller checks another way)."""
    mask = pool >= np.minimum.reduce(chosen)  # NaN anywhere: no match, False
    mask &= pool <= np.maximum.reduce(chosen)
    kept = pool[mask]
    return kept.shape[0] == chosen.shape[0] and bool((kept == chosen).all())


def _all_in_hashed(chosen: Floats, pool: Floats) -> bool:
    """Whether every float64 of ``chosen`` equals one of ``pool`` (unsorted), in O(n) with a
    vectorised hash table instead of sorting the pool: last write wins on a collision, and the
    pool values a collision left out are written again in the next round, until every chosen
    value has matched or every pool value left has been written.  A table entry is only a
    candidate index: a chosen value counts as present when the pool value at that index equals
    it, so the table (kept per thread, never cleared) may hold indices of earlier calls.  NaN
    never matches."""
    n = pool.shape[0]
    bits = max(8, int(n * 2 - 1).bit_length())
    tables: dict[int, NDArray[np.int64]] | None = getattr(_HASH_TABLES, "tables", None)
    if tables is None:
        tables = _HASH_TABLES.tables = {}
    table = tables.get(bits)
    if table is None:
        table = tables[bits] = np.zeros(1 << bits, dtype=np.int64)
    shift = np.uint64(64 - bits)
    pool_slots = _hash_slots(pool, shift)
    chosen_slots = _hash_slots(chosen, shift)
    members = np.arange(n)
    pending = np.arange(chosen.shape[0])
    last = n - 1
    while True:
        slots = pool_slots[members]
        table[slots] = members
        found = table[chosen_slots[pending]]
        np.minimum(found, last, out=found)  # an index from an earlier call: still a valid index
        pending = pending[pool[found] != chosen[pending]]
        if pending.shape[0] == 0:
            return True
        kept = table[slots] == members
        if kept.all():
            return False  # every pool value is in the table: the pending ones are not in the pool
        members = members[~kept]


def is_subset(selected: Answer, values: object) -> bool | None:
    """Whether every item of ``selected`` equals an item of ``values`` — what PyGAD checks with
    ``set(selected).issubset(values)`` — for numeric data; ``None`` when this fast check does not
    apply (the caller then uses PyGAD's own check).  Numbers compare by value as in a set
    (``1 == 1.0``, ``-0.0 == 0.0``, NaN never matches)."""
    if isinstance(values, np.ndarray):
        pool = values
    else:
        try:
            pool = np.asarray(values)
        except (TypeError, ValueError):
            return None
    if pool.ndim != 1 or pool.dtype.kind not in "fiu":
        return None
    chosen = _chosen(selected)
    if chosen is None:
        return None
    if chosen.shape[0] == 0:
        return True
    if pool.shape[0] == 0:
        return False
    if pool.dtype.kind in "iu" or chosen.dtype.kind in "iu":
        # Integers: exact comparison only inside float64's exact range, else let PyGAD decide.
        limit = 2.0**53
        if (pool.dtype.kind in "iu" and pool.shape[0] and np.abs(pool).max() >= limit) or (
            chosen.dtype.kind in "iu" and np.abs(chosen).max() >= limit
        ):
            return None
        if chosen.dtype.kind == "f" and pool.dtype.kind in "iu":
            if not np.all(np.isfinite(chosen)) or np.any(chosen != np.trunc(chosen)):
                return False
    if pool.shape[0] > 1 and not (pool[1:] >= pool[:-1]).all():
        # e.g. PyGAD's unsorted initial-population candidates: a threshold filter keeps them in
        # pool order, which one pass over the pool confirms
        if _is_interval_filter(chosen, pool):
            return True
        if pool.shape[0] >= _HASH_MIN_POOL:
            return _all_in_hashed(chosen.astype(np.float64, copy=False), pool.astype(np.float64, copy=False))
        pool = np.sort(pool)
    if pool.dtype.kind == "f" and np.isnan(pool[-1]):  # NaN sorts last; NaN never matches anyway
        pool = pool[~np.isnan(pool)]
        if pool.shape[0] == 0:
            return False
    if pool.shape[0] > 1 and not np.all(pool[1:] > pool[:-1]):
        pool = np.unique(pool)
    if chosen.shape[0] > 1 and not np.all(chosen[1:] > chosen[:-1]):
        if chosen.dtype.kind == "f" and np.isnan(chosen).any():
            return False
        chosen = np.unique(chosen)  # a set ignores repeats
    elif chosen.dtype.kind == "f" and np.isnan(chosen[0]):
        return False
    # Both strictly increasing: one linear merge (timsort finds the two runs); each chosen value
    # that is in the pool becomes exactly one adjacent equal pair.
    merged = np.concatenate((pool, chosen))
    merged.sort(kind="stable")
    return int(np.count_nonzero(merged[1:] == merged[:-1])) == int(chosen.shape[0])


class Constraints(EngineBase):
    """Constrained genes during random mutation (``gene_space`` None) and at initialisation, and
    the fast output check."""

    def _mutate_in_order(
        self, offspring: Genes, rows: Indices, cols: Indices, values: Genes, constrained: Mask
    ) -> None:
        """Write the mutation of the rows holding a constrained gene, gene by gene in ascending
        order (``rows``/``cols`` row-major), so each constraint sees the solution as already
        changed, as in PyGAD: an unconstrained gene takes its drawn value, a constrained one a
        value its constraint accepts (PyGAD's ``filter_gene_values_by_constraint``: the constraint
        gets copies of the solution and of the sorted unique candidates, its answer must be a
        subset of them, a warning when it accepts nothing and the gene keeps its value).

        The draws of the whole generation come first, in one step each (``_float_candidates``,
        the picks); int genes draw their candidates call by call (``_int_candidates``)."""
        hit = constrained[cols]
        where = np.flatnonzero(hit)
        genes = cols[where]
        current = offspring[rows[where], genes]  # a constrained gene is changed by its own call only
        picks = self._generator().random(where.shape[0]).tolist()
        candidates: Iterator[Genes]
        if self._single_type() is np.float64:
            candidates = iter(self._float_candidates(genes, current))
        else:
            candidates = map(self._int_candidates, genes.tolist(), current.tolist())
        gene_type = self.gene_type[0]
        constraint = self.gene_constraint
        isfinite = math.isfinite
        call = 0
        for row, gene, value, constrained_gene in zip(rows.tolist(), cols.tolist(), values.tolist(), hit.tolist()):
            if not constrained_gene:
                offspring[row, gene] = value
                continue
            solution = offspring[row]
            pool = next(candidates)
            accepted = constraint[gene](solution.copy(), pool.copy())
            if pool.dtype.kind == "f" and isfinite(pool[-1]) and isfinite(pool[0]):
                # sorted, unique, no NaN: the cheaper check
                answer = (type(accepted) is list or type(accepted) is np.ndarray) and is_subset_of_sorted(
                    accepted, pool
                )
                valid = answer
            else:
                valid = None
            if valid is None:
                valid = self.validate_gene_constraint_callable_output(accepted, pool)
            if not valid:
                raise Exception(
                    "The output from the gene_constraint callable/function must be a list "
                    "or NumPy array that is a subset of the passed values (second argument)."
                )
            n = len(accepted)
            if n:  # int(U * n) < n for U < 1 (see crossover.uniform_index)
                offspring[row, gene] = gene_type(accepted[int(picks[call] * n)])
            elif not self.suppress_warnings:
                warnings.warn(
                    f"Failed to find a value that satisfies its gene constraint for the "
                    f"gene at index {gene} with value {solution[gene]} at generation "
                    f"{getattr(self, 'generations_completed', 0)}.",
                    stacklevel=2,
                )
            call += 1

    def _float_candidates(self, genes: Indices, current: Genes) -> Iterable[Floats]:
        """The candidates of each constrained call of one generation (float genes), in call order:
        what PyGAD passes to a gene constraint during random mutation without a gene space —
        ``sample_size`` uniform values of the gene's mutation range (added to the gene unless by
        replacement), sorted and unique.  The generation's draws happen in one step, before the
        first call.

        Below 1,250 candidates every call gets its own sample, i.i.d. uniforms as in stock, drawn
        for all calls at once as order statistics (normalised exponential spacings, one
        ``(calls, sample_size + 1)`` draw, no sort).  From 1,250 on, one sorted sample serves
        ``_base_uses(size)`` calls, each turned round the range by its own uniform shift
        (``rotated_uniform``): every candidate is still uniform, the calls sharing a sample see the
        same spacings (docs/engine.md)."""
        rng = self._generator()
        size = int(self.sample_size)
        calls = genes.shape[0]
        ranges = {gene: self.get_random_mutation_range(gene) for gene in set(genes.tolist())}
        lows = np.array([float(ranges[gene][0]) for gene in genes.tolist()])
        widths = np.array([float(ranges[gene][1]) for gene in genes.tolist()]) - lows
        starts = lows if self.mutation_by_replacement else lows + current
        uses = _base_uses(size)
        samples = -(-calls // uses)
        base = sorted_uniform(samples, size, rng)
        gaps = np.diff(base, axis=1).min(axis=1, initial=1.0)
        if uses > 1:
            np.minimum(gaps, base[:, 0] + 1.0 - base[:, -1], out=gaps)  # round the circle
            shifts = rng.random((calls,)).tolist()
        else:
            base *= widths[:, None]
            base += starts[:, None]
        gaps = gaps[np.arange(calls) // uses] * widths
        # Spacings wider than the rounding of these values: no two candidates are equal.
        distinct = gaps > 2.0 * (np.spacing(np.maximum(np.abs(starts), np.abs(starts + widths))) + np.spacing(widths))
        if uses == 1 and distinct.all():
            return base  # its rows, one per call
        return self._candidate_rows(base, uses, starts, widths, distinct.tolist(), shifts if uses > 1 else [])

    @staticmethod
    def _candidate_rows(
        base: Floats, uses: int, starts: Floats, widths: Floats, distinct: list[bool], shifts: list[float]
    ) -> Iterator[Floats]:
        """``_float_candidates`` call by call: turned samples (``uses`` > 1), merged values dropped
        where rounding made two candidates equal, a single one for an empty range."""
        calls = starts.shape[0]
        scaled = (-1, -1.0, base[0])
        for call in range(calls):
            width = float(widths[call])
            if width == 0.0:
                values = starts[call : call + 1].copy()
            elif uses == 1:
                values = base[call]
            else:
                sample = call // uses
                if scaled[0] != sample or scaled[1] != width:
                    scaled = (sample, width, base[sample] * width)
                values = rotated_uniform(scaled[2], shifts[call], float(starts[call]), width)
            if not distinct[call] and values.shape[0] > 1:
                same = values[1:] == values[:-1]
                if same.any():
                    values = values[np.concatenate(([True], ~same))]
            yield values

    def _int_candidates(self, gene: int, value: float) -> NDArray[np.int64]:
        """What PyGAD passes to the constraint of an int gene during random mutation without a gene
        space: the offsets of the gene's mutation range (``sample_size`` of them, distinct, when
        there are more), added to the gene unless by replacement, sorted and unique."""
        low, high = self.get_random_mutation_range(gene)
        size = int(self.sample_size)
        count, first, step = finite_offsets(low, high)
        if count <= size:
            index = np.arange(max(count, 1))
        else:
            index = self._generator().choice(count, size=size, replace=False)
        offsets = first + index * step
        values = offsets if self.mutation_by_replacement else int(value) + offsets
        return np.unique(np.asarray(values).astype(np.int64))

    def apply_initial_population_gene_constraints(self, population: Genes, warn: bool = True) -> Genes:
        """Stock's constraint pass over the initial population (the same calls in the same order,
        the same candidates and picks from PyGAD's own generators, so the same population), with
        PyGAD's ``filter_gene_values_by_constraint`` done inline and the fast output check."""
        constraints = self.gene_constraint
        if constraints is None or not (
            isinstance(population, np.ndarray) and population.ndim == 2 and population.dtype.kind in "fiu"
        ):
            stock: Genes = super().apply_initial_population_gene_constraints(population, warn=warn)
            return stock
        subset = self.validate_gene_constraint_callable_output
        for solution in population:
            for gene, constraint in enumerate(constraints):
                if constraint is None:
                    continue
                value = solution[gene]
                accepted = constraint(solution.copy(), [value])
                single = type(accepted) is list and (not accepted or (len(accepted) == 1 and accepted[0] is value))
                if not (single or subset(accepted, [value])):
                    raise Exception(
                        "The output from the gene_constraint callable/function must be "
                        "a list or NumPy array that is a subset of the passed values "
                        "(second argument)."
                    )
                if len(accepted):
                    if len(accepted) != 1:
                        raise ValueError(
                            "A gene constraint checking a single value must return an "
                            "empty list or NumPy array, or one containing only that "
                            "value."
                        )
                    continue
                candidates = self._initial_candidates(gene)
                accepted = constraint(solution.copy(), candidates.copy())
                if not subset(accepted, candidates):
                    raise Exception(
                        "The output from the gene_constraint callable/function must be "
                        "a list or NumPy array that is a subset of the passed values "
                        "(second argument)."
                    )
                if len(accepted) == 0:
                    if warn and not self.suppress_warnings:
                        warnings.warn(
                            f"No value satisfied the constraint for the gene at index "
                            f"{gene} with value {solution[gene]} while creating the "
                            f"initial population.",
                            stacklevel=2,
                        )
                else:
                    solution[gene] = self.python_random_generator.choice(accepted)
        return population

    def _initial_candidates(self, gene: int) -> Genes:
        """``get_initial_population_gene_candidates(gene, sample_size, all_integer_values=False)``:
        for a float64 gene without gene space or precision, stock's draw and conversion without
        its per-call dispatch (the same values: PyGAD's own generator, the same bounds); else
        stock's."""
        if self.gene_space is not None or self.gene_type[1] is not None or self._single_type() is not np.float64:
            stock: Genes = self.get_initial_population_gene_candidates(gene, self.sample_size, all_integer_values=False)
            return stock
        lower, upper = sorted(self.get_initial_population_range(gene))
        values = self.numpy_random_generator.uniform(lower, upper, size=self.sample_size)
        # PyGAD's _convert_initial_population_range_values for float64 without precision: the
        # values stay inside [lower, upper) as float64 sees it.
        lower = lower.item() if isinstance(lower, np.generic) else lower
        upper = upper.item() if isinstance(upper, np.generic) else upper
        first, last = float(lower), float(upper)
        if lower != upper:
            if first < lower:
                first = np.nextafter(first, np.inf)
            if last >= upper:
                last = np.nextafter(last, -np.inf)
        clipped: Genes = np.clip(values, first, last)
        return clipped

    def validate_gene_constraint_callable_output(self, selected_values: object, values: object) -> bool:
        if type(selected_values) is not list and type(selected_values) is not np.ndarray:
            return False
        answer = is_subset(selected_values, values)
        if answer is None:
            return bool(super().validate_gene_constraint_callable_output(selected_values, values))
        return answer


def _base_uses(size: int) -> int:
    """How many constraint calls share one sample of ``size`` candidates (each turned by its own
    shift): one (a fresh i.i.d. sample per call, as in stock) below 1,250, where a shared lattice of
    few points would show in the search; up to 16 for dense ones (``sample_size`` ≥ 10,000), whose
    draw costs more than the rest of the engine's work per call."""
    return max(1, min(16, size // 625))
