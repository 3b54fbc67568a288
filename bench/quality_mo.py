"""Multi-objective search quality: how close the service's NSGA-II fronts come to the true ones, on
ZDT1 (2 objectives) and DTLZ2 (3 objectives), 30 seeds.

    container/.venv/bin/python bench/quality_mo.py            # 30 seeds x 2 problems (≈ 5 min)
    container/.venv/bin/python bench/quality_mo.py --short    # 5 seeds, 40 generations

Each run is what the service runs (``engine.build_ga``) with ``random_seed`` = 0..N-1.  For ``nsga2``
that is the engine's exact mode (docs/engine.md#multi-objective-selection; asserted for every run
here), whose runs are stock PyGAD's seed for seed (tests/engine/test_nsga.py, and bench/engine.py's
multi-objective jobs check it), so what this bench measures is NSGA-II's own quality.  Quality
measures: the hypervolume of the final Pareto front (its non-dominated solutions)
against the reference point 1.1 on every objective (minimisation form), as a share of the true
front's — ZDT1 ``f2 = 1 - sqrt(f1)``, 0.8767; DTLZ2 the unit sphere, 1.1**3 - pi/6 — and closeness:
ZDT1 the inverted generational distance to 500 points of the true front, DTLZ2 the mean distance of
the front's points to the sphere (generational distance, exact).  The run passes when, for every
problem, the median closeness is below 0.05 and the median hypervolume above 0.7 of the true front's
(full run only; the short run's fronts are not converged).
Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from pygad.benchmarks.dtlz import DTLZ2
from pygad.benchmarks.zdt import ZDT1
from pygad.utils.quality_indicators import hypervolume, inverted_generational_distance

from allele_worker.child.objectives import pareto_front
from allele_worker.engine import build_ga, engine_label

PROBLEMS = {"zdt1": ZDT1(30), "dtlz2": DTLZ2(3)}
REFERENCE = 1.1  # minimisation form; every objective of both problems is in [0, 1] on the front
# The true fronts' hypervolumes: ZDT1 1.1 * 1.1 - ∫₀¹ (1 - sqrt f1) df1 = 1.21 - 1/3 = 0.8767;
# DTLZ2 the cube 1.1³ less the unit sphere's first orthant (π/6) = 0.8074.
TRUE_HV = {"zdt1": 1.1 * 1.1 - 1.0 / 3.0, "dtlz2": 1.1**3 - math.pi / 6}
CLOSE = 0.05
HV_SHARE = 0.7  # of the true front's hypervolume, at least


def params(problem: str, seed: int, generations: int) -> dict:
    fitness = PROBLEMS[problem]
    return dict(
        num_generations=generations,
        sol_per_pop=50,
        num_parents_mating=25,
        num_genes=fitness.num_genes,
        fitness_func=fitness,
        init_range_low=0,
        init_range_high=1,
        parent_selection_type="nsga2",
        keep_elitism=0,
        keep_parents=-1,
        crossover_type="uniform",
        mutation_probability=0.1,
        random_mutation_min_val=-0.05,
        random_mutation_max_val=0.05,
        random_seed=seed,
        suppress_warnings=True,
    )


def front_of(problem: str, seed: int, generations: int) -> np.ndarray:
    """The final front's objective vectors (PyGAD's maximisation form) of one run on the service's
    path (the exact mode for ``nsga2``)."""
    ga = build_ga(params(problem, seed, generations))
    ga.run()
    assert engine_label(ga).startswith("exact:nsga2+"), engine_label(ga)
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
    check = not args.short
    print(
        f"multi-objective quality: {seeds} seeds x {generations} generations, pop 50, NSGA-II "
        f"(the exact mode, the service's path); hypervolume (reference {REFERENCE})"
    )
    print(f"{'problem':<7} {'HV med':>8} {'HV / true':>9} {'closeness med':>13}  verdict   time s")
    failed = []
    for problem in PROBLEMS:
        started = time.perf_counter()
        fronts = [front_of(problem, seed, generations) for seed in range(seeds)]
        ended = time.perf_counter()
        median_hv = float(np.median([hv(front) for front in fronts]))
        close = float(np.median([closeness(problem, front) for front in fronts]))
        share = median_hv / TRUE_HV[problem]
        verdict = "ok" if not check or (close < CLOSE and share > HV_SHARE) else "FAILED"
        if verdict != "ok":
            failed.append(problem)
        print(f"{problem:<7} {median_hv:8.4f} {share:9.3f} {close:13.4f}  {verdict:<8}  {ended - started:.1f}")
        sys.stdout.flush()
    print(
        "closeness: zdt1 IGD to the true front, dtlz2 mean distance to the unit sphere; "
        + (f"must be below {CLOSE}, and HV / true above {HV_SHARE}" if check else "not checked in a short run")
    )
    if failed:
        print(f"failed on: {', '.join(failed)}")
        return 1
    print(
        "the service's multi-objective fronts are close to the true ones"
        if check
        else "short run: fronts measured, not checked"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
