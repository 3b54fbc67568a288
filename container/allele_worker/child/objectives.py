"""Multi-objective results: the Pareto front of a population and the best value of each objective.

PyGAD maximises every objective.  A solution is on the front (non-dominated) when no other solution
is at least as good on every objective and better on one.  Runs inside the sandboxed child.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["distinct_rows", "pareto_front", "snapshot_rows", "snapshot_size"]

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


def snapshot_size(objectives: int) -> int:
    """How many solutions one snapshot of ``pareto_history`` keeps with this many objectives shown."""
    from ..wire import PARETO_HISTORY_POINTS, PARETO_HISTORY_SNAPSHOTS, PARETO_HISTORY_VALUES

    return max(1, min(PARETO_HISTORY_POINTS, PARETO_HISTORY_VALUES // (PARETO_HISTORY_SNAPSHOTS * objectives)))


def _spread(indices: NDArray[np.intp], count: int) -> NDArray[np.intp]:
    """``count`` of ``indices`` evenly spread over them (first and last included), or all of them."""
    if len(indices) <= count:
        return indices
    return indices[np.unique(np.linspace(0, len(indices) - 1, count).round().astype(np.intp))]


def snapshot_rows(fitness: NDArray[np.generic]) -> NDArray[np.float64]:
    """One snapshot of ``pareto_history`` (``jobs.ParetoHistory``): the population's objective vectors,
    the first PARETO_HISTORY_OBJECTIVES objectives, and a last column 1.0 for a non-dominated solution
    (judged on every objective) and 0.0 for the others; the front's rows first.  Past ``snapshot_size``
    solutions, a sample: the front first (evenly spread over it if it alone is larger), then the rest
    evenly spread over the population.  A copy: the GA's arrays are untouched and nothing is drawn."""
    from ..wire import PARETO_HISTORY_OBJECTIVES

    values = np.asarray(fitness, dtype=np.float64)
    shown = min(values.shape[1], PARETO_HISTORY_OBJECTIVES)
    limit = snapshot_size(shown)
    front = pareto_front(np.where(np.isnan(values), -np.inf, values))
    on_front = np.zeros(values.shape[0], dtype=bool)
    on_front[front] = True
    kept_front = _spread(front, limit)
    kept_rest = _spread(np.flatnonzero(~on_front), limit - len(kept_front))
    rows = np.empty((len(kept_front) + len(kept_rest), shown + 1), dtype=np.float64)
    rows[: len(kept_front), :shown] = values[kept_front, :shown]
    rows[len(kept_front) :, :shown] = values[kept_rest, :shown]
    rows[:, shown] = 0.0
    rows[: len(kept_front), shown] = 1.0
    return rows
