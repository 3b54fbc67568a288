"""What every seam of the engine shares: the number types it treats as plain, cached read-only index
arrays, and ``EngineBase`` — the bookkeeping mixin (which paths ran, the engine's own random generator,
the storage dtype, whether the fast paths may run at all)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pygad

if TYPE_CHECKING:  # the mixins are only ever mixed into pygad.GA: type them as its subclasses
    from pygad import GA as _GA
else:
    _GA = object

__all__ = ["PLAIN_NUMBERS", "SCALAR_TYPES", "EngineBase", "has_nan", "row_range", "row_starts"]

SCALAR_TYPES = frozenset(t for t in pygad.GA.supported_int_float_types if t is not object)
PLAIN_NUMBERS = frozenset((float, np.float64, np.int64))
_STORAGE = {int: np.int64, float: np.float64, np.int64: np.int64, np.float64: np.float64}


def has_nan(values: np.ndarray) -> bool:
    """Whether a float array holds a NaN (one reduction; an inf makes it look at each value)."""
    smallest = np.minimum.reduce(values)  # NaN propagates, no warning
    return bool(smallest != smallest)


def row_range(n: int) -> np.ndarray:
    """``np.arange(n)``, cached read-only."""
    return frozen(("rows", n), np.arange, n)


def row_starts(n: int, width: int) -> np.ndarray:
    """``np.arange(n) * width``: the flat position of each row's first cell, cached read-only."""
    return frozen(("starts", n, width), np.arange, 0, n * width, width)


def frozen(key: tuple, build, *args):
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


class EngineBase(_GA):
    """Bookkeeping shared by the operator mixins (``AcceleratedGA`` sets the attributes)."""

    _accel_active: bool  # turned off for good by a multi-objective fitness
    _accel_used: dict[str, str]  # step → "accelerated" | "pygad" | "mixed", as they ran
    _rng: np.random.Generator | None
    _handover: tuple | None  # (first fitness, its evaluations) for stock run() after the lean one
    _fitness_value_shape: tuple | None  # stock's: the shape of one fitness value, once known
    # pygad.GA's own state that the engine writes (untyped in PyGAD)
    population: Any
    generations_completed: Any
    best_solutions: Any
    best_solutions_fitness: Any
    solutions: Any
    solutions_fitness: Any
    on_start: Any

    def _note(self, step: str, accelerated: bool) -> None:
        used = self._accel_used
        value = "accelerated" if accelerated else "pygad"
        if used.get(step) != value:
            used[step] = "mixed" if step in used else value

    def _generator(self) -> np.random.Generator:
        if self._rng is None:  # only if an operator runs before __init__ finished
            self._rng = np.random.default_rng(self.random_seed)
        return self._rng

    def _single_type(self):
        """The storage dtype when every gene has one plain int/float type, else None."""
        if not self.gene_type_single:
            return None
        gene_type, precision = self.gene_type
        if precision is not None:
            return None
        return _STORAGE.get(gene_type)

    def _base_ok(self) -> bool:
        categorical = getattr(self, "gene_categorical", None)
        return (
            self._accel_active
            and self.allow_duplicate_genes
            and (categorical in (None, False) or not any(categorical))
            and self._single_type() is not None
        )

    @staticmethod
    def _single_objective(fitness) -> bool:
        return isinstance(fitness, np.ndarray) and fitness.ndim == 1 and fitness.dtype.kind in "fiu"
