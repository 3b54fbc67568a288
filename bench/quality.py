"""Search quality: accelerated engine vs stock PyGAD, one-sided Mann-Whitney U test per problem.

    container/.venv/bin/python bench/quality.py            # 30 seeds x 7 problems (≈ 20 min)
    container/.venv/bin/python bench/quality.py --short    # 10 seeds, fewer generations, no slow ones
    container/.venv/bin/python bench/quality.py --problems constrained100,dense

For each benchmark problem both engines run with the same parameters and the same seeds
(``random_seed`` = 0..N-1, so the outcome is deterministic).  The final best fitness values are
compared with a Mann-Whitney U test (normal approximation with tie correction and continuity
correction), one-sided: H1 = "the accelerated engine's final best fitness tends to be lower".  The
accelerated engine passes when p >= 0.05.  Exit status 0 when every problem passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import pygad

from allele_worker.engine import engine_label
from allele_worker.engine.accelerated import AcceleratedGA

ALPHA = 0.05

# --------------------------------------------------------------------------- problems

KNAPSACK_RNG = np.random.default_rng(20240601)
KNAPSACK_WEIGHTS = KNAPSACK_RNG.integers(1, 30, size=40).astype(float)
KNAPSACK_VALUES = KNAPSACK_RNG.integers(1, 50, size=40).astype(float)
KNAPSACK_CAPACITY = float(KNAPSACK_WEIGHTS.sum() * 0.4)


def sphere(ga, solution, index):
    return -float(np.sum(solution**2))


def rastrigin(ga, solution, index):
    x = np.asarray(solution, dtype=float)
    return -float(10 * x.size + np.sum(x * x - 10 * np.cos(2 * np.pi * x)))


def knapsack(ga, solution, index):
    weight = float(np.dot(solution, KNAPSACK_WEIGHTS))
    value = float(np.dot(solution, KNAPSACK_VALUES))
    if weight > KNAPSACK_CAPACITY:
        return value - 10.0 * (weight - KNAPSACK_CAPACITY)
    return value


def shifted_sphere(ga, solution, index):
    return -float(np.sum((solution - 2.0) ** 2))


def at_most_one(solution, values):
    """Gene constraint: x <= 1 (the unconstrained optimum, 2, is infeasible)."""
    return [v for v in values if v <= 1.0]


PROBLEMS = {
    "sphere": dict(fitness_func=sphere, num_genes=10, init_range_low=-5, init_range_high=5),
    "rastrigin": dict(fitness_func=rastrigin, num_genes=10, init_range_low=-5.12, init_range_high=5.12),
    "knapsack": dict(
        fitness_func=knapsack,
        num_genes=40,
        gene_space=[0, 1],
        gene_type=int,
        mutation_probability=0.05,
        parent_selection_type="tournament",
        crossover_type="two_points",
    ),
    "constrained": dict(
        fitness_func=shifted_sphere,
        num_genes=6,
        sample_size=200,
        gene_constraint=[at_most_one] * 6,
        crossover_type="uniform",
    ),
    # The default sample_size and a tenfold one: fresh candidates per call, drawn per generation.
    "constrained100": dict(
        fitness_func=shifted_sphere,
        num_genes=6,
        sample_size=100,
        gene_constraint=[at_most_one] * 6,
        crossover_type="uniform",
    ),
    "constrained1k": dict(
        fitness_func=shifted_sphere,
        num_genes=6,
        sample_size=1000,
        gene_constraint=[at_most_one] * 6,
        crossover_type="uniform",
    ),
    # Dense constraint candidates: the accelerated engine shares one base among calls (engine.md).
    "dense": dict(
        fitness_func=shifted_sphere,
        num_genes=6,
        sample_size=10000,
        gene_constraint=[at_most_one] * 6,
        crossover_type="uniform",
    ),
    # PyGAD's real-valued operators: the step runs stock's code (``=pygad``), the rest the engine's.
    "sbx": dict(fitness_func=rastrigin, num_genes=10, init_range_low=-5.12, init_range_high=5.12, crossover_type="sbx"),
    "polynomial": dict(
        fitness_func=rastrigin,
        num_genes=10,
        init_range_low=-5.12,
        init_range_high=5.12,
        mutation_type="polynomial",
        crossover_type="uniform",
        parent_selection_type="tournament",
    ),
}
# Left out of --short: stock takes seconds per run (dense, constrained1k, sbx), or the short run's few
# seeds and generations are too few to tell (polynomial: p 0.033 on seeds 0–7 × 25 generations, 0.135 on
# 30 × 100, 0.418 on seeds 100–139 × 100); the full run checks them.
SLOW = {"dense", "constrained1k", "sbx", "polynomial"}
# Steps the engine hands to stock PyGAD in a problem (each run asserts every other step is the engine's).
STOCK_STEPS = {"sbx": ("sbx",), "polynomial": ("polynomial",)}


def run(problem: str, accelerated: bool, seed: int, generations: int) -> float:
    params = dict(PROBLEMS[problem])
    params.update(
        num_generations=generations, sol_per_pop=50, num_parents_mating=10, random_seed=seed, suppress_warnings=True
    )
    ga = AcceleratedGA(**params) if accelerated else pygad.GA(**params)
    ga.run()
    if accelerated:
        label = engine_label(ga)
        assert label.startswith("accelerated:"), label
        stock = [part.split("=")[0] for part in label.removeprefix("accelerated:").split("+") if "=" in part]
        assert set(stock) <= set(STOCK_STEPS.get(problem, ())), label
    return float(ga.best_solution(pop_fitness=ga.last_generation_fitness)[1])


# --------------------------------------------------------------------------- statistics


def rank_average(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks with ties averaged, and the sizes of the tied groups."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size, dtype=float)
    sorted_values = values[order]
    _, starts, counts = np.unique(sorted_values, return_index=True, return_counts=True)
    for start, count in zip(starts, counts):
        ranks[order[start : start + count]] = start + (count + 1) / 2.0
    return ranks, counts


def mann_whitney_less(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """U of ``x`` and the one-sided p-value for H1: ``x`` tends to be smaller than ``y``."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n1, n2 = x.size, y.size
    ranks, ties = rank_average(np.concatenate([x, y]))
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    mean = n1 * n2 / 2.0
    tie_term = float(np.sum(ties**3 - ties)) / (n * (n - 1)) if n > 1 else 0.0
    variance = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    if variance <= 0:
        return u, 1.0
    z = (u - mean + 0.5) / math.sqrt(variance)
    return u, 0.5 * math.erfc(-z / math.sqrt(2.0))


# --------------------------------------------------------------------------- main


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--short", action="store_true", help="10 seeds, 40 generations")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--generations", type=int, default=None)
    parser.add_argument(
        "--problems", default=",".join(PROBLEMS), help="comma-separated subset of: " + ", ".join(PROBLEMS)
    )
    args = parser.parse_args(argv)
    chosen = args.problems.split(",")
    seeds = args.seeds or (10 if args.short else 30)
    generations = args.generations or (40 if args.short else 100)
    print(
        f"quality: {seeds} seeds x {generations} generations, pop 50, one-sided Mann-Whitney U "
        f"(H1: accelerated worse), alpha {ALPHA}"
    )
    print(
        f"{'problem':<12} {'stock median':>13} {'accel median':>13} {'stock mean':>12} "
        f"{'accel mean':>12} {'U':>7} {'p':>7}  verdict   time s (stock/accel)"
    )
    failed = []
    for problem in PROBLEMS:
        if problem not in chosen or (args.short and problem in SLOW):
            continue
        started = time.perf_counter()
        stock = np.array([run(problem, False, seed, generations) for seed in range(seeds)])
        middle = time.perf_counter()
        accel = np.array([run(problem, True, seed, generations) for seed in range(seeds)])
        ended = time.perf_counter()
        u, p = mann_whitney_less(accel, stock)
        verdict = "ok" if p >= ALPHA else "WORSE"
        if verdict != "ok":
            failed.append(problem)
        print(
            f"{problem:<12} {np.median(stock):13.5g} {np.median(accel):13.5g} "
            f"{stock.mean():12.5g} {accel.mean():12.5g} {u:7.1f} {p:7.3f}  {verdict:<8}  "
            f"{middle - started:.1f}/{ended - middle:.1f}"
        )
        sys.stdout.flush()
    if failed:
        print(f"accelerated engine worse on: {', '.join(failed)}")
        return 1
    print("accelerated engine not worse than stock PyGAD on any problem")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
