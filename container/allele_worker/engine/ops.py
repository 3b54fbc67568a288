"""Vectorised GA operators (pure numpy, no PyGAD).  ``AcceleratedGA`` calls these for the
configurations it covers; each one mirrors a stock PyGAD 3.9.2 operator (named in its docstring)
in what it computes, not in how it draws its random numbers (see docs/engine.md)."""

from __future__ import annotations

import math
import threading

import numpy as np

__all__ = [
    "choose_gene_positions",
    "choose_genes",
    "crossover_offspring",
    "finite_offsets",
    "is_subset",
    "is_subset_of_sorted",
    "mates",
    "pick_other",
    "rotated_uniform",
    "row_range",
    "row_starts",
    "select_parents",
    "sorted_uniform",
    "sss_order",
    "uniform_index",
]


# --------------------------------------------------------------------------- selection


def sss_order(fitness: np.ndarray) -> np.ndarray:
    """Indices best → worst, exactly as PyGAD's ``sort_solutions_nsga2`` for one objective:
    ``sorted(range(n), key=fitness)`` (stable, ascending) then reversed, so among equal fitness
    the later index comes first."""
    return np.argsort(fitness, kind="stable")[::-1]


def _wheel(probs: np.ndarray, pointers: np.ndarray) -> np.ndarray:
    """Index whose ``[start, end)`` slice of PyGAD's wheel (slices laid out in ``argsort(probs)``
    order, see ``wheel_cumulative_probs``) holds each pointer.  A pointer past the last end (float
    rounding; stock PyGAD would drop that parent and fail) takes the last slice."""
    order = np.argsort(probs)
    cumulative = np.cumsum(probs[order])
    position = np.searchsorted(cumulative, pointers, side="right")
    np.minimum(position, len(order) - 1, out=position)
    return order[position]


def select_parents(kind: str, fitness: np.ndarray, num_parents: int, rng: np.random.Generator, *,
                   k_tournament: int = 3, probabilities=None) -> np.ndarray:
    """Parent indices for ``sss``, ``tournament``, ``random``, ``rank``, ``rws`` or ``sus``.

    ``probabilities`` (rws/sus) are PyGAD's own ``fitness_selection_probabilities``."""
    n = fitness.shape[0]
    if kind == "sss":
        return sss_order(fitness)[:num_parents].copy()
    if kind == "random":
        return rng.integers(0, n, size=num_parents)
    if kind == "tournament":
        order = sss_order(fitness)
        rank = np.empty(n, dtype=np.intp)
        rank[order] = np.arange(n)
        candidates = rng.integers(0, n, size=(num_parents, k_tournament))
        winners = np.argmin(rank[candidates], axis=1)
        return candidates[np.arange(num_parents), winners]
    if kind == "rank":
        order = sss_order(fitness)
        ranks = np.arange(n, 0, -1)
        probs = ranks / np.sum(ranks)
        return order[_wheel(probs, rng.random(num_parents))]
    if kind == "rws":
        return _wheel(probabilities, rng.random(num_parents))
    if kind == "sus":
        distance = 1.0 / num_parents
        first = rng.uniform(0.0, distance)
        return _wheel(probabilities, first + np.arange(num_parents) * distance)
    raise ValueError(f"not a vectorised selection: {kind}")


# --------------------------------------------------------------------------- crossover


def uniform_index(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` uniform integers in ``range(n)`` as ``floor(U * n)`` with ``U = rng.random()``
    (53-bit uniforms: each value's probability is ``1/n`` within ``n / 2**53``); several times
    cheaper than ``Generator.integers`` for the small arrays of a small population."""
    values = rng.random(size)
    values *= n
    index = values.astype(np.intp)
    np.minimum(index, n - 1, out=index)  # U * n rounds to n only for U within 2**-53 of 1
    return index


def row_range(n: int) -> np.ndarray:
    """``np.arange(n)``, cached read-only."""
    return _frozen(("rows", n), np.arange, n)


def row_starts(n: int, width: int) -> np.ndarray:
    """``np.arange(n) * width``: the flat position of each row's first cell, cached read-only."""
    return _frozen(("starts", n, width), np.arange, 0, n * width, width)


def _frozen(key: tuple, build, *args):
    """``build(*args)`` (an array or a tuple of arrays) made read-only and cached under ``key``;
    the cache is emptied when it grows past 192 entries."""
    value = _FROZEN.get(key)
    if value is None:
        value = build(*args)
        for array in value if isinstance(value, tuple) else (value,):
            array.flags.writeable = False
        if len(_FROZEN) > 192:
            _FROZEN.clear()
        _FROZEN[key] = value
    return value


_FROZEN: dict[tuple, np.ndarray | tuple[np.ndarray, ...]] = {}


def _fixed_mates(num_offspring: int, num_parents: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(num_offspring)
    return k % num_parents, (k + 1) % num_parents


def mates(num_offspring: int, num_parents: int, probability, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray]:
    """The two parents of each offspring.  Without ``crossover_probability``: parents ``k % P`` and
    ``(k + 1) % P``.  With it (PyGAD's rule): the parents whose draw is below the probability
    qualify; none → offspring ``k`` copies parent ``k % P``; one → it mates with itself; more → an
    ordered pair of two distinct qualifying parents chosen uniformly."""
    if probability is None:
        return _frozen(("mates", num_offspring, num_parents), _fixed_mates, num_offspring, num_parents)
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


def crossover_offspring(kind: str, parents: np.ndarray, num_offspring: int, probability,
                        rng: np.random.Generator) -> np.ndarray:
    """Offspring of ``single_point``, ``two_points``, ``uniform`` or ``scattered`` crossover."""
    num_parents, num_genes = parents.shape
    first, second = mates(num_offspring, num_parents, probability, rng)
    genes = np.arange(num_genes)
    if kind == "single_point":
        point = uniform_index(num_genes, num_offspring, rng)
        from_second = genes >= point[:, None]
    elif kind == "two_points":
        point_a = rng.integers(0, num_genes + 1, size=num_offspring)
        point_b = rng.integers(0, num_genes, size=num_offspring)
        point_b[point_b >= point_a] += 1
        low, high = np.minimum(point_a, point_b), np.maximum(point_a, point_b)
        from_second = (genes[None, :] >= low[:, None]) & (genes[None, :] < high[:, None])
    elif kind in ("uniform", "scattered"):
        from_second = rng.random((num_offspring, num_genes)) < 0.5
    else:
        raise ValueError(f"not a vectorised crossover: {kind}")
    return np.where(from_second, parents[second], parents[first])


# --------------------------------------------------------------------------- mutation


def choose_genes(num_rows: int, num_genes: int, count: int, rng: np.random.Generator) -> np.ndarray:
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


def choose_gene_positions(num_rows: int, num_genes: int, count: int, rng: np.random.Generator
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero(choose_genes(...))`` (same draws): rows and genes to mutate, row-major.  One
    gene per row (the default 10 % of 10 genes) skips the mask."""
    count = int(count)
    if count == 1 and num_genes > 2:
        # Floyd's single step: j = num_genes - 1, one draw in range(num_genes) per row (the same
        # Generator.integers draw as choose_genes, so the same stream as before the lean loop).
        return row_range(num_rows), rng.integers(0, num_genes, size=num_rows)
    rows, genes = np.nonzero(choose_genes(num_rows, num_genes, count, rng))
    return rows, genes


def finite_offsets(low, high) -> tuple[int, float | int, float | int]:
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


def pick_other(space: np.ndarray, current: np.ndarray, rng: np.random.Generator) -> np.ndarray:
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
    result = space[np.minimum(draw, m - 1)]
    keep = bound == 0
    if keep.any():
        result = result.copy()
        result[keep] = current[keep]
    return result


# --------------------------------------------------------------------------- constraints


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
