"""The benchmark's baseline: one job run by bare PyGAD in one Python process, no service around it.

Usage: bare_pygad.py GENERATIONS POPULATION PARENTS GENES SEED  → prints {"seconds": ...} (construction + run).
"""
import json
import sys
import time

import numpy
import pygad


def fitness(ga, solution, idx):
    return -float(numpy.sum(solution ** 2))


def main() -> None:
    generations, population, parents, genes, seed = (int(v) for v in sys.argv[1:6])
    started = time.perf_counter()
    ga = pygad.GA(
        num_generations=generations,
        num_parents_mating=parents,
        sol_per_pop=population,
        num_genes=genes,
        init_range_low=-4,
        init_range_high=4,
        fitness_func=fitness,
        random_seed=seed,
        suppress_warnings=True,
    )
    ga.run()
    ga.best_solution(pop_fitness=ga.last_generation_fitness)
    print(json.dumps({"seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
