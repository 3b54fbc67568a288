"""Gene constraints during random mutation (PyGAD's ``helper/misc.py`` seam,
``filter_gene_values_by_constraint``): the candidates a constraint is offered, the check of its answer
(the vectorised subset checks, also used for the initial population's constraint pass), and the
``Constraints`` mixin that ``Mutation`` asks for a constrained gene's new value."""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np

from .base import EngineBase
from .mutation import finite_offsets

__all__ = ["Constraints", "is_subset", "is_subset_of_sorted", "rotated_uniform", "sorted_uniform"]


def sorted_uniform(low: float, high: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` i.i.d. uniform draws on ``[low, high)``, already sorted, in O(size): the order
    statistics of uniforms are the normalised partial sums of exponentials (Rényi).  Same joint
    law as ``np.sort(rng.uniform(low, high, size))`` without the sort."""
    sums = np.cumsum(rng.standard_exponential(size + 1))
    values = sums[:-1]
    values *= (high - low) / sums[-1]
    values += low
    return values


def rotated_uniform(scaled: np.ndarray, shift: float, low: float, width: float) -> np.ndarray:
    """The sorted values ``low + width * frac(base + shift)`` for ``scaled = width * base``, ``base``
    sorted in ``[0, 1)``, and a ``shift`` in ``[0, 1)``: the base's points turned round the unit
    circle by ``shift``, in two slice additions instead of a draw and a sort.  With a uniform
    ``shift`` every value is uniform on ``[low, low + width)``; the spacings are the base's."""
    n = scaled.shape[0]
    k = int(scaled.searchsorted((1.0 - shift) * width))  # scaled[k:] wraps round to the front
    out = np.empty(n)
    np.add(scaled[k:], low + (shift - 1.0) * width, out=out[:n - k])
    np.add(scaled[:k], low + shift * width, out=out[n - k:])
    if 0 < k < n and not out[n - k - 1] < out[n - k]:  # rounding at the seam: vanishingly rare
        out.sort()
    return out



def _floats(selected) -> np.ndarray | None:
    """A list of values returned by user code as float64, or None when it is not all numbers."""
    try:
        return np.fromiter(selected, dtype=np.float64, count=len(selected))
    except (TypeError, ValueError, OverflowError):
        return None


def _chosen(selected) -> np.ndarray | None:
    """What a constraint returned as a 1-D numeric array (an array as it is, a list's items as
    float64), or None when it is neither."""
    if isinstance(selected, np.ndarray):
        return selected if selected.ndim == 1 and selected.dtype.kind in "fiu" else None
    return _floats(selected)


def is_subset_of_sorted(selected, pool: np.ndarray) -> bool | None:
    """``is_subset(selected, pool)`` for a ``pool`` the caller knows is strictly increasing float64
    without NaN (the engine's own constraint candidates): the pool checks are skipped and, for the
    usual answer of an order-keeping filter (strictly increasing values), one linear merge."""
    if isinstance(selected, np.ndarray) and selected.dtype.kind != "f":
        return is_subset(selected, pool)
    chosen = _chosen(selected)
    if chosen is None:
        return None
    m = chosen.shape[0]
    if m == 0:
        return True
    # An order-keeping filter with a threshold (``v > 0``, ``low <= v < high``) returns a run of
    # consecutive candidates: one slice comparison settles it.
    start = int(pool.searchsorted(chosen[0]))
    if start + m <= pool.shape[0] and (pool[start:start + m] == chosen).all():
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
    return int(np.count_nonzero(merged[1:] == merged[:-1])) == m


_HASH_MIN_POOL = 256
_HASH_TABLES = threading.local()
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _hash_slots(values: np.ndarray, shift: np.uint64) -> np.ndarray:
    """Multiplicative hash of float64 bit patterns (``-0.0`` folded onto ``0.0``) → int64 slots."""
    bits = np.ascontiguousarray(values + 0.0).view(np.uint64)  # a fresh array: changed in place
    bits *= _HASH_MULTIPLIER
    bits >>= shift
    return bits.view(np.int64)


def _is_interval_filter(chosen: np.ndarray, pool: np.ndarray) -> bool:
    """Whether ``chosen`` is exactly the pool's values between its smallest and largest, in pool
    order — what a threshold filter (``v > 0``, ``lo <= v < hi``) returns.  True proves every chosen
    value is in the pool; False proves nothing (the caller checks another way)."""
    mask = pool >= chosen.min()  # NaN anywhere: no match, False
    mask &= pool <= chosen.max()
    return int(np.count_nonzero(mask)) == chosen.shape[0] and bool((pool[mask] == chosen).all())


def _all_in_hashed(chosen: np.ndarray, pool: np.ndarray) -> bool:
    """Whether every float64 of ``chosen`` equals one of ``pool`` (unsorted), in O(n) with a
    vectorised hash table instead of sorting the pool: last write wins on a collision, and the
    pool values a collision left out are written again in the next round, until every chosen
    value has matched or every pool value left has been written.  A table entry is only a
    candidate index: a chosen value counts as present when the pool value at that index equals
    it, so the table (kept per thread, never cleared) may hold indices of earlier calls.  NaN
    never matches."""
    n = pool.shape[0]
    bits = max(8, int(n * 2 - 1).bit_length())
    tables = getattr(_HASH_TABLES, "tables", None)
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


def is_subset(selected, values) -> bool | None:
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
        limit = 2.0 ** 53
        if (pool.dtype.kind in "iu" and pool.shape[0] and np.abs(pool).max() >= limit) or \
                (chosen.dtype.kind in "iu" and np.abs(chosen).max() >= limit):
            return None
        if chosen.dtype.kind == "f" and pool.dtype.kind in "iu":
            if not np.all(np.isfinite(chosen)) or np.any(chosen != np.trunc(chosen)):
                return False
    if pool.shape[0] > 1 and not np.all(pool[1:] >= pool[:-1]):
        if pool.shape[0] >= _HASH_MIN_POOL:  # e.g. PyGAD's unsorted initial-population candidates
            chosen, pool = chosen.astype(np.float64, copy=False), pool.astype(np.float64, copy=False)
            return _is_interval_filter(chosen, pool) or _all_in_hashed(chosen, pool)
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
    return int(np.count_nonzero(merged[1:] == merged[:-1])) == chosen.shape[0]


class Constraints(EngineBase):
    """New values for constrained genes (``gene_space`` None) and the fast output check."""

    _base_left: tuple

    def _constraint_candidates(self, gene: int, value) -> np.ndarray:
        """What PyGAD passes to a gene constraint during random mutation without a gene space:
        ``sample_size`` values of the mutation range (added to the gene unless by replacement),
        converted, sorted and unique.

        Float genes: a sorted uniform base (``sorted_uniform``, drawn afresh every
        ``_base_uses(size)`` calls) turned by a fresh uniform shift per call (``rotated_uniform``):
        every candidate is uniform on the range as in stock, but calls sharing a base see the
        same spacings (docs/engine.md)."""
        rng = self._generator()
        dtype = self._single_type()
        low, high = self.get_random_mutation_range(gene)
        size = int(self.sample_size)
        replace = self.mutation_by_replacement
        if np.dtype(dtype).kind == "f":
            if low == high:
                values = np.full(1, float(low) if replace else float(low) + float(value))
            else:
                start = float(low) if replace else float(low) + float(value)
                width = float(high) - float(low)
                scaled, gap = self._candidate_base(size, width, rng)
                values = rotated_uniform(scaled, rng.random(), start, width)
                # Spacings wider than the rounding of these values: no two candidates are equal.
                if gap * width > 2.0 * (math.ulp(max(abs(start), abs(start + width))) + math.ulp(width)):
                    return values
            if values.shape[0] > 1:
                same = values[1:] == values[:-1]
                if same.any():
                    values = values[np.concatenate(([True], ~same))]
            return values
        count, first, step = finite_offsets(low, high)
        if count <= size:
            index = np.arange(max(count, 1))
        else:
            index = rng.choice(count, size=size, replace=False)
        offsets = first + index * step
        values = offsets if replace else int(value) + offsets
        return np.unique(np.asarray(values).astype(np.int64))

    def _candidate_base(self, size: int, width: float,
                        rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """(``width`` × the sorted base of constraint candidates in [0, 1), the base's smallest
        spacing round the circle); the base is drawn afresh every ``_base_uses(size)`` calls."""
        base, gap, left, scaled = self._base_left
        if base is None or base.shape[0] != size or left == 0:
            base, left = sorted_uniform(0.0, 1.0, size, rng), _base_uses(size)
            gap = float(min(np.diff(base).min(initial=1.0), base[0] + 1.0 - base[-1]))
            scaled = None
        if scaled is None or scaled[1] != width:
            scaled = (base * width, width)
        self._base_left = (base, gap, left - 1, scaled)
        return scaled[0], gap

    def _constrained_value(self, solution: np.ndarray, gene: int):
        """A new value of ``gene`` that its constraint accepts, or its current value when none
        is: PyGAD's ``filter_gene_values_by_constraint`` (the constraint gets copies of the
        solution and the candidates, its output must be a subset of them, a warning when it
        accepts nothing) with the output check done knowing the candidates are sorted."""
        current = solution[gene]
        candidates = self._constraint_candidates(gene, current)
        accepted = self.gene_constraint[gene](solution.copy(), candidates.copy())
        if candidates.dtype.kind == "f" and math.isfinite(candidates[-1]) \
                and math.isfinite(candidates[0]):  # sorted, unique, no NaN: the cheaper check
            valid = type(accepted) in (list, np.ndarray) and is_subset_of_sorted(accepted, candidates)
        else:
            valid = None
        if valid is None:
            valid = self.validate_gene_constraint_callable_output(accepted, candidates)
        if not valid:
            raise Exception("The output from the gene_constraint callable/function must be a list "
                            "or NumPy array that is a subset of the passed values (second argument).")
        n = len(accepted)
        if n == 0:
            if not self.suppress_warnings:
                warnings.warn(f"Failed to find a value that satisfies its gene constraint for the "
                              f"gene at index {gene} with value {current} at generation "
                              f"{getattr(self, 'generations_completed', 0)}.", stacklevel=2)
            return current
        pick = accepted[min(int(self._generator().random() * n), n - 1)]
        gene_type = self.get_gene_dtype(gene)[0]
        return pick if gene_type is object else gene_type(pick)

    def validate_gene_constraint_callable_output(self, selected_values, values):
        if type(selected_values) not in (list, np.ndarray):
            return False
        answer = is_subset(selected_values, values)
        if answer is None:
            return super().validate_gene_constraint_callable_output(selected_values, values)
        return answer


def _base_uses(size: int) -> int:
    """How many constraint calls share one base of ``size`` candidates (each turned by its own
    shift): one (a fresh i.i.d. sample per call, as in stock) for small samples, where drawing is
    cheap and a shared lattice of few points would show in the search; up to 16 for dense ones
    (``sample_size`` ≥ 10,000), whose draw costs more than the rest of the engine's work per call."""
    return max(1, min(16, size // 625))
