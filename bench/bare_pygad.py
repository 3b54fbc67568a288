"""The benchmark's baseline: one job run in one Python process, no service around it — by bare PyGAD
(stock ``pygad.GA``), or with ``accelerated`` by the engine the GA worker uses (container/allele_worker/engine).

Usage: bare_pygad.py GENERATIONS POPULATION PARENTS GENES SEED [accelerated] [--jobs K]
       → prints {"seconds": ...} (construction + run; with --jobs, K jobs one after another in this
       process, seeds SEED..SEED+K-1: the load benchmark's floor).
"""

import json
import sys
import time

import numpy
import pygad

from allele_worker import engine


def fitness(ga, solution, idx):
    return -float(numpy.sum(solution**2))


def main() -> None:
    args = sys.argv[1:]
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else 1
    generations, population, parents, genes, seed = (int(v) for v in args[:5])
    build = engine.build_ga if "accelerated" in args else (lambda kwargs: pygad.GA(**kwargs))
    started = time.perf_counter()
    for offset in range(jobs):
        ga = build(
            dict(
                num_generations=generations,
                num_parents_mating=parents,
                sol_per_pop=population,
                num_genes=genes,
                init_range_low=-4,
                init_range_high=4,
                fitness_func=fitness,
                random_seed=seed + offset,
                suppress_warnings=True,
            )
        )
        ga.run()
        ga.best_solution(pop_fitness=ga.last_generation_fitness)
    print(json.dumps({"seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
