"""Fitness evaluation (PyGAD's ``GAEngine.cal_pop_fitness`` and ``best_solution``): stock's cache
rule, calls, batches and validation, with the cache matched by vectorised row sums and numeric answers
placed without per-value Python work.  ``Fitness`` serves stock's loop (``cal_pop_fitness``) and the
lean loop (``_lean_fitness``, whose cache sources are the arrays it just selected) alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from .base import (
    PLAIN_NUMBERS,
    SCALAR_TYPES,
    EngineBase,
    FitnessValue,
    FitnessValues,
    Floats,
    Genes,
    Indices,
    has_nan,
)

if TYPE_CHECKING:
    from .parallel import FitnessPool

__all__ = ["Fitness", "cache_hits"]

# Stock's fitness cache sources: (rows, their indices in the previous population), elites then parents.
Sources: TypeAlias = list[tuple[Genes, Indices]]
# Cache hits: population index → the previous generation's fitness value of its equal row.
Hits: TypeAlias = dict[int, FitnessValue]

_WEIGHTS: dict[int, Floats] = {}


def _weights(width: int) -> Floats:
    """Fixed float weights of the row sums used to find candidate equal rows."""
    weights = _WEIGHTS.get(width)
    if weights is None:
        weights = _WEIGHTS[width] = np.random.default_rng(width).uniform(0.5, 1.5, width)
    return weights


def cache_hits(population: Genes, sources: Sources, previous: FitnessValues) -> Hits | None:
    """Stock's fitness cache: ``{population index: previous[index of the first equal source row]}``
    over ``sources`` — ``(rows, their indices in the previous population)`` in stock's order (elites,
    then parents) — with ``==`` per gene over all genes (tuple equality: ``-0.0`` equals ``0.0``,
    NaN equals nothing).  Candidate pairs are found by a float weighted row sum (the same row always
    gives the same sum, computed the same way) and then compared exactly.  None when a sum is not
    finite (NaN or inf in a row): the caller lets stock PyGAD evaluate."""
    weights = _weights(population.shape[1])
    with np.errstate(all="ignore"):
        sums = np.add.reduce(population * weights, axis=1)
        if len(sources) == 1:
            ((rows, indices),) = sources
            all_sums = np.add.reduce(rows * weights, axis=1)
        else:
            rows = np.concatenate([rows for rows, _ in sources])
            indices = np.concatenate([np.asarray(indices) for _, indices in sources])
            all_sums = np.add.reduce(rows * weights, axis=1)
        total = np.add.reduce(sums) + np.add.reduce(all_sums)
        finite = total - total == 0  # False for NaN or inf anywhere
    if not finite:
        return None
    found: Hits = {}
    first, second = (sums[:, None] == all_sums).nonzero()  # row-major: source order within a row
    for index, position in zip(first.tolist(), second.tolist()):
        if index not in found and (population[index] == rows[position]).all():
            found[index] = previous[indices[position]]
    return found


class Fitness(EngineBase):
    """Stock's ``cal_pop_fitness`` and ``best_solution`` for a numeric population."""

    def cal_pop_fitness(self) -> FitnessValues:
        handover: tuple[FitnessValues | None, int] | None = getattr(self, "_handover", None)
        if handover is not None and handover[0] is not None:
            # super().run() after the lean run() found a multi-objective first evaluation.
            stored, evaluations = handover[0], handover[1]
            self._handover = (None, 0)
            self.num_fitness_evaluations += evaluations
            return stored
        population = self.population
        if (
            not self.valid_parameters
            or self.save_solutions
            or self.save_best_solutions
            or not isinstance(population, np.ndarray)
            or population.ndim != 2
            or population.dtype.kind not in "fiu"
        ):
            self._note("fitness", False)
            fitness: FitnessValues = super().cal_pop_fitness()
        else:
            self._note("fitness", True)
            try:
                fitness = self._fast_pop_fitness(population)
            except Exception as ex:
                self.logger.exception(ex)
                raise
        if self._accel_active and not self._single_objective(fitness) and len(fitness):
            if fitness.dtype != object or fitness.ndim != 1:
                # Multi-objective: stock's operators from now on, with the engine's exact steps only
                # (this evaluation, the NSGA sort): the engine label starts again for that mode.
                self._accel_active = False
                self._accel_used = {"fitness": self._accel_used.get("fitness", "pygad")}
        return fitness

    def _vector_ok(self, value: FitnessValue) -> bool:
        """Whether stock's ``_validate_fitness_value`` accepts ``value`` as an objective vector
        unchanged, decided without its per-objective Python work for the usual answers: a list or tuple
        of finite floats (or of ints only), or a 1-D float64/int64 array (finite).  It records the
        shape as stock does.  False: stock's validation decides (and raises its errors)."""
        kind = type(value)
        if kind is np.ndarray:
            if value.ndim != 1 or not value.size:
                return False
            if value.dtype == np.float64:
                if not np.isfinite(value).all():
                    return False
            elif value.dtype != np.int64:
                return False
            shape: tuple[int, ...] = value.shape
        elif kind is list or kind is tuple:
            if not value:
                return False
            first = type(value[0])
            if first is float:
                for item in value:
                    if type(item) is not float or item - item != 0.0:  # NaN or inf: not 0
                        return False
            elif first is int:
                for item in value:
                    if type(item) is not int:
                        return False
            else:
                return False
            shape = (len(value),)
        else:
            return False
        expected = self._fitness_value_shape
        if expected is not None and expected != shape:
            return False
        self._fitness_value_shape = shape
        return True

    def _cache_sources(self, population: Genes) -> Sources | None:
        """Stock's cache sources, elites before parents; None when one cannot be compared with the
        population row by row (stock PyGAD then evaluates)."""
        sources = []
        if self.keep_elitism > 0 and self.last_generation_elitism is not None:
            sources.append((self.last_generation_elitism, self.last_generation_elitism_indices))
        if self.keep_parents != 0 and self.last_generation_parents is not None:
            sources.append((self.last_generation_parents, self.last_generation_parents_indices))
        checked: Sources = []
        for rows, indices in sources:
            rows = np.asarray(rows)
            if rows.dtype != population.dtype or rows.ndim != 2 or rows.shape[1] != population.shape[1]:
                return None
            checked.append((rows, indices))
        return checked

    def _cache_lookup(self, population: Genes) -> Hits | None:
        """The cache hits of stock's rule (``cache_hits``), or None: stock evaluates."""
        sources = self._cache_sources(population)
        if not sources:
            return None if sources is None else {}
        return cache_hits(population, sources, self.previous_generation_fitness)

    def _lean_fitness(self, population: Genes, elites_in_parents: bool) -> FitnessValues:
        """``cal_pop_fitness`` in the lean loop.  ``elites_in_parents``: sss selection with
        ``0 < keep_elitism <= num_parents_mating`` and ``keep_parents != 0``, so the elites are the
        first parents (same indices, same rows, copied from the same population): matching the
        parents alone, the first matching parent ``j`` is elite ``j`` when ``j < keep_elitism`` —
        the value stock finds."""
        if not self._accel_active:
            return self.cal_pop_fitness()
        self._note("fitness", True)
        if elites_in_parents:  # the loop's own arrays: no checks needed
            sources: Sources = [(self.last_generation_parents, self.last_generation_parents_indices)]
            found = cache_hits(population, sources, self.previous_generation_fitness)
        else:
            found = self._cache_lookup(population)
        if found is None:
            return self.cal_pop_fitness()
        try:
            return self._fast_pop_fitness(population, found)
        except Exception as ex:
            self.logger.exception(ex)
            raise

    def _cached_values(self, found: Hits, pop_fitness: list[FitnessValue], n: int) -> list[int]:
        """Validate and store the reused fitness values; the indices still to evaluate."""
        validate = self._validate_fitness_value
        for index in sorted(found):  # population order, as stock
            value = found[index]
            if type(value) is np.ndarray:  # a row of a multi-objective fitness
                if not self._vector_ok(value):
                    value = validate(value, "cached fitness")
            elif type(value) not in SCALAR_TYPES or value != value or self._fitness_value_shape not in (None, ()):
                value = validate(value, "cached fitness")
            else:
                self._fitness_value_shape = ()
            pop_fitness[index] = value
        missing = list(range(n))
        for index in sorted(found, reverse=True):
            del missing[index]
        return missing

    def _fast_pop_fitness(self, population: Genes, found: Hits | None = None) -> FitnessValues:
        """Stock's ``cal_pop_fitness`` for a numeric population; ``found``: the cache hits
        (population index → previous fitness) when the caller has them, else ``_cache_lookup``'s."""
        if type(self.best_solutions) is np.ndarray:
            self.best_solutions = self.best_solutions.tolist()
        if not getattr(self, "_fitness_run_active", False):
            self._fitness_value_shape = None
        if found is None:
            found = self._cache_lookup(population)
            if found is None:
                stock: FitnessValues = super().cal_pop_fitness()
                return stock
        n = population.shape[0]
        pop_fitness: list[FitnessValue] = [None] * n
        missing = self._cached_values(found, pop_fitness, n)
        pool = self._pool() if missing and self.parallel_processing is not None else None
        if pool is not None:
            self._parallel_values(pool, missing, pop_fitness)
        elif missing:
            fitness_func = self.fitness_func
            validate = self._validate_fitness_value
            batch_size = self.fitness_batch_size
            if batch_size in (None, 1):
                for index in missing:
                    value = fitness_func(self, population[index], index)
                    self.num_fitness_evaluations += 1
                    kind = type(value)
                    if kind is list or kind is tuple or kind is np.ndarray:  # objectives (or one value)
                        if not self._vector_ok(value):
                            value = validate(value, f"fitness_func for solution {index}")
                    elif kind not in SCALAR_TYPES or value != value or self._fitness_value_shape not in (None, ()):
                        value = validate(value, f"fitness_func for solution {index}")
                    else:
                        self._fitness_value_shape = ()
                    pop_fitness[index] = value
            else:
                arrays: list[tuple[list[int], Floats]] = []  # (group, float64 result) taken without per-value work
                for start in range(0, len(missing), batch_size):
                    group = missing[start : start + batch_size]
                    if group[-1] - group[0] == len(group) - 1:  # a run of rows: a slice copy
                        rows = population[group[0] : group[-1] + 1].copy()
                    else:
                        rows = population[group, :]
                    result = fitness_func(self, rows, group)
                    self.num_fitness_evaluations += len(group)
                    if self._take_batch(group, result, pop_fitness):
                        arrays.append((group, result))
                if arrays:
                    # What np.array(pop_fitness) gives when a float64 value is among plain
                    # float/int64 ones: a float64 array.  Built directly.
                    if all(type(pop_fitness[index]) in PLAIN_NUMBERS for index in found):
                        out = np.empty(n, dtype=np.float64)
                        for index in found:  # the cache hits
                            out[index] = pop_fitness[index]
                        for group, result in arrays:
                            if group[-1] - group[0] == len(group) - 1:
                                out[group[0] : group[-1] + 1] = result
                            else:
                                out[group] = result
                        return out
                    for group, result in arrays:
                        for index, value in zip(group, result):
                            pop_fitness[index] = value
        return np.array(pop_fitness)

    def _parallel_values(self, pool: FitnessPool, missing: list[int], pop_fitness: list[FitnessValue]) -> None:
        """The values of ``missing`` from the run's pool (``parallel.FitnessPool``), in population
        order, through stock's validation; the first exception in that order is raised after the
        values before it are counted, as a serial evaluation does."""
        batch_size = self.fitness_batch_size
        if batch_size in (None, 1):
            values, error = pool.evaluate(self, [(index, False) for index in missing])
            validate = self._validate_fitness_value
            for index, value in zip(missing, values):
                self.num_fitness_evaluations += 1
                pop_fitness[index] = validate(value, f"fitness_func for solution {index}")
        else:
            groups = [missing[start : start + batch_size] for start in range(0, len(missing), batch_size)]
            values, error = pool.evaluate(self, [(group, True) for group in groups])
            for group, result in zip(groups, values):
                self.num_fitness_evaluations += len(group)
                if self._take_batch(group, result, pop_fitness):
                    for index, value in zip(group, result):
                        pop_fitness[index] = value
        if error is not None:
            raise error

    def _take_batch(self, group: list[int], result: object, pop_fitness: list[FitnessValue]) -> bool:
        """PyGAD's checks of one batch result, vectorised for a plain numeric array.  True: a
        checked float64 array the caller places itself; False: values stored in ``pop_fitness``."""
        if type(result) is not list and type(result) is not tuple and type(result) is not np.ndarray:
            raise TypeError(
                "Expected to receive a list, tuple, or numpy.ndarray from the fitness "
                f"function but the value ({result}) of type {type(result)}."
            )
        if isinstance(result, np.ndarray) and result.ndim == 0:
            raise ValueError("A batched fitness_func must return one fitness value per solution, not a scalar array.")
        if len(result) != len(group):
            raise ValueError(
                "There is a mismatch between the number of solutions passed to the "
                f"fitness function ({len(group)}) and the number of fitness values "
                f"returned ({len(result)}). They must match."
            )
        if (
            isinstance(result, np.ndarray)
            and result.ndim == 1
            and result.dtype.kind in "fiu"
            and self._fitness_value_shape in (None, ())
            and not (result.dtype.kind == "f" and has_nan(result))
        ):
            self._fitness_value_shape = ()
            if result.dtype == np.float64:
                return True  # the caller places the whole array
            for index, value in zip(group, result):
                pop_fitness[index] = value
            return False
        validate = self._validate_fitness_value
        for index, value in zip(group, result):
            pop_fitness[index] = validate(value, f"fitness_func for solution {index}")
        return False

    def best_solution(self, pop_fitness: FitnessValues | None = None) -> tuple[Genes, FitnessValue, int]:
        if (
            self._accel_active
            and isinstance(pop_fitness, np.ndarray)
            and pop_fitness.ndim == 1
            and pop_fitness.dtype.kind in "fiu"
            and len(pop_fitness) == len(self.population)
            and len(pop_fitness)
            and not (pop_fitness.dtype.kind == "f" and np.isnan(pop_fitness).any())
        ):
            index = int(np.argmax(pop_fitness))
            return self.population[index, :].copy(), pop_fitness[index], index
        if (
            type(pop_fitness) is np.ndarray
            and pop_fitness.ndim == 2
            and (pop_fitness.dtype == np.int64 or (pop_fitness.dtype == np.float64 and np.isfinite(pop_fitness).all()))
            and len(pop_fitness) == len(self.population)
            and len(pop_fitness)
            and pop_fitness.shape[1]
        ):
            # Several objectives: stock validates each row (every value finite: it is) and takes the
            # first of the NSGA-II order (NSGA.sort_solutions_nsga2: the generation's one sort).
            order = self.sort_solutions_nsga2(fitness=pop_fitness, find_best_solution=True)
            best = order[0]
            return self.population[best, :].copy(), pop_fitness[best].copy(), best
        stock: tuple[Genes, FitnessValue, int] = super().best_solution(pop_fitness=pop_fitness)
        return stock
