"""What every seam of the engine shares: the number types it treats as plain, cached read-only index
arrays, and ``EngineBase`` — the bookkeeping mixin (which paths ran, the engine's own random generator,
the storage dtype, whether the fast paths may run at all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

import numpy as np
import pygad
from numpy.typing import NDArray

if TYPE_CHECKING:  # the mixins are only ever mixed into pygad.GA: type them as its subclasses
    from pygad import GA as _GA
else:
    _GA = object

__all__ = [
    "PLAIN_NUMBERS",
    "SCALAR_TYPES",
    "EngineBase",
    "FitnessValue",
    "FitnessValues",
    "Floats",
    "Genes",
    "Indices",
    "Mask",
    "StorageType",
    "has_nan",
    "row_range",
    "row_starts",
]

# The arrays of the engine.  The population and what is made of it (parents, offspring, rows) hold the
# job's gene type: int64 or float64 on the fast paths, what PyGAD chose elsewhere (per-gene types make
# an object array); a fitness array is 1-D and numeric on the fast paths, PyGAD's 2-D (several
# objectives) or object one elsewhere.  Their dtypes are known per job, not to the type checker.
Genes: TypeAlias = NDArray[Any]
FitnessValues: TypeAlias = NDArray[Any]
# One solution's fitness as the user's function returned it (a number, a list, an array …): PyGAD
# checks it (``_validate_fitness_value``), the engine only moves it.
FitnessValue: TypeAlias = Any
Floats: TypeAlias = NDArray[np.float64]
Indices: TypeAlias = NDArray[np.intp]
Mask: TypeAlias = NDArray[np.bool_]
StorageType: TypeAlias = type[np.int64] | type[np.float64]

SCALAR_TYPES = frozenset(t for t in pygad.GA.supported_int_float_types if t is not object)
PLAIN_NUMBERS = frozenset((float, np.float64, np.int64))
_STORAGE: dict[object, StorageType] = {int: np.int64, float: np.float64, np.int64: np.int64, np.float64: np.float64}
_Cached = TypeVar("_Cached", bound="NDArray[Any] | tuple[NDArray[Any], ...]")


def has_nan(values: NDArray[np.floating[Any]] | NDArray[np.integer[Any]]) -> bool:
    """Whether a float array holds a NaN (one reduction; an inf makes it look at each value)."""
    smallest = np.minimum.reduce(values)  # NaN propagates, no warning
    return bool(smallest != smallest)


def row_range(n: int) -> Indices:
    """``np.arange(n)``, cached read-only."""
    return frozen(("rows", n), np.arange, n)


def row_starts(n: int, width: int) -> Indices:
    """``np.arange(n) * width``: the flat position of each row's first cell, cached read-only."""
    return frozen(("starts", n, width), np.arange, 0, n * width, width)


def frozen(key: tuple[object, ...], build: Callable[..., _Cached], *args: object) -> _Cached:
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
    return cast(_Cached, value)  # what ``build`` made for this key: every key names its builder


_FROZEN: dict[tuple[object, ...], NDArray[Any] | tuple[NDArray[Any], ...]] = {}


class EngineBase(_GA):  # type: ignore[misc]  # pygad.GA is untyped (Any): the mixins subclass it
    """Bookkeeping shared by the operator mixins (``AcceleratedGA`` sets the attributes).  The state
    of ``pygad.GA`` the engine reads and writes is PyGAD's, untyped."""

    _accel_active: bool  # turned off for good by a multi-objective fitness
    _accel_used: dict[str, str]  # step → "accelerated" | "pygad" | "mixed", as they ran
    _rng: np.random.Generator | None
    # (first fitness, its evaluations) for stock run() after the lean one; (None, 0) once handed back
    _handover: tuple[FitnessValues | None, int] | None
    _fitness_value_shape: tuple[int, ...] | None  # stock's: the shape of one fitness value, once known
    # pygad.GA's own state that the engine writes: PyGAD keeps lists or arrays in them as it goes
    population: Any
    generations_completed: Any
    best_solutions: Any
    best_solutions_fitness: Any
    solutions: Any
    solutions_fitness: Any
    on_start: Any
    _saved_fitness_indexes: dict[str, object]  # PyGAD's index of saved solutions' fitness, by list

    def _note(self, step: str, accelerated: bool) -> None:
        used = self._accel_used
        value = "accelerated" if accelerated else "pygad"
        if used.get(step) != value:
            used[step] = "mixed" if step in used else value

    def _generator(self) -> np.random.Generator:
        if self._rng is None:  # only if an operator runs before __init__ finished
            self._rng = np.random.default_rng(self.random_seed)
        return self._rng

    def _single_type(self) -> StorageType | None:
        """The storage dtype when every gene has one plain int/float type, else None."""
        if not self.gene_type_single:
            return None
        gene_type, precision = self.gene_type
        if precision is not None:
            return None
        return _STORAGE.get(gene_type)

    def _base_ok(self) -> bool:
        categorical = getattr(self, "gene_categorical", None)
        return bool(
            self._accel_active
            and self.allow_duplicate_genes
            and (categorical in (None, False) or not any(categorical))
            and self._single_type() is not None
        )

    @staticmethod
    def _single_objective(fitness: object) -> bool:
        return isinstance(fitness, np.ndarray) and fitness.ndim == 1 and fitness.dtype.kind in "fiu"
