"""Helpers of the engine's tests: a sphere fitness, the base configuration, the same configuration as
stock ``pygad.GA`` and as ``AcceleratedGA``, a fitness that counts its calls."""

from __future__ import annotations

import numpy as np
import pygad

from allele_worker.engine.accelerated import AcceleratedGA


def sphere(ga, solution, index):
    return -float(np.sum(solution**2))


def base(**overrides):
    kwargs = dict(
        num_generations=5,
        sol_per_pop=20,
        num_parents_mating=6,
        num_genes=8,
        fitness_func=sphere,
        suppress_warnings=True,
        random_seed=7,
    )
    kwargs.update(overrides)
    return kwargs


def pair(**overrides):
    """The same configuration as stock ``pygad.GA`` and as ``AcceleratedGA``."""
    return pygad.GA(**base(**overrides)), AcceleratedGA(**base(**overrides))


class Counter:
    def __init__(self, function=sphere):
        self.function = function
        self.calls = 0

    def __call__(self, ga, solution, index):
        self.calls += 1
        return self.function(ga, solution, index)


def counted(function=sphere):
    counter = Counter(function)

    def fitness_func(ga, solution, index):
        return counter(ga, solution, index)

    return counter, fitness_func


# The GA's state after a run that two equal runs must share.
STATE = (
    "population",
    "last_generation_fitness",
    "previous_generation_fitness",
    "last_generation_parents",
    "last_generation_parents_indices",
    "last_generation_offspring_crossover",
    "last_generation_offspring_mutation",
    "last_generation_elitism",
    "last_generation_elitism_indices",
    "best_solutions",
)
