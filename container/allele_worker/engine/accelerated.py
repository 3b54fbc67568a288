"""``AcceleratedGA``: a ``pygad.GA`` whose hot paths are vectorised for the configurations they cover.

Stock PyGAD's validation, callbacks, stop rules and outputs are kept as they are.  ``run()`` is a
lean copy of stock's loop (``lean_run_covered()``: no ``on_fitness``/``on_parents``/``on_crossover``/
``on_mutation``, no saved solutions, no delay, selection/crossover/mutation all vectorised, stop
criteria ``reach``/``saturate``/``time``/``evaluations``; else ``super().run()``): the same
attributes, callbacks, stop generation, fitness calls and batches, with the steps inlined, one sort
per generation for parents and elites, and the fitness cache matched against the arrays just
selected (``_lean_fitness``).  A multi-objective first evaluation hands the run to stock's loop
without evaluating twice.  Otherwise only these methods are overridden, and each one hands the call
to ``super()`` (stock PyGAD) whenever its fast path does not cover the current state:

==============================  ================================================================
method                          fast path covers
==============================  ================================================================
``cal_pop_fitness``             serial evaluation, no ``save_solutions``/``save_best_solutions``;
                                same fitness cache (elites, parents), same calls, same validation
``best_solution``               a 1-D numeric fitness array (single objective)
``steady_state_selection``      single objective (exact: same parents, same order as stock)
``tournament/random/rank/``     single objective
``roulette_wheel/stochastic_``
``universal_selection``
``single_point/two_points/``    single gene type, duplicates allowed
``uniform/scattered_crossover``
``random_mutation``             single gene type ``int``/``float``, duplicates allowed, ``gene_space``
                                None / one list of numbers / one ``{low, high}`` dict; per-gene
                                ``gene_constraint`` with ``gene_space`` None
``validate_gene_constraint_``   numeric candidate values (vectorised subset check)
``callable_output``
==============================  ================================================================

A multi-objective fitness (detected from the first evaluation) turns every fast path off for the
rest of the run.  ``engine_label()`` says which paths ran.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pygad

from . import ops

__all__ = ["CROSSOVERS", "SELECTIONS", "AcceleratedGA"]

SELECTIONS = {"sss": "steady_state_selection", "tournament": "tournament_selection",
              "random": "random_selection", "rank": "rank_selection",
              "rws": "roulette_wheel_selection", "sus": "stochastic_universal_selection"}
CROSSOVERS = ("single_point", "two_points", "uniform", "scattered")
_SCALAR_TYPES = frozenset(t for t in pygad.GA.supported_int_float_types if t is not object)
_PLAIN_NUMBERS = frozenset((float, np.float64, np.int64))
_STORAGE = {int: np.int64, float: np.float64, np.int64: np.int64, np.float64: np.float64}


class AcceleratedGA(pygad.GA):
    """Drop-in ``pygad.GA``; see the module docstring for what is accelerated."""

    def __init__(self, *args, **kwargs):
        self._accel_active = True  # turned off for good by a multi-objective fitness
        self._accel_used: dict[str, str] = {}  # step → "accelerated" | "pygad", as they ran
        self._rng = None
        self._space_cache = None
        self._base_left = (None, 0.0, 0, None)  # candidate base, spacing, calls left, (scaled, width)
        self._handover = None  # (first fitness, its evaluations) for stock run() after lean run()
        super().__init__(*args, **kwargs)
        # The engine's own generator: seeded from random_seed, so a seeded run is reproducible.
        self._rng = np.random.default_rng(self.random_seed)

    # ------------------------------------------------------------------ bookkeeping

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
        return (self._accel_active and self.allow_duplicate_genes
                and (categorical in (None, False) or not any(categorical))
                and self._single_type() is not None)

    @staticmethod
    def _single_objective(fitness) -> bool:
        return (isinstance(fitness, np.ndarray) and fitness.ndim == 1
                and fitness.dtype.kind in "fiu")

    def engine_label(self) -> str:
        """``"accelerated:<selection>+<crossover>+<mutation>"``, ``pygad`` for a step that fell
        back, ``mixed`` for one that did both; at most 64 characters."""
        if not self._accel_active:
            return "pygad:multi-objective"
        used = self._accel_used

        covered = {"selection": SELECTIONS, "crossover": CROSSOVERS + ("none",),
                   "mutation": ("random", "none")}

        def part(step: str, name) -> str:
            name = "none" if name is None else str(name)  # lowercase: the label's alphabet
            state = used.get(step)
            if name not in covered[step]:
                state = "pygad"  # an operator this engine never vectorises
            if state is None or state == "accelerated":
                return name
            return f"{name}={state}"

        selection = self.parent_selection_type if isinstance(self.parent_selection_type, str) \
            else "custom"
        crossover = self.crossover_type if isinstance(self.crossover_type, str) or \
            self.crossover_type is None else "custom"
        mutation = self.mutation_type if isinstance(self.mutation_type, str) or \
            self.mutation_type is None else "custom"
        label = "accelerated:" + "+".join((part("selection", selection),
                                           part("crossover", crossover),
                                           part("mutation", mutation)))
        if used.get("fitness") not in (None, "accelerated"):
            label += "+fitness=" + used["fitness"]
        return label[:64]

    # ------------------------------------------------------------------ lean run() loop

    lean_run = True  # False: every run() is stock PyGAD's loop (with the accelerated operators)
    _LEAN_CALLBACKS = ("on_fitness", "on_parents", "on_crossover", "on_mutation")
    _LEAN_STOPS = ("reach", "saturate", "time", "evaluations")

    def lean_run_covered(self) -> bool:
        """Whether ``run()`` takes the lean loop (else stock PyGAD's ``run()``)."""
        population = self.population
        stops = self.stop_criteria
        return bool(
            self.lean_run and self._accel_active and self.valid_parameters is True
            and self._base_ok()
            and not self.save_solutions and not self.save_best_solutions
            and self.parallel_processing is None and not getattr(self, "delay_after_gen", 0)
            and all(getattr(self, name, None) is None for name in self._LEAN_CALLBACKS)
            and isinstance(self.parent_selection_type, str)
            and self.parent_selection_type in SELECTIONS
            and isinstance(self.crossover_type, str) and self.crossover_type in CROSSOVERS
            and (self.mutation_type is None or (self.mutation_type == "random"
                                                and self._mutation_covered(population) is not None))
            and isinstance(population, np.ndarray) and population.ndim == 2
            and population.dtype == self._single_type()
            and (stops is None or all(c[0] in self._LEAN_STOPS for c in stops)))

    def run(self):
        if not self.lean_run_covered():
            return super().run()
        self._fitness_run_active = True
        self._saved_fitness_indexes = {}
        self._fitness_value_shape = None
        try:
            self._restore_history_generations()
            if type(self.best_solutions) is np.ndarray:
                self.best_solutions = self.best_solutions.tolist()
            if type(self.best_solutions_fitness) is np.ndarray:
                self.best_solutions_fitness = list(self.best_solutions_fitness)
            if type(self.solutions) is np.ndarray:
                self.solutions = self.solutions.tolist()
            if type(self.solutions_fitness) is np.ndarray:
                self.solutions_fitness = list(self.solutions_fitness)
            if self.on_start is not None:
                self.on_start(self)
            self.num_fitness_evaluations = 0
            import time as _time
            self.run_start_time = _time.monotonic()
            fitness = self.cal_pop_fitness()
            self.last_generation_fitness = fitness
            if not self._numeric_fitness(fitness):
                # Multi-objective (or odd) fitness: stock's loop from here, without evaluating
                # the initial population (or calling on_start) a second time.
                self._handover = (fitness, self.num_fitness_evaluations)
            else:
                self._lean_loop(fitness)
        except Exception as ex:
            self.logger.exception(ex)
            raise ex
        finally:
            if getattr(self, "_handover", None) is None:
                self._fitness_run_active = False
                self._shutdown_fitness_executor()
        if getattr(self, "_handover", None) is not None:
            on_start, self.on_start = self.on_start, None
            try:
                return super().run()  # cal_pop_fitness hands back the stored first evaluation
            finally:
                self.on_start = on_start
                self._handover = None

    @staticmethod
    def _numeric_fitness(fitness) -> bool:
        return (isinstance(fitness, np.ndarray) and fitness.ndim == 1 and fitness.shape[0] > 0
                and fitness.dtype.kind in "fiu"
                and not (fitness.dtype.kind == "f" and np.isnan(fitness).any()))

    def _lean_fused(self, space):
        """``(low, span, add, genes)`` when a generation's crossover and mutation can be one draw:
        ``single_point`` without ``crossover_probability``, random mutation of exactly one gene
        per offspring (float genes, no gene space, no constraint, one mutation range)."""
        constraints = self.gene_constraint
        count = self.mutation_num_genes
        low, high = self.random_mutation_min_val, self.random_mutation_max_val
        width = self._shape[1]
        if not (self.crossover_type == "single_point" and self.crossover_probability is None
                and self.mutation_type == "random" and space == ("none", None)
                and self.mutation_probability is None and isinstance(count, (int, np.integer))
                and int(count) == 1 and width > 2 and self._dtype is np.float64
                and not (constraints and any(c is not None for c in constraints))
                and type(low) in _SCALAR_TYPES and type(high) in _SCALAR_TYPES):
            return None
        low, high = sorted([low, high])
        return low, np.subtract(high, low), not self.mutation_by_replacement, width

    def _lean_fast_state(self) -> bool:
        population = self.population
        fitness = self.last_generation_fitness
        return (self._accel_active and isinstance(population, np.ndarray)
                and population.dtype == self._dtype and population.shape == self._shape
                and type(fitness) is np.ndarray and fitness.ndim == 1
                and fitness.shape[0] == self._shape[0] and fitness.dtype.kind in "fiu"
                # Our own evaluations are validated (no NaN); a callback may have replaced them.
                and not (self.on_generation is not None and fitness.dtype.kind == "f"
                         and _has_nan(fitness)))

    def _lean_loop(self, fitness) -> None:
        """Stock ``run()`` from the first evaluation on (single objective), with the steps inlined."""
        self._dtype = self._single_type()
        self._shape = self.population.shape
        _, best_fitness, _ = self.best_solution(pop_fitness=fitness)
        unchanged = 0
        if self.generations_completed != 0 and type(self.generations_completed) \
                in self.supported_int_types:
            first_gen = self.generations_completed
            last_gen = self.num_generations + self.generations_completed
        else:
            first_gen, last_gen = 0, self.num_generations
        selection = self.parent_selection_type
        crossover = self.crossover_type
        num_parents = int(self.num_parents_mating)
        keep_elitism, keep_parents = self.keep_elitism, self.keep_parents
        num_offspring = self.num_offspring
        rng = self._generator()
        stops = self.stop_criteria
        mutate = self.mutation_type is not None
        space = self._mutation_covered(self.population) if mutate else None
        numeric_kinds = ("f", "i", "u")
        fused = self._lean_fused(space)
        genes = np.arange(self._shape[1])
        noted = False
        best_list = self.best_solutions_fitness
        best_generations = self.best_solutions_generations
        for generation in range(first_gen, last_gen):
            # run_loop_head without on_fitness / save_solutions
            best_list.append(np.copy(best_fitness) if isinstance(best_fitness, np.ndarray)
                             else best_fitness)
            best_generations.append(self.generations_completed)
            previous_best = best_list[-1]
            if self._lean_fast_state():
                if not noted:  # once: these steps always run accelerated in this branch
                    self._note("selection", True)
                    self._note("crossover", True)
                    if mutate:
                        self._note("mutation", True)
                    noted = True
                fitness = self.last_generation_fitness
                population = self.population
                order = fitness.argsort(kind="stable")[::-1]
                if selection == "sss":
                    parent_indices = order[:num_parents].copy()
                else:
                    parent_indices = self._select(selection, fitness, num_parents)[1]
                parents = population.take(parent_indices, axis=0)  # = population[parent_indices]
                self.last_generation_parents = parents
                self.last_generation_parents_indices = parent_indices
                if fused is not None:
                    # single_point crossover + random mutation of one float gene per offspring,
                    # inlined: the same draws, in the same order, as ops.crossover_offspring then
                    # _random_mutation.
                    low, span, add, width = fused
                    k = num_offspring
                    point = ops.uniform_index(width, k, rng)
                    first, second = ops.mates(k, num_parents, None, rng)
                    offspring = np.where(genes >= point[:, None], parents.take(second, axis=0),
                                         parents.take(first, axis=0))
                    self.last_generation_offspring_crossover = offspring
                    # offspring[rows, cols] for one gene per row, as flat positions of the
                    # (fresh, C-contiguous) offspring array
                    cells = ops.row_starts(k, width) + rng.integers(0, width, size=k)
                    values = rng.random(k)
                    values *= span
                    values += low
                    flat = offspring.reshape(-1)
                    if add:
                        values += flat.take(cells)
                    flat.put(cells, values)
                else:
                    offspring = ops.crossover_offspring(crossover, parents, num_offspring,
                                                        self.crossover_probability, rng)
                    self.last_generation_offspring_crossover = offspring
                    if mutate:
                        self._note("mutation", True)
                        offspring = self._random_mutation(offspring, space)
                self.last_generation_offspring_mutation = offspring
                # run_update_population
                if keep_elitism == 0:
                    if keep_parents == 0:
                        self.population = population = offspring
                    elif keep_parents == -1:
                        population[:parents.shape[0], :] = parents
                        population[parents.shape[0]:, :] = offspring
                    else:
                        kept = population[order[:keep_parents]]
                        population[:kept.shape[0], :] = kept
                        population[kept.shape[0]:, :] = offspring
                else:
                    elite_indices = order[:keep_elitism].copy()
                    elites = population.take(elite_indices, axis=0)
                    self.last_generation_elitism = elites
                    self.last_generation_elitism_indices = elite_indices
                    population[:elites.shape[0], :] = elites
                    population[elites.shape[0]:, :] = offspring
                self.generations_completed = generation + 1
                self.previous_generation_fitness = fitness.copy()
                fitness = self._lean_fitness(
                    population, selection == "sss" and 0 < keep_elitism <= num_parents
                    and keep_parents != 0)
                self.last_generation_fitness = fitness
                if type(fitness) is np.ndarray and fitness.ndim == 1 \
                        and fitness.dtype.kind in numeric_kinds:
                    # Validated: no NaN (stock's best_solution is an argmax here too).
                    best_fitness = fitness[int(fitness.argmax())]
                else:
                    best_fitness = self.best_solution(pop_fitness=fitness)[1]
            else:
                self.run_select_parents()
                self.run_crossover()
                self.run_mutation()
                self.run_update_population()
                self.generations_completed = generation + 1
                self.previous_generation_fitness = self.last_generation_fitness.copy()
                self.last_generation_fitness = self.cal_pop_fitness()
                best_fitness = self.best_solution(pop_fitness=self.last_generation_fitness)[1]
            if type(best_fitness) is type(previous_best) and type(best_fitness) in _SCALAR_TYPES:
                same = previous_best == best_fitness  # array_equal of two numeric scalars
            else:
                same = np.array_equal(previous_best, best_fitness)
            if same:
                unchanged += 1
            else:
                unchanged = 0
            if self.on_generation is not None:
                answer = self.on_generation(self)
                self._saved_fitness_indexes = {}
                if type(answer) is str and answer.lower() == "stop":
                    break
            if stops is not None and self._lean_stop(stops, unchanged):
                break
        self.run_select_parents(call_on_parents=False)
        if self.keep_elitism > 0:
            self.last_generation_elitism, self.last_generation_elitism_indices = \
                self.steady_state_selection(self.last_generation_fitness,
                                            num_parents=self.keep_elitism)
        _, best_fitness, _ = self.best_solution(pop_fitness=self.last_generation_fitness)
        self.best_solutions_fitness.append(np.copy(best_fitness)
                                           if isinstance(best_fitness, np.ndarray) else best_fitness)
        self.best_solutions_generations.append(self.generations_completed)
        self._update_best_solution_generation()
        self.run_completed = True
        if self.on_stop is not None:
            self.on_stop(self, self.last_generation_fitness)
        self.best_solutions = np.array(self.best_solutions, dtype=self.population.dtype)
        self.previous_generation_fitness = self.last_generation_fitness.copy()

    def _lean_stop(self, stops, unchanged: int) -> bool:
        """Stock's stop rules for a single-objective fitness (the lean loop's only case)."""
        fitness = self.last_generation_fitness
        for criterion in stops:
            kind = criterion[0]
            if kind == "reach":
                if type(fitness[0]) in self.supported_int_float_types:
                    if max(fitness) >= criterion[1]:
                        return True
                else:
                    raise TypeError("lean loop: a multi-objective fitness appeared mid-run")
            elif kind == "saturate":
                if unchanged >= criterion[1]:
                    return True
            elif kind == "time":
                import time as _time
                if _time.monotonic() - self.run_start_time >= float(criterion[1]):
                    return True
            elif kind == "evaluations":
                if self.num_fitness_evaluations >= int(criterion[1]):
                    return True
        return False

    def _lean_fitness(self, population: np.ndarray, elites_in_parents: bool) -> np.ndarray:
        """``cal_pop_fitness`` in the lean loop: the cache sources are the arrays just stored in
        ``last_generation_elitism``/``last_generation_parents``; rows are matched by a float
        weighted row sum (one reduction for the population, one per source array), equal sums
        then compared exactly, first matching source row wins (elites before parents), as stock.

        ``elites_in_parents``: sss selection with ``0 < keep_elitism <= num_parents_mating`` and
        ``keep_parents != 0``, so the elites are the first parents (same indices, same rows,
        copied from the same population): matching the parents alone, the first matching parent
        ``j`` is elite ``j`` when ``j < keep_elitism`` — the same value stock finds."""
        if not self._accel_active:
            return self.cal_pop_fitness()
        self._note("fitness", True)
        if elites_in_parents:
            parents = self.last_generation_parents
            weights = _weights(population.shape[1])
            with np.errstate(all="ignore"):
                sums = np.add.reduce(population * weights, axis=1)
                parent_sums = np.add.reduce(parents * weights, axis=1)
                total = np.add.reduce(sums) + np.add.reduce(parent_sums)
            if total - total == 0:  # finite: no NaN or inf in either
                previous = self.previous_generation_fitness
                indices = self.last_generation_parents_indices
                found: dict = {}
                first, second = (sums[:, None] == parent_sums).nonzero()
                for index, position in zip(first.tolist(), second.tolist()):
                    if index not in found and (population[index] == parents[position]).all():
                        found[index] = previous[indices[position]]
                try:
                    return self._fast_pop_fitness(population, found)
                except Exception as ex:
                    self.logger.exception(ex)
                    raise
        sources = []
        if self.keep_elitism > 0 and self.last_generation_elitism is not None:
            sources.append((self.last_generation_elitism, self.last_generation_elitism_indices))
        if self.keep_parents != 0 and self.last_generation_parents is not None:
            sources.append((self.last_generation_parents, self.last_generation_parents_indices))
        found: dict = {}
        if sources:
            for rows, _ in sources:
                if type(rows) is not np.ndarray or rows.dtype != population.dtype \
                        or rows.ndim != 2 or rows.shape[1] != population.shape[1]:
                    return self.cal_pop_fitness()
            weights = _weights(population.shape[1])
            with np.errstate(all="ignore"):
                sums = (population * weights).sum(axis=1)
                source_sums = [(rows * weights).sum(axis=1) for rows, _ in sources]
            if not (np.isfinite(sums).all() and all(np.isfinite(s).all() for s in source_sums)):
                return self.cal_pop_fitness()
            previous = self.previous_generation_fitness
            all_sums = source_sums[0] if len(sources) == 1 else np.concatenate(source_sums)
            equal = sums[:, None] == all_sums[None, :]
            for index in np.flatnonzero(equal.any(axis=1)).tolist():
                row = population[index]
                offset = 0
                for (rows, indices), part in zip(sources, source_sums):
                    hit = None
                    for position in np.flatnonzero(equal[index, offset:offset + part.shape[0]]):
                        if (rows[position] == row).all():
                            hit = position
                            break
                    offset += part.shape[0]
                    if hit is not None:
                        found[index] = previous[indices[hit]]
                        break
        try:
            return self._fast_pop_fitness(population, found)
        except Exception as ex:
            self.logger.exception(ex)
            raise

    # ------------------------------------------------------------------ fitness

    def cal_pop_fitness(self):
        handover = getattr(self, "_handover", None)
        if handover is not None and handover[0] is not None:
            # super().run() after the lean run() found a multi-objective first evaluation.
            fitness, evaluations = handover
            self._handover = (None, 0)
            self.num_fitness_evaluations += evaluations
            return fitness
        population = self.population
        if (not self._accel_active or not self.valid_parameters or self.save_solutions
                or self.save_best_solutions or self.parallel_processing is not None
                or not isinstance(population, np.ndarray) or population.ndim != 2
                or population.dtype.kind not in "fiu"):
            self._note("fitness", False)
            fitness = super().cal_pop_fitness()
        else:
            self._note("fitness", True)
            try:
                fitness = self._fast_pop_fitness(population)
            except Exception as ex:
                self.logger.exception(ex)
                raise
        if self._accel_active and not self._single_objective(fitness) and len(fitness):
            if fitness.dtype != object or fitness.ndim != 1:
                self._accel_active = False  # multi-objective: stock PyGAD from now on
        return fitness

    def _cache_lookup(self, population: np.ndarray, pop_fitness: list) -> list[int] | None:
        """Fill ``pop_fitness`` from PyGAD's cache rules; return the indices still to evaluate
        (None: let stock PyGAD do the whole evaluation).

        Stock: a row equal (``tuple`` equality) to one of the last elites (when ``keep_elitism >
        0``) or else one of the last parents (when ``keep_parents != 0``) reuses that solution's
        previous fitness, first match wins.  Here rows are matched by a vectorised hash, then
        compared exactly."""
        n = population.shape[0]
        sources = []
        if self.keep_elitism > 0 and self.last_generation_elitism is not None:
            sources.append((self.last_generation_elitism, self.last_generation_elitism_indices))
        if self.keep_parents != 0 and self.last_generation_parents is not None:
            sources.append((self.last_generation_parents, self.last_generation_parents_indices))
        if not sources:
            return list(range(n))
        dtype = population.dtype
        found: dict[int, object] = {}
        previous = self.previous_generation_fitness
        checked = []
        for rows, indices in sources:
            rows = np.asarray(rows)
            if rows.dtype != dtype or rows.ndim != 2 or rows.shape[1] != population.shape[1]:
                return None
            checked.append((rows, indices))
        if n * sum(rows.shape[0] for rows, _ in checked) * population.shape[1] <= _BROADCAST_MAX:
            # Small: compare every row with every source row at once (``==`` is tuple equality
            # here: -0.0 equals 0.0, NaN equals nothing); first matching source row wins.
            every = checked[0][0] if len(checked) == 1 else \
                np.concatenate([rows for rows, _ in checked])
            equal = _equal_rows(population, every)
            hits = np.flatnonzero(equal.any(axis=1))
            for index in hits.tolist():
                row = equal[index]
                offset = 0
                for rows, indices in checked:
                    end = offset + rows.shape[0]
                    part = row[offset:end]
                    if part.any():
                        found[index] = previous[indices[int(part.argmax())]]
                        break
                    offset = end
            return self._cached_values(found, pop_fitness, n)
        pop_bits, pop_hash = _row_hash(population)
        for rows, indices in checked:
            src_bits, src_hash = _row_hash(rows)
            hashes = set(src_hash.tolist())
            for index, value in enumerate(pop_hash.tolist()):
                if value not in hashes or index in found or value is None:
                    continue
                for position in np.nonzero(src_hash == value)[0]:
                    if np.array_equal(src_bits[position], pop_bits[index]):
                        found[index] = previous[indices[position]]
                        break
        return self._cached_values(found, pop_fitness, n)

    def _cached_values(self, found: dict, pop_fitness: list, n: int) -> list[int]:
        """Validate and store the reused fitness values; the indices still to evaluate."""
        validate = self._validate_fitness_value
        for index in sorted(found):  # population order, as stock
            value = found[index]
            if type(value) not in _SCALAR_TYPES or value != value \
                    or self._fitness_value_shape not in (None, ()):
                value = validate(value, "cached fitness")
            else:
                self._fitness_value_shape = ()
            pop_fitness[index] = value
        missing = list(range(n))
        for index in sorted(found, reverse=True):
            del missing[index]
        return missing

    def _fast_pop_fitness(self, population: np.ndarray, found: dict | None = None) -> np.ndarray:
        """Stock's ``cal_pop_fitness`` for a numeric population; ``found`` (lean loop): the cache
        hits already found (population index → previous fitness), instead of ``_cache_lookup``."""
        if type(self.best_solutions) is np.ndarray:
            self.best_solutions = self.best_solutions.tolist()
        if not getattr(self, "_fitness_run_active", False):
            self._fitness_value_shape = None
        n = population.shape[0]
        pop_fitness = [None] * n
        cached = None
        if found is None:
            missing = self._cache_lookup(population, pop_fitness)
            if missing is None:
                return super().cal_pop_fitness()
        else:
            missing = self._cached_values(found, pop_fitness, n)
            cached = sorted(found)
        if missing:
            fitness_func = self.fitness_func
            validate = self._validate_fitness_value
            batch_size = self.fitness_batch_size
            if batch_size in (None, 1):
                for index in missing:
                    value = fitness_func(self, population[index], index)
                    self.num_fitness_evaluations += 1
                    if type(value) not in _SCALAR_TYPES or value != value \
                            or self._fitness_value_shape not in (None, ()):
                        value = validate(value, f"fitness_func for solution {index}")
                    else:
                        self._fitness_value_shape = ()
                    pop_fitness[index] = value
            else:
                arrays = []  # (group, float64 result) taken without per-value work
                for start in range(0, len(missing), batch_size):
                    group = missing[start:start + batch_size]
                    if group[-1] - group[0] == len(group) - 1:  # a run of rows: a slice copy
                        rows = population[group[0]:group[-1] + 1].copy()
                    else:
                        rows = population[group, :]
                    result = fitness_func(self, rows, group)
                    self.num_fitness_evaluations += len(group)
                    if self._take_batch(group, result, pop_fitness):
                        arrays.append((group, result))
                if arrays:
                    # What np.array(pop_fitness) gives when a float64 value is among plain
                    # float/int64 ones: a float64 array.  Built directly.
                    if cached is None:
                        cached = [index for index in range(n) if pop_fitness[index] is not None]
                    if all(type(pop_fitness[index]) in _PLAIN_NUMBERS for index in cached):
                        out = np.empty(n, dtype=np.float64)
                        for index in cached:
                            out[index] = pop_fitness[index]
                        for group, result in arrays:
                            if group[-1] - group[0] == len(group) - 1:
                                out[group[0]:group[-1] + 1] = result
                            else:
                                out[group] = result
                        return out
                    for group, result in arrays:
                        for index, value in zip(group, result):
                            pop_fitness[index] = value
        return np.array(pop_fitness)

    def _take_batch(self, group: list[int], result, pop_fitness: list) -> bool:
        """PyGAD's checks of one batch result, vectorised for a plain numeric array.  True: a
        checked float64 array the caller places itself; False: values stored in ``pop_fitness``."""
        if type(result) not in (list, tuple, np.ndarray):
            raise TypeError("Expected to receive a list, tuple, or numpy.ndarray from the fitness "
                            f"function but the value ({result}) of type {type(result)}.")
        if isinstance(result, np.ndarray) and result.ndim == 0:
            raise ValueError("A batched fitness_func must return one fitness value per solution, "
                             "not a scalar array.")
        if len(result) != len(group):
            raise ValueError("There is a mismatch between the number of solutions passed to the "
                             f"fitness function ({len(group)}) and the number of fitness values "
                             f"returned ({len(result)}). They must match.")
        if (isinstance(result, np.ndarray) and result.ndim == 1 and result.dtype.kind in "fiu"
                and self._fitness_value_shape in (None, ())
                and not (result.dtype.kind == "f" and _has_nan(result))):
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

    def best_solution(self, pop_fitness=None):
        if (self._accel_active and isinstance(pop_fitness, np.ndarray) and pop_fitness.ndim == 1
                and pop_fitness.dtype.kind in "fiu" and len(pop_fitness) == len(self.population)
                and len(pop_fitness) and not (pop_fitness.dtype.kind == "f"
                                              and np.isnan(pop_fitness).any())):
            index = int(np.argmax(pop_fitness))
            return self.population[index, :].copy(), pop_fitness[index], index
        return super().best_solution(pop_fitness=pop_fitness)

    # ------------------------------------------------------------------ selection

    def _select(self, kind: str, fitness, num_parents: int):
        if not (self._accel_active and self._single_objective(fitness)
                and not (fitness.dtype.kind == "f" and np.isnan(fitness).any())
                and isinstance(self.population, np.ndarray)
                and fitness.shape[0] == self.population.shape[0]):
            return None
        probabilities = None
        if kind in ("rws", "sus"):
            probabilities = self.fitness_selection_probabilities(fitness)  # stock rules + errors
        indices = ops.select_parents(kind, fitness, int(num_parents), self._generator(),
                                     k_tournament=int(self.K_tournament),
                                     probabilities=probabilities)
        parents = self.initialize_parents_array((int(num_parents), self.population.shape[1]))
        parents[:, :] = self.population[indices, :]
        return parents, indices

    def steady_state_selection(self, fitness, num_parents):
        chosen = self._select("sss", fitness, num_parents)
        if chosen is None:
            return super().steady_state_selection(fitness, num_parents)
        return chosen

    def _selection(self, kind: str, fitness, num_parents, stock):
        chosen = self._select(kind, fitness, num_parents)
        self._note("selection", chosen is not None)
        return stock(fitness, num_parents) if chosen is None else chosen

    def tournament_selection(self, fitness, num_parents):
        return self._selection("tournament", fitness, num_parents, super().tournament_selection)

    def random_selection(self, fitness, num_parents):
        return self._selection("random", fitness, num_parents, super().random_selection)

    def rank_selection(self, fitness, num_parents):
        return self._selection("rank", fitness, num_parents, super().rank_selection)

    def roulette_wheel_selection(self, fitness, num_parents):
        return self._selection("rws", fitness, num_parents, super().roulette_wheel_selection)

    def stochastic_universal_selection(self, fitness, num_parents):
        return self._selection("sus", fitness, num_parents,
                               super().stochastic_universal_selection)

    def run_select_parents(self, call_on_parents=True):
        if self.parent_selection_type == "sss" and call_on_parents:
            # steady_state_selection also serves elitism; note the parent step here only.
            self._note("selection", self._accel_active)
        return super().run_select_parents(call_on_parents=call_on_parents)

    # ------------------------------------------------------------------ crossover

    def _crossover(self, kind: str, parents, offspring_size, stock):
        if not (self._base_ok() and isinstance(parents, np.ndarray) and parents.ndim == 2
                and parents.dtype.kind in "fiu" and parents.shape[0] > 0):
            self._note("crossover", False)
            return stock(parents, offspring_size)
        self._note("crossover", True)
        offspring = self.initialize_parents_array(offspring_size)
        offspring[:, :] = ops.crossover_offspring(kind, parents, int(offspring_size[0]),
                                                  self.crossover_probability, self._generator())
        return offspring

    def single_point_crossover(self, parents, offspring_size):
        return self._crossover("single_point", parents, offspring_size,
                               super().single_point_crossover)

    def two_points_crossover(self, parents, offspring_size):
        return self._crossover("two_points", parents, offspring_size,
                               super().two_points_crossover)

    def uniform_crossover(self, parents, offspring_size):
        return self._crossover("uniform", parents, offspring_size, super().uniform_crossover)

    def scattered_crossover(self, parents, offspring_size):
        return self._crossover("scattered", parents, offspring_size, super().scattered_crossover)

    # ------------------------------------------------------------------ mutation

    def _mutation_space(self):
        """``("none", None)``, ``("list", sorted converted values)``, ``("dict", (low, high))``,
        or None when the gene space is not one the fast mutation covers."""
        space = self.gene_space
        if space is None:
            return ("none", None)
        cache = self._space_cache
        if cache is not None and cache[0] is space:
            return cache[1]
        result = None
        if not self.gene_space_nested:
            if type(space) is dict and "step" not in space:
                result = ("dict", (space["low"], space["high"]))
            elif type(space) in (list, tuple, np.ndarray) and len(space) and \
                    all(type(v) in _SCALAR_TYPES for v in space):
                values = np.unique(self.change_gene_dtype_and_round(0, list(space)))
                if values.dtype.kind in "fiu" and not (values.dtype.kind == "f"
                                                       and np.isnan(values).any()):
                    result = ("list", values)
        self._space_cache = (space, result)
        return result

    def _mutation_covered(self, offspring) -> tuple | None:
        if not (self._base_ok() and isinstance(offspring, np.ndarray) and offspring.ndim == 2
                and offspring.dtype.kind in "fiu"):
            return None
        if self.mutation_probability is None and not isinstance(self.mutation_num_genes,
                                                                (int, np.integer)):
            return None
        space = self._mutation_space()
        if space is None:
            return None
        constraints = self.gene_constraint
        if constraints and any(c is not None for c in constraints) and space[0] != "none":
            return None
        return space

    def random_mutation(self, offspring):
        space = self._mutation_covered(offspring)
        if space is None:
            self._note("mutation", False)
            return super().random_mutation(offspring)
        self._note("mutation", True)
        return self._random_mutation(offspring, space)

    def _random_mutation(self, offspring, space):
        """The accelerated random mutation, in place (``space`` from ``_mutation_covered``)."""
        rng = self._generator()
        rows_n, genes_n = offspring.shape
        if rows_n == 0 or genes_n == 0:
            return offspring
        if self.mutation_probability is None:
            rows, cols = ops.choose_gene_positions(rows_n, genes_n, self.mutation_num_genes, rng)
        else:
            rows, cols = np.nonzero(rng.random((rows_n, genes_n)) < self.mutation_probability)
        constraints = self.gene_constraint
        constrained = None
        if constraints and any(c is not None for c in constraints):
            constrained = np.array([c is not None for c in constraints], dtype=bool)
        if rows.shape[0] == 0:
            return offspring
        current = offspring[rows, cols]
        values = self._mutated_values(space, current, cols, rng)
        if constrained is None:
            offspring[rows, cols] = values
            return offspring
        # Rows with a constrained gene to mutate go gene by gene in ascending order, so each
        # constraint sees the solution as already changed, as in PyGAD.
        hit = constrained[cols]
        slow_rows = np.zeros(rows_n, dtype=bool)
        slow_rows[rows[hit]] = True
        fast = ~slow_rows[rows]
        offspring[rows[fast], cols[fast]] = values[fast]
        for position in np.nonzero(~fast)[0]:
            row, gene = rows[position], cols[position]
            if constrained[gene]:
                offspring[row, gene] = self._constrained_value(offspring[row], int(gene))
            else:
                offspring[row, gene] = values[position]
        return offspring

    def _mutation_ranges(self, cols: np.ndarray):
        low, high = self.random_mutation_min_val, self.random_mutation_max_val
        if type(low) in _SCALAR_TYPES:
            low, high = sorted([low, high])
            return low, high
        bounds = np.array([sorted([lo, hi]) for lo, hi in zip(low, high)], dtype=np.float64)
        return bounds[cols, 0], bounds[cols, 1]

    def _mutated_values(self, space, current: np.ndarray, cols: np.ndarray,
                        rng: np.random.Generator) -> np.ndarray:
        kind, data = space
        dtype = self._single_type()
        k = current.shape[0]
        if kind == "list":
            return ops.pick_other(data, current, rng)
        if kind == "dict":
            low, high = data
            if np.dtype(dtype).kind == "f":
                if low == high:
                    return np.full(k, low, dtype=dtype)
                values = rng.uniform(low, high, size=k)
                values[values >= high] = low  # float rounding; PyGAD falls back to low too
                return values
            first, last = self._continuous_gene_space_integer_bounds({"low": low, "high": high})
            if last < first:
                return current.copy()
            return rng.integers(first, last + 1, size=k, dtype=np.int64)
        # No gene space: PyGAD's random mutation.
        replace = self.mutation_by_replacement
        if np.dtype(dtype).kind == "f":
            low, high = self._mutation_ranges(cols)
            values = rng.random(k)
            values *= np.subtract(high, low)
            values += low
            if not replace:
                values += current
            return values
        # Integer genes: offsets first + i*step, i uniform in range(count), per gene range.
        low, high = self.random_mutation_min_val, self.random_mutation_max_val
        if type(low) in _SCALAR_TYPES:
            count, first, step = ops.finite_offsets(*sorted([low, high]))
            offsets = first + rng.integers(0, max(count, 1), size=k) * step
        else:
            table = [ops.finite_offsets(*sorted([lo, hi])) for lo, hi in zip(low, high)]
            counts = np.array([max(t[0], 1) for t in table])
            firsts = np.array([t[1] for t in table], dtype=object)
            steps = np.array([t[2] for t in table], dtype=object)
            index = np.floor(rng.random(k) * counts[cols]).astype(np.int64)
            offsets = (firsts[cols] + index * steps[cols]).astype(np.float64) \
                if any(isinstance(f, float) for f in firsts) else \
                (firsts[cols] + index * steps[cols]).astype(np.int64)
        values = offsets if replace else current + offsets
        return np.asarray(values).astype(np.int64)

    # ------------------------------------------------------------------ constraints

    def _constraint_candidates(self, gene: int, value) -> np.ndarray:
        """What PyGAD passes to a gene constraint during random mutation without a gene space:
        ``sample_size`` values of the mutation range (added to the gene unless by replacement),
        converted, sorted and unique.

        Float genes: a sorted uniform base (``ops.sorted_uniform``, drawn afresh every
        ``_base_uses(size)`` calls) turned by a fresh uniform shift per call (``ops.rotated_uniform``):
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
                values = ops.rotated_uniform(scaled, rng.random(), start, width)
                # Spacings wider than the rounding of these values: no two candidates are equal.
                if gap * width > 2.0 * (math.ulp(max(abs(start), abs(start + width))) + math.ulp(width)):
                    return values
            if values.shape[0] > 1:
                same = values[1:] == values[:-1]
                if same.any():
                    values = values[np.concatenate(([True], ~same))]
            return values
        count, first, step = ops.finite_offsets(low, high)
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
            base, left = ops.sorted_uniform(0.0, 1.0, size, rng), _base_uses(size)
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
            valid = type(accepted) in (list, np.ndarray) and ops.is_subset_of_sorted(accepted, candidates)
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
        answer = ops.is_subset(selected_values, values)
        if answer is None:
            return super().validate_gene_constraint_callable_output(selected_values, values)
        return answer


def _base_uses(size: int) -> int:
    """How many constraint calls share one base of ``size`` candidates (each turned by its own
    shift): one (a fresh i.i.d. sample per call, as in stock) for small samples, where drawing is
    cheap and a shared lattice of few points would show in the search; up to 16 for dense ones
    (``sample_size`` ≥ 10,000), whose draw costs more than the rest of the engine's work per call."""
    return max(1, min(16, size // 625))


_HASH_WEIGHTS: dict[int, np.ndarray] = {}
_FLOAT_WEIGHTS: dict[int, np.ndarray] = {}


def _has_nan(values: np.ndarray) -> bool:
    """Whether a float array holds a NaN (one reduction; an inf makes it look at each value)."""
    smallest = np.minimum.reduce(values)  # NaN propagates, no warning
    return bool(smallest != smallest)


def _weights(width: int) -> np.ndarray:
    """Fixed float weights of the row sums used to find candidate equal rows."""
    weights = _FLOAT_WEIGHTS.get(width)
    if weights is None:
        weights = _FLOAT_WEIGHTS[width] = np.random.default_rng(width).uniform(0.5, 1.5, width)
    return weights


def _equal_rows(rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``equal[i, j]``: row ``i`` of ``rows`` equals row ``j`` of ``others`` (``==`` per gene, all
    genes: -0.0 equals 0.0, NaN equals nothing), for small arrays.  Pairs are found by a float
    weighted row sum (the same row always gives the same sum, computed the same way) and then
    compared exactly; a non-finite sum (NaN, inf) falls back to comparing everything."""
    weights = _weights(rows.shape[1])
    with np.errstate(all="ignore"):
        row_sums = (rows * weights).sum(axis=1)
        other_sums = (others * weights).sum(axis=1)
    if not (np.isfinite(row_sums).all() and np.isfinite(other_sums).all()):
        return (rows[:, None, :] == others[None, :, :]).all(axis=2)
    equal = np.zeros((rows.shape[0], others.shape[0]), dtype=bool)
    first, second = np.nonzero(row_sums[:, None] == other_sums[None, :])
    if first.shape[0]:
        same = (rows[first] == others[second]).all(axis=1)
        equal[first[same], second[same]] = True
    return equal
_BROADCAST_MAX = 1 << 16  # rows x source rows x genes compared at once by the fitness cache


def _row_hash(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bit patterns, one uint64 hash per row) for numeric rows, with ``tuple`` equality
    semantics: ``-0.0`` hashes and compares as ``0.0``; a row holding NaN gets a hash no other
    row has (stock compares fresh NaN objects, which are never equal)."""
    if rows.dtype.kind == "f":
        rows = rows + 0.0 if rows.dtype == np.float64 else rows.astype(np.float64) + 0.0
        bits = rows.view(np.uint64)  # (+ 0.0 turned -0.0 into 0.0)
    else:
        bits = np.ascontiguousarray(rows).astype(np.int64, copy=False).view(np.uint64)
    width = bits.shape[1]
    weights = _HASH_WEIGHTS.get(width)
    if weights is None:
        weights = np.random.default_rng(width).integers(1, 2**63, size=width, dtype=np.uint64) | 1
        _HASH_WEIGHTS[width] = weights
    hashes = (bits * weights).sum(axis=1, dtype=np.uint64)  # wraps silently (integers)
    if rows.dtype.kind == "f" and not (rows == rows).all():
        nan_rows = np.isnan(rows).any(axis=1)
        if nan_rows.any():
            hashes = hashes.astype(object)
            hashes[nan_rows] = None
    return bits, hashes
