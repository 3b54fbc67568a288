"""The benchmark's baseline: one job run in one Python process, no service around it — by bare PyGAD
(stock ``pygad.GA``), or with ``accelerated`` by the engine the GA worker uses (container/allele_worker/engine).

Usage: bare_pygad.py GENERATIONS POPULATION PARENTS GENES SEED [accelerated]
       → prints {"seconds": ...} (construction + run).
"""
import json
import sys
import time

import numpy
import pygad

from allele_worker import engine


def fitness(ga, solution, idx):
    return -float(numpy.sum(solution ** 2))


def main() -> None:
    generations, population, parents, genes, seed = (int(v) for v in sys.argv[1:6])
    build = engine.build_ga if sys.argv[6:] == ["accelerated"] else (lambda kwargs: pygad.GA(**kwargs))
    started = time.perf_counter()
    ga = build(dict(
        num_generations=generations,
        num_parents_mating=parents,
        sol_per_pop=population,
        num_genes=genes,
        init_range_low=-4,
        init_range_high=4,
        fitness_func=fitness,
        random_seed=seed,
        suppress_warnings=True,
    ))
    ga.run()
    ga.best_solution(pop_fitness=ga.last_generation_fitness)
    print(json.dumps({"seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
