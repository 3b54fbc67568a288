"""Multi-objective results: the Pareto front of a population and the best value of each objective.

PyGAD maximises every objective.  A solution is on the front (non-dominated) when no other solution
is at least as good on every objective and better on one.  Runs inside the sandboxed child.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["distinct_rows", "pareto_front"]

_CHUNK_CELLS = 1 << 22  # rows x population x objectives compared at once (bounds the memory used)


def pareto_front(fitness: NDArray[np.generic]) -> NDArray[np.intp]:
    """Indices (ascending) of the non-dominated rows of ``fitness`` (n × m, maximised)."""
    values = np.asarray(fitness, dtype=np.float64)
    n, m = values.shape
    dominated = np.zeros(n, dtype=bool)
    step = max(1, _CHUNK_CELLS // max(1, n * m))
    for start in range(0, n, step):
        rows = values[start : start + step]  # (k, m): is each of them dominated?
        at_least = np.all(values[None, :, :] >= rows[:, None, :], axis=2)  # (k, n)
        better = np.any(values[None, :, :] > rows[:, None, :], axis=2)
        dominated[start : start + step] = np.any(at_least & better, axis=1)
    return np.flatnonzero(~dominated)


def distinct_rows(rows: NDArray[np.generic], indices: NDArray[np.intp]) -> NDArray[np.int64]:
    """``indices`` without those whose row repeats an earlier one (first occurrence kept, in order)."""
    seen: set[bytes] = set()
    kept: list[int] = []
    for index in indices.tolist():
        key = rows[index].tobytes()
        if key not in seen:
            seen.add(key)
            kept.append(index)
    return np.asarray(kept, dtype=np.int64)
