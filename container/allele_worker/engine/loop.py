"""The run loop (PyGAD's ``GAEngine.run``): ``LeanLoop.run()`` is stock's loop for the configurations
whose steps are all vectorised (``lean_run_covered()``: no ``on_fitness``/``on_parents``/
``on_crossover``/``on_mutation``, no saved solutions, no delay, stop criteria ``reach``/``saturate``/
``time``/``evaluations``), else stock's ``run()`` with the accelerated operators.  It calls the same
operators as stock's loop does (``Selection``, ``crossover_offspring``, ``Mutation``, ``Fitness``), so
both loops make the same draws; what it saves is stock's per-step re-validation of arrays it built
itself, one sort per generation for the parents and the elites, and a fitness cache matched against
the arrays just selected.  A multi-objective first evaluation hands the run to stock's loop without
evaluating twice."""

from __future__ import annotations

import time
from typing import Any, TypeAlias

import numpy as np

from .base import SCALAR_TYPES, FitnessValues, StorageType, has_nan
from .crossover import CROSSOVERS, crossover_offspring
from .resumable import LoopState, Resumable, boundary
from .selection import SELECTIONS, sss_order

__all__ = ["LeanLoop"]

StopCriteria: TypeAlias = list[list[Any]]  # PyGAD's normalised stop_criteria: [kind, value] pairs


class LeanLoop(Resumable):
    """``run()``: stock's loop, lean where every step is vectorised; both loops resumable
    (resumable.py: the checkpoint hook at each generation boundary, ``resume_run``)."""

    lean_run = True  # False: every run() is stock PyGAD's loop (with the accelerated operators)
    _LEAN_CALLBACKS = ("on_fitness", "on_parents", "on_crossover", "on_mutation")
    _LEAN_STOPS = ("reach", "saturate", "time", "evaluations")
    _dtype: StorageType | None  # the population's storage dtype for the lean loop's run
    _shape: tuple[int, ...]  # the population's shape for the lean loop's run

    def lean_run_covered(self) -> bool:
        """Whether ``run()`` takes the lean loop (else stock PyGAD's ``run()``)."""
        population = self.population
        stops = self.stop_criteria
        return bool(
            self.lean_run
            and self._accel_active
            and self.valid_parameters is True
            and self._base_ok()
            and not self.save_solutions
            and not self.save_best_solutions
            and not getattr(self, "delay_after_gen", 0)
            and all(getattr(self, name, None) is None for name in self._LEAN_CALLBACKS)
            and isinstance(self.parent_selection_type, str)
            and self.parent_selection_type in SELECTIONS
            and isinstance(self.crossover_type, str)
            and self.crossover_type in CROSSOVERS
            and (
                self.mutation_type is None
                or (self.mutation_type == "random" and self._mutation_covered(population) is not None)
            )
            and isinstance(population, np.ndarray)
            and population.ndim == 2
            and population.dtype == self._single_type()
            and (stops is None or all(c[0] in self._LEAN_STOPS for c in stops))
        )

    def run(self) -> None:
        resume = self._resume
        if resume is not None and resume.loop == "lean":
            self._resume_lean(resume)
            return
        if resume is not None or not self.lean_run_covered():
            super().run()  # stock's loop (resumable.stock_loop)
            return
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
            self.run_start_time = time.monotonic()
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
                super().run()  # cal_pop_fitness hands back the stored first evaluation
            finally:
                self.on_start = on_start
                self._handover = None

    def _resume_lean(self, resume: LoopState) -> None:
        """The lean loop from a checkpoint it took (the GA's attributes restored)."""
        self._fitness_run_active = True
        self._saved_fitness_indexes = {}
        self._fitness_value_shape = None
        try:
            self.run_start_time = time.monotonic() - resume.run_seconds
            self._lean_loop(self.last_generation_fitness, resume)
        except Exception as ex:
            self.logger.exception(ex)
            raise ex
        finally:
            self._fitness_run_active = False
            self._shutdown_fitness_executor()

    @staticmethod
    def _numeric_fitness(fitness: object) -> bool:
        return (
            isinstance(fitness, np.ndarray)
            and fitness.ndim == 1
            and fitness.shape[0] > 0
            and fitness.dtype.kind in "fiu"
            and not (fitness.dtype.kind == "f" and np.isnan(fitness).any())
        )

    def _lean_fast_state(self) -> bool:
        population = self.population
        fitness = self.last_generation_fitness
        return bool(
            self._accel_active
            and isinstance(population, np.ndarray)
            and population.dtype == self._dtype
            and population.shape == self._shape
            and type(fitness) is np.ndarray
            and fitness.ndim == 1
            and fitness.shape[0] == self._shape[0]
            and fitness.dtype.kind in "fiu"
            # Our own evaluations are validated (no NaN); a callback may have replaced them.
            and not (self.on_generation is not None and fitness.dtype.kind == "f" and has_nan(fitness))
        )

    def _lean_loop(self, fitness: FitnessValues, resume: LoopState | None = None) -> None:
        """Stock ``run()`` from the first evaluation on (single objective): the same operators, without
        stock's per-step checks of the arrays this loop built itself; from ``resume``'s generation
        when given."""
        self._dtype = self._single_type()
        self._shape = self.population.shape
        noted = False
        if resume is not None:
            best_fitness, unchanged = resume.best_fitness, resume.unchanged
            first_gen, last_gen, noted = resume.next_generation, resume.last_generation, resume.noted
        else:
            _, best_fitness, _ = self.best_solution(pop_fitness=fitness)
            unchanged = 0
            if self.generations_completed != 0 and type(self.generations_completed) in self.supported_int_types:
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
        best_list = self.best_solutions_fitness
        best_generations = self.best_solutions_generations
        for generation in range(first_gen, last_gen):
            # run_loop_head without on_fitness / save_solutions
            best_list.append(np.copy(best_fitness) if isinstance(best_fitness, np.ndarray) else best_fitness)
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
                # One sort serves the parents (sss, tournament, rank) and the elites.
                order = sss_order(fitness)
                parent_indices = self._parent_indices(selection, fitness, num_parents, order)
                parents = population.take(parent_indices, axis=0)  # = population[parent_indices]
                self.last_generation_parents = parents
                self.last_generation_parents_indices = parent_indices
                offspring = crossover_offspring(crossover, parents, num_offspring, self.crossover_probability, rng)
                self.last_generation_offspring_crossover = offspring
                if mutate:
                    offspring = self._random_mutation(offspring, space)
                self.last_generation_offspring_mutation = offspring
                # run_update_population
                if keep_elitism == 0:
                    if keep_parents == 0:
                        self.population = population = offspring
                    elif keep_parents == -1:
                        population[: parents.shape[0], :] = parents
                        population[parents.shape[0] :, :] = offspring
                    else:
                        kept = population[order[:keep_parents]]
                        population[: kept.shape[0], :] = kept
                        population[kept.shape[0] :, :] = offspring
                else:
                    elite_indices = order[:keep_elitism].copy()
                    elites = population.take(elite_indices, axis=0)
                    self.last_generation_elitism = elites
                    self.last_generation_elitism_indices = elite_indices
                    population[: elites.shape[0], :] = elites
                    population[elites.shape[0] :, :] = offspring
                self.generations_completed = generation + 1
                self.previous_generation_fitness = fitness.copy()
                fitness = self._lean_fitness(
                    population, selection == "sss" and 0 < keep_elitism <= num_parents and keep_parents != 0
                )
                self.last_generation_fitness = fitness
                if type(fitness) is np.ndarray and fitness.ndim == 1 and fitness.dtype.kind in numeric_kinds:
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
            if type(best_fitness) is type(previous_best) and type(best_fitness) in SCALAR_TYPES:
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
            if generation + 1 < last_gen:
                boundary(
                    self,
                    LoopState(
                        loop="lean",
                        next_generation=generation + 1,
                        last_generation=last_gen,
                        unchanged=unchanged,
                        best_fitness=best_fitness,
                        run_seconds=time.monotonic() - self.run_start_time,
                        noted=noted,
                    ),
                )
        self.run_select_parents(call_on_parents=False)
        if self.keep_elitism > 0:
            self.last_generation_elitism, self.last_generation_elitism_indices = self.steady_state_selection(
                self.last_generation_fitness, num_parents=self.keep_elitism
            )
        _, best_fitness, _ = self.best_solution(pop_fitness=self.last_generation_fitness)
        self.best_solutions_fitness.append(
            np.copy(best_fitness) if isinstance(best_fitness, np.ndarray) else best_fitness
        )
        self.best_solutions_generations.append(self.generations_completed)
        self._update_best_solution_generation()
        self.run_completed = True
        if self.on_stop is not None:
            self.on_stop(self, self.last_generation_fitness)
        self.best_solutions = np.array(self.best_solutions, dtype=self.population.dtype)
        self.previous_generation_fitness = self.last_generation_fitness.copy()

    def _lean_stop(self, stops: StopCriteria, unchanged: int) -> bool:
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
                if time.monotonic() - self.run_start_time >= float(criterion[1]):
                    return True
            elif kind == "evaluations":
                if self.num_fitness_evaluations >= int(criterion[1]):
                    return True
        return False
