"""Multi-objective search quality: Allele's engine path vs stock PyGAD on ZDT1 (2 objectives) and
DTLZ2 (3 objectives), NSGA-II, 30 seeds; and how close the fronts come to the true ones.

    container/.venv/bin/python bench/quality_mo.py            # 30 seeds x 2 problems (≈ 10 min)
    container/.venv/bin/python bench/quality_mo.py --short    # 5 seeds, 40 generations

Both engines run with the same parameters and seeds (``random_seed`` = 0..N-1): ``engine.build_ga``
(what the service runs; for ``nsga2`` that is stock ``pygad.GA`` from the start, docs/engine.md) and
``pygad.GA``.  Quality measure: the hypervolume of the final Pareto front (its non-dominated
solutions) against the reference point 1.1 on every objective (minimisation form), compared with a
one-sided Mann-Whitney U test as in bench/quality.py (H1: the service's hypervolumes tend to be
lower; passes when p >= 0.05).  Closeness to the true front: ZDT1 ``f2 = 1 - sqrt(f1)`` — the
hypervolume as a share of the true front's (0.8767) and the inverted generational distance to 500
points of it; DTLZ2 the unit sphere — the mean distance of the front's points to it (generational
distance, exact) and the hypervolume share of the true front's (1.1**3 - pi/6).  The run passes
when every problem passes the rank test and the median front is close: ZDT1 IGD below 0.05 and
DTLZ2 GD below 0.05 (full run only; the short run's fronts are not converged).
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import pygad
from pygad.benchmarks.dtlz import DTLZ2
from pygad.benchmarks.zdt import ZDT1
from pygad.utils.quality_indicators import hypervolume, inverted_generational_distance
from quality import ALPHA, mann_whitney_less

from allele_worker.engine import build_ga, engine_label
from allele_worker.objectives import pareto_front

PROBLEMS = {"zdt1": ZDT1(30), "dtlz2": DTLZ2(3)}
REFERENCE = 1.1   # minimisation form; every objective of both problems is in [0, 1] on the front
# The true fronts' hypervolumes: ZDT1 1.1 * 1.1 - ∫₀¹ (1 - sqrt f1) df1 = 1.21 - 1/3 = 0.8767;
# DTLZ2 the cube 1.1³ less the unit sphere's first orthant (π/6) = 0.8074.
TRUE_HV = {"zdt1": 1.1 * 1.1 - 1.0 / 3.0, "dtlz2": 1.1 ** 3 - math.pi / 6}
CLOSE = 0.05


def params(problem: str, seed: int, generations: int) -> dict:
    fitness = PROBLEMS[problem]
    return dict(num_generations=generations, sol_per_pop=50, num_parents_mating=25,
                num_genes=fitness.num_genes, fitness_func=fitness, init_range_low=0, init_range_high=1,
                parent_selection_type="nsga2", keep_elitism=0, keep_parents=-1,
                crossover_type="uniform", mutation_probability=0.1,
                random_mutation_min_val=-0.05, random_mutation_max_val=0.05,
                random_seed=seed, suppress_warnings=True)


def front_of(problem: str, service: bool, seed: int, generations: int) -> np.ndarray:
    """The final front's objective vectors (PyGAD's maximisation form) of one run."""
    kwargs = params(problem, seed, generations)
    ga = build_ga(kwargs) if service else pygad.GA(**kwargs)
    ga.run()
    if service:
        assert engine_label(ga) in ("pygad", "pygad:multi-objective"), engine_label(ga)
    fitness = np.asarray(ga.last_generation_fitness, dtype=float)
    return fitness[pareto_front(fitness)]


def hv(front: np.ndarray) -> float:
    """Hypervolume against -REFERENCE on every objective (points not better than it count nothing)."""
    reference = np.full(front.shape[1], -REFERENCE)
    inside = front[(front > reference).all(axis=1)]
    return float(hypervolume(inside, reference)) if len(inside) else 0.0


def closeness(problem: str, front: np.ndarray) -> float:
    """ZDT1: IGD to 500 points of the true front; DTLZ2: mean distance to the unit sphere."""
    if problem == "zdt1":
        return float(inverted_generational_distance(front, PROBLEMS["zdt1"].pareto_front(500)))
    return float(np.mean(np.abs(np.linalg.norm(front, axis=1) - 1.0)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", action="store_true", help="5 seeds, 40 generations")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--generations", type=int, default=None)
    args = parser.parse_args(argv)
    seeds = args.seeds or (5 if args.short else 30)
    generations = args.generations or (40 if args.short else 200)
    check_close = not args.short
    print(f"multi-objective quality: {seeds} seeds x {generations} generations, pop 50, NSGA-II; "
          f"hypervolume (reference {REFERENCE}), one-sided Mann-Whitney U (H1: service worse), "
          f"alpha {ALPHA}")
    print(f"{'problem':<7} {'stock HV med':>12} {'service HV med':>14} {'HV / true':>9} {'U':>7} "
          f"{'p':>6} {'same fronts':>11} {'closeness med':>13}  verdict   time s (stock/service)")
    failed = []
    for problem in PROBLEMS:
        started = time.perf_counter()
        stock = [front_of(problem, False, seed, generations) for seed in range(seeds)]
        middle = time.perf_counter()
        service = [front_of(problem, True, seed, generations) for seed in range(seeds)]
        ended = time.perf_counter()
        stock_hv = np.array([hv(f) for f in stock])
        service_hv = np.array([hv(f) for f in service])
        same = sum(a.shape == b.shape and bool(np.array_equal(a, b)) for a, b in zip(stock, service))
        u, p = mann_whitney_less(service_hv, stock_hv)
        close = float(np.median([closeness(problem, f) for f in service]))
        verdict = "ok" if p >= ALPHA and (not check_close or close < CLOSE) else "FAILED"
        if verdict != "ok":
            failed.append(problem)
        print(f"{problem:<7} {np.median(stock_hv):12.4f} {np.median(service_hv):14.4f} "
              f"{np.median(service_hv) / TRUE_HV[problem]:9.3f} {u:7.1f} {p:6.3f} "
              f"{same:>5}/{seeds:<5} {close:13.4f}  {verdict:<8}  "
              f"{middle - started:.1f}/{ended - middle:.1f}")
        sys.stdout.flush()
    print(f"closeness: zdt1 IGD to the true front, dtlz2 mean distance to the unit sphere "
          f"({'must be below ' + str(CLOSE) if check_close else 'not checked in a short run'})")
    if failed:
        print(f"failed on: {', '.join(failed)}")
        return 1
    print("service's multi-objective runs not worse than stock PyGAD on any problem")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
