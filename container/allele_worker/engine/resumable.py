"""The resumable loop: stock PyGAD 3.9.2's ``GAEngine.run()``, generation for generation, with two
additions and nothing else changed:

- at every generation boundary (a generation finished, its callbacks and stop rules checked, the run
  going on) it calls ``self.checkpoint_hook(self, state)`` if one is set, with the loop's own state
  (``LoopState``): the hook may write a checkpoint (``checkpoint.capture``) or stop the run
  (by raising);
- ``resume_run(state)`` enters the loop at ``state.next_generation`` from a state restored into the
  GA (``checkpoint.restore``): without ``on_start``, without evaluating the population again, without
  adding history entries, with ``num_fitness_evaluations`` as it was and the ``time`` stop criterion
  counting the run time before the checkpoint plus the time since the resume.

A run without checkpoints runs stock's own ``run()`` (``run_ga``); one with them runs this copy, and
container/tests/test_resume.py proves the two equal over the fidelity set (a run checkpointed at
several generations equals the same run without checkpoints, and so does every resume).
``LeanLoop`` (loop.py) has the same two additions.
Design: docs/architecture.md ("Durable runs").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy

from .base import EngineBase

__all__ = ["LoopState", "Resumable", "boundary", "run_ga", "stock_loop"]

CheckpointHook = Callable[[Any, "LoopState"], None]


@dataclass
class LoopState:
    """The loop's locals at a generation boundary (besides the GA's attributes)."""

    loop: str  # "stock" | "lean": which loop took it
    next_generation: int
    last_generation: int  # the loop's range end (exclusive)
    unchanged: int  # generations without a change of the best fitness (the saturate criterion)
    best_fitness: Any  # the best fitness after the last evaluation
    run_seconds: float  # time spent in run() so far (the time criterion)
    noted: bool = False  # lean loop: its steps already recorded as accelerated

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoopState:
        state = cls(**{name: data[name] for name in cls.__dataclass_fields__})
        if state.loop not in ("stock", "lean") or type(state.next_generation) is not int:
            raise ValueError("malformed loop state")
        if type(state.last_generation) is not int or type(state.unchanged) is not int:
            raise ValueError("malformed loop state")
        return state


class Resumable(EngineBase):
    """``run()``: stock's own ``run()`` for a run without checkpoints, else ``stock_loop`` (stock's
    loop with the checkpoint hook and the resume entry)."""

    checkpoint_hook: CheckpointHook | None = None
    _resume: LoopState | None = None

    def run(self) -> None:
        if self.checkpoint_hook is None and self._resume is None:
            super().run()  # pygad.GA.run
        else:
            stock_loop(self)


def boundary(ga: Any, state: LoopState) -> None:
    """A generation boundary: the checkpoint hook, if the run has one."""
    hook = getattr(ga, "checkpoint_hook", None)
    if hook is not None:
        hook(ga, state)


def run_ga(ga: Any, hook: CheckpointHook | None = None, resume: LoopState | None = None) -> None:
    """Run ``ga`` (stock ``pygad.GA`` or the engine's) on the resumable loop: from the start, or from
    ``resume`` (the GA's attributes restored by ``checkpoint.restore``) on the loop that took it."""
    if hook is None and resume is None:
        ga.run()  # without checkpoints: the GA's own run() (stock's, or the engine's lean loop)
        return
    ga.checkpoint_hook = hook
    ga._resume = resume
    try:
        if isinstance(ga, Resumable):
            ga.run()  # the engine's run(): the lean loop, or stock_loop
        else:
            stock_loop(ga)  # stock pygad.GA: the same loop as its run()
    finally:
        ga._resume = None


def stock_loop(self: Any) -> None:
    """Stock 3.9.2's ``run()`` for any ``pygad.GA`` (``self``), resumable (module docstring)."""
    resume = getattr(self, "_resume", None)
    if resume is not None and resume.loop != "stock":
        raise ValueError("a lean loop's checkpoint resumed on the stock loop")
    self._fitness_run_active = True
    self._saved_fitness_indexes = {}
    self._fitness_value_shape = None
    try:
        if self.valid_parameters == False:  # noqa: E712 - stock's test
            raise Exception(
                "Error calling the run() method: \nThe run() method cannot be executed with invalid "
                "parameters. Please check the parameters passed while creating an instance of the GA class.\n"
            )
        self._restore_history_generations()
        if type(self.best_solutions) is numpy.ndarray:
            self.best_solutions = self.best_solutions.tolist()
        if type(self.best_solutions_fitness) is numpy.ndarray:
            self.best_solutions_fitness = list(self.best_solutions_fitness)
        if type(self.solutions) is numpy.ndarray:
            self.solutions = self.solutions.tolist()
        if type(self.solutions_fitness) is numpy.ndarray:
            self.solutions_fitness = list(self.solutions_fitness)

        stop_run = False
        if resume is None:
            if self.on_start is not None:
                self.on_start(self)
            self.num_fitness_evaluations = 0
            self.run_start_time = time.monotonic()
            if self.generations_completed != 0 and type(self.generations_completed) in self.supported_int_types:
                generation_first_idx = self.generations_completed
                generation_last_idx = self.num_generations + self.generations_completed
            else:
                generation_first_idx = 0
                generation_last_idx = self.num_generations
            self.last_generation_fitness = self.cal_pop_fitness()
            if type(self.last_generation_fitness[0]) in self.supported_int_float_types:
                if self.parent_selection_type in ["nsga2", "tournament_nsga2", "nsga3", "tournament_nsga3"]:
                    raise TypeError(
                        "Incorrect parent selection type. The fitness function returned a single numeric "
                        "fitness value which means the problem is single-objective. But the parent "
                        f"selection type {self.parent_selection_type} is used which only works for "
                        "multi-objective optimization problems."
                    )
            elif type(self.last_generation_fitness[0]) in [list, tuple, numpy.ndarray]:
                if self.parent_selection_type in ("nsga3", "tournament_nsga3"):
                    self._bootstrap_nsga3_reference_points()
            best_solution, best_solution_fitness, _ = self.best_solution(pop_fitness=self.last_generation_fitness)
            if self.save_best_solutions:
                self.best_solutions.append(list(best_solution))
            unchanged_generations = 0
        else:
            self.run_start_time = time.monotonic() - resume.run_seconds
            generation_first_idx = resume.next_generation
            generation_last_idx = resume.last_generation
            best_solution_fitness = resume.best_fitness
            unchanged_generations = resume.unchanged

        for generation in range(generation_first_idx, generation_last_idx):
            self.run_loop_head(best_solution_fitness)
            previous_best_fitness = self.best_solutions_fitness[-1]
            self.run_select_parents()
            self.run_crossover()
            self.run_mutation()
            self.run_update_population()
            if any(
                callable(operator) for operator in (self.parent_selection_type, self.crossover_type, self.mutation_type)
            ) or any(callback is not None for callback in (self.on_parents, self.on_crossover, self.on_mutation)):
                self._saved_fitness_indexes = {}
            self.generations_completed = generation + 1
            self.previous_generation_fitness = self.last_generation_fitness.copy()
            self.last_generation_fitness = self.cal_pop_fitness()
            best_solution, best_solution_fitness, _ = self.best_solution(pop_fitness=self.last_generation_fitness)
            if numpy.array_equal(previous_best_fitness, best_solution_fitness):
                unchanged_generations += 1
            else:
                unchanged_generations = 0
            if self.save_best_solutions:
                self.best_solutions.append(list(best_solution))
            if self.on_generation is not None:
                r = self.on_generation(self)
                self._saved_fitness_indexes = {}
                if type(r) is str and r.lower() == "stop":
                    break
            if self.stop_criteria is not None:
                stop_run = _stock_stop(self, unchanged_generations)
            if stop_run:
                break
            if generation + 1 < generation_last_idx:
                boundary(
                    self,
                    LoopState(
                        loop="stock",
                        next_generation=generation + 1,
                        last_generation=generation_last_idx,
                        unchanged=unchanged_generations,
                        best_fitness=best_solution_fitness,
                        run_seconds=time.monotonic() - self.run_start_time,
                    ),
                )

        self._save_population_snapshot()
        self.run_select_parents(call_on_parents=False)
        if self.keep_elitism > 0:
            self.last_generation_elitism, self.last_generation_elitism_indices = self.steady_state_selection(
                self.last_generation_fitness, num_parents=self.keep_elitism
            )
        best_solution, best_solution_fitness, _ = self.best_solution(pop_fitness=self.last_generation_fitness)
        if self.save_best_solutions:
            self.best_solutions[-1] = best_solution.tolist()
        self.best_solutions_fitness.append(
            numpy.copy(best_solution_fitness)
            if isinstance(best_solution_fitness, numpy.ndarray)
            else best_solution_fitness
        )
        self.best_solutions_generations.append(self.generations_completed)
        self._update_best_solution_generation()
        self.run_completed = True
        if self.on_stop is not None:
            self.on_stop(self, self.last_generation_fitness)
        self.best_solutions = numpy.array(self.best_solutions, dtype=self.population.dtype)
        self.previous_generation_fitness = self.last_generation_fitness.copy()
    except Exception as ex:
        self.logger.exception(ex)
        raise ex
    finally:
        self._fitness_run_active = False
        self._shutdown_fitness_executor()


def _stock_stop(self: Any, unchanged_generations: int) -> bool:
    """Stock's stop rules (the loop's inner ``for criterion`` block), as stock runs them: whether to stop."""
    fitness = self.last_generation_fitness
    stop_run = False
    for criterion in self.stop_criteria:
        if criterion[0] == "reach":
            if type(fitness[0]) in self.supported_int_float_types:
                if max(fitness) >= criterion[1]:
                    stop_run = True
                    break
            elif type(fitness[0]) in [list, tuple, numpy.ndarray]:
                objectives = len(fitness[0])
                if len(criterion[1:]) > 1 and len(criterion[1:]) != objectives:
                    self.valid_parameters = False
                    raise ValueError(
                        "When the 'reach' keyword is used with the 'stop_criteria' parameter for solving "
                        "a multi-objective problem, then the number of numeric values following the "
                        "keyword can be:\n1) A single numeric value to be used across all the objective "
                        "functions.\n2) A number of numeric values equal to the number of objective "
                        f"functions.\nBut the value {criterion} found with {len(criterion) - 1} numeric "
                        f"values which is not equal to the number of objective functions {objectives}."
                    )
                # Stock sets stop_run here without leaving the criteria: a later criterion decides too.
                stop_run = True
                for obj_idx in range(objectives):
                    if len(criterion[1:]) == objectives:
                        reach_fitness_value = criterion[obj_idx + 1]
                    elif len(criterion[1:]) == 1:
                        reach_fitness_value = criterion[1]
                    else:
                        self.valid_parameters = False
                        raise ValueError(
                            f"The number of values {len(criterion[1:])} does not equal the number of "
                            f"objectives {objectives}."
                        )
                    if max(fitness[:, obj_idx]) >= reach_fitness_value:
                        pass
                    else:
                        stop_run = False
                        break
        elif criterion[0] == "saturate":
            if unchanged_generations >= criterion[1]:
                stop_run = True
                break
        elif criterion[0] == "time":
            if time.monotonic() - self.run_start_time >= float(criterion[1]):
                stop_run = True
                break
        elif criterion[0] == "evaluations":
            if self.num_fitness_evaluations >= int(criterion[1]):
                stop_run = True
                break
    return stop_run
