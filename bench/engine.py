"""Stock PyGAD vs the accelerated engine, side by side in one run.

    container/.venv/bin/python bench/engine.py            # ≈ 10 minutes
    container/.venv/bin/python bench/engine.py --full     # stock "big" job in full (≈ 6 min more)
    container/.venv/bin/python bench/engine.py --quick    # smoke run (seconds), used by the tests
    container/.venv/bin/python bench/engine.py --jobs constraint100,parallel --repeat 7
    container/.venv/bin/python bench/engine.py --jobs nsga2,nsga2-500,nsga3   # multi-objective (≈ 12 min)

For every job: total run time (constructor + ``run()``), the time spent inside user code (fitness,
gene constraints, ``on_generation``; each wrapped in a timer), the engine's own overhead (the
difference), the ratio of stock to accelerated overhead and the number of calls to user code.
Medians over ``--repeat`` rounds (same seeds for both engines; each round runs stock, then accelerated),
and the median of the per-round ratios; each job runs in a fresh Python process, as every run of the
service does.  Unless ``--full``, stock PyGAD runs
the "big" job (1000 × 1000) for a few generations only and its figures are extrapolated linearly to
100 generations: constructor + first evaluation measured, the per-generation cost measured over the
generations run; the row says so.  The small and batch jobs also run their floor in every round: a
minimal numpy GA (sss + single point + random mutation + elitism) calling the same fitness, per
solution or per batch; they take milliseconds, so they run at least 31 rounds.

``*-first`` jobs time the first run of a process, what one run of the service pays: stock PyGAD in a
fresh interpreter (numpy and PyGAD imported, nothing run), the accelerated engine as the service runs
it — in a child forked from a parent that did what the warm fork server does
(``allele_worker.child.forkserver.warm``) — and, for reference, the accelerated engine in a fresh
interpreter.  Each round is a new process.

Multi-objective jobs (``nsga2``, ``nsga2-500``, ``nsga3``, ``two_sss``) run the engine's exact mode,
whose results must be stock's for the same seed: every round compares the two runs' final population,
history (``best_solutions_fitness``), last parents, fronts and best solution, prints whether they were
identical for every seed, and fails (exit status 1) if not.  Stock PyGAD's sort makes their stock runs
long, so the population-500 job runs 5 generations and the NSGA-III job 20, and both run at most 2
rounds.

``parallel`` jobs time ``parallel_processing`` with N = the machine's CPUs against one evaluation at a
time and against stock PyGAD's own ``parallel_processing``, on a fitness function that costs ≈ 2 ms per
call (calibrated on this machine): CPU-bound Python for ``["process", N]``, numpy work that releases the
GIL for ``["thread", N]``.  The ideal is the serial run's user time / N + its engine overhead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pygad

from allele_worker.child.jobs import ParetoHistory, PopulationHistory
from allele_worker.engine import build_ga, engine_label


class UserTimer:
    """Wraps user callables; counts calls and the time spent inside them."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def fitness(self, function):
        def fitness_func(ga, solution, index):
            start = time.perf_counter()
            try:
                return function(ga, solution, index)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return fitness_func

    def constraint(self, function):
        def gene_constraint(solution, values):
            start = time.perf_counter()
            try:
                return function(solution, values)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return gene_constraint

    def callback(self, function):
        def on_generation(ga):
            start = time.perf_counter()
            try:
                return function(ga)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return on_generation


# --------------------------------------------------------------------------- the jobs


def sphere(ga, solution, index):
    return -float(np.sum(solution**2))


def sphere_batch(ga, solutions, indices):
    return -np.sum(solutions**2, axis=1)


def two_objectives(ga, solution, index):
    return [-float(np.sum(solution**2)), -float(np.sum((solution - 1.0) ** 2))]


def three_objectives(ga, solution, index):
    return [
        -float(np.sum(solution**2)),
        -float(np.sum((solution - 1.0) ** 2)),
        -float(np.sum((solution + 1.0) ** 2)),
    ]


def positive(solution, values):
    return [v for v in values if v > 0]


def on_generation(ga):
    return None


# What the service's own on_generation does at every generation of every run, on both engines, counted
# as the engine's overhead (not user code): the population's statistics (child.jobs.PopulationHistory,
# population_history) and, for several objectives, the history of fronts (child.jobs.ParetoHistory,
# pareto_history.json). ALLELE_BENCH_NO_POPULATION=1 leaves both out, ALLELE_BENCH_NO_FRONTS=1 the
# fronts only, to measure their cost.
RECORD_POPULATION = os.environ.get("ALLELE_BENCH_NO_POPULATION") != "1"
RECORD_FRONTS = os.environ.get("ALLELE_BENCH_NO_FRONTS") != "1"


def service_hook(user_callback):
    if not RECORD_POPULATION:
        return user_callback
    history = PopulationHistory()
    fronts = ParetoHistory()  # records only a fitness of several objectives

    def on_generation(ga):
        history.record(ga)
        if RECORD_FRONTS:
            fronts.record(ga)
        return user_callback(ga)

    return on_generation


CONSTRAINT_SIZES = {"constraint100": 100, "constraint1k": 1000, "constraint10k": 10000}


def job_params(name: str, generations: int) -> dict:
    base = dict(
        num_generations=generations,
        sol_per_pop=50,
        num_parents_mating=10,
        num_genes=10,
        suppress_warnings=True,
    )
    if name == "small":
        return base
    if name == "batch":
        return {**base, "fitness_batch_size": 50}
    if name == "big":
        return {
            **base,
            "sol_per_pop": 1000,
            "num_parents_mating": 200,
            "num_genes": 1000,
        }
    if name == "long":
        return {
            **base,
            "num_generations": 10 * generations,
            "sol_per_pop": 100,
            "num_parents_mating": 20,
            "num_genes": 100,
        }
    if name in CONSTRAINT_SIZES:
        return {**base, "sample_size": CONSTRAINT_SIZES[name]}
    if name == "nsga2":
        return {**base, "parent_selection_type": "nsga2"}
    if name == "nsga2-500":
        return {
            **base,
            "parent_selection_type": "nsga2",
            # --quick (5 generations asked): a population of 100, so the smoke run stays short.
            "sol_per_pop": 500 if generations >= 100 else 100,
            "num_generations": max(1, generations // 20),
        }
    if name == "nsga3":
        return {
            **base,
            "parent_selection_type": "nsga3",
            "nsga3_num_divisions": 12,
            "sol_per_pop": 200,
            "num_generations": max(1, generations // 5),
        }
    if name == "two_sss":
        return base
    raise ValueError(name)


# Jobs measured against a floor in the same rounds: the per-solution floor for "small", the batch
# floor for "batch".  They take milliseconds, so they run at least CHEAP_REPEAT rounds.
FLOORS = ("small", "batch")
# Jobs of the exact mode: their results must be stock's, seed by seed; the long ones run few rounds.
EXACT = ("nsga2", "nsga2-500", "nsga3", "two_sss")
FEW_ROUNDS = ("big", "long", "nsga2-500", "nsga3")
CHEAP_REPEAT = 31
FIRST_REPEAT = 15  # *-first jobs: one process per round, each run measured once
PARALLEL_REPEAT = 3

JOBS = {
    "small": "100 gens x 50 pop x 10 genes, numpy fitness",
    "batch": "same, fitness_batch_size=50",
    "small-first": "small, the first run of a process (stock: fresh interpreter; accel: as the service)",
    "batch-first": "batch, the same",
    "big": "100 gens x 1000 pop x 1000 genes",
    "long": "1000 gens x 100 pop x 100 genes",
    "constraint100": "small + gene_constraint on every gene, sample_size=100 (the default)",
    "constraint1k": "the same, sample_size=1000",
    "constraint10k": "the same, sample_size=10000",
    "nsga2": "small with two objectives, parent_selection_type nsga2 (the exact mode from the start)",
    "nsga2-500": "the same with sol_per_pop 500, 5 generations",
    "nsga3": "three objectives, nsga3 (12 divisions: 91 reference points), sol_per_pop 200, 20 generations",
    "two_sss": "small with two objectives, sss (the exact mode from the first evaluation)",
    "parallel": "50 gens x 64 pop x 20 genes, 2 ms of CPU-bound Python per call, ['process', N]",
    "parallel-thread": "the same with 2 ms of numpy per call (releases the GIL), ['thread', N]",
}


def run_once(name: str, engine: str, generations: int, seed: int) -> dict:
    timer = UserTimer()
    params = job_params(name, generations)
    params["random_seed"] = seed
    fitness = {
        "batch": sphere_batch,
        "nsga2": two_objectives,
        "nsga2-500": two_objectives,
        "nsga3": three_objectives,
        "two_sss": two_objectives,
    }.get(name, sphere)
    params["fitness_func"] = timer.fitness(fitness)
    params["on_generation"] = service_hook(timer.callback(on_generation))
    if name in CONSTRAINT_SIZES:
        params["gene_constraint"] = [timer.constraint(positive) for _ in range(params["num_genes"])]
    start = time.perf_counter()
    ga = build_ga(params) if engine == "accelerated" else pygad.GA(**params)
    built = time.perf_counter()
    ga.run()
    end = time.perf_counter()
    _, best, _ = ga.best_solution(pop_fitness=ga.last_generation_fitness)
    return {
        "total": end - start,
        "ctor": built - start,
        "user": timer.seconds,
        "calls": timer.calls,
        "best": float(np.ravel(best)[0]),
        "label": engine_label(ga),
        "generations": int(ga.generations_completed),
        "digest": state_digest(ga),
    }


def state_digest(ga) -> str:
    """What two runs of the same seed must share: the final population, fitness and parents, the
    history, the fronts and the best solution (a hash of their bytes)."""
    digest = hashlib.sha256()
    for array in (
        ga.population,
        ga.last_generation_fitness,
        np.asarray(ga.best_solutions_fitness),
        ga.last_generation_parents_indices,
    ):
        digest.update(np.ascontiguousarray(array).tobytes())
    for front in ga.pareto_fronts or []:
        digest.update(np.asarray(front[:, 0], dtype=np.int64).tobytes())
        digest.update(np.asarray(list(front[:, 1]), dtype=np.float64).tobytes())
    best, _, index = ga.best_solution(pop_fitness=ga.last_generation_fitness)
    digest.update(np.ascontiguousarray(best).tobytes() + str(int(index)).encode())
    return digest.hexdigest()


def floor_run(
    batch: bool,
    generations: int = 100,
    pop: int = 50,
    genes: int = 10,
    parents: int = 10,
    seed: int = 0,
) -> dict:
    """A minimal numpy GA: the cost of the GA itself when nothing else is done."""
    timer = UserTimer()
    fitness = timer.fitness(sphere_batch if batch else sphere)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    population = rng.uniform(-4, 4, size=(pop, genes))

    def evaluate(rows, index):
        if batch:
            return np.asarray(fitness(None, rows, index))
        return np.array([fitness(None, rows[i], i) for i in range(rows.shape[0])])

    scores = evaluate(population, list(range(pop)))
    for _ in range(generations):
        order = np.argsort(scores)[::-1]
        mating = population[order[:parents]]
        elite = population[order[0]].copy()
        elite_score = scores[order[0]]
        k = np.arange(pop - 1)
        point = rng.integers(0, genes, size=pop - 1)
        take = np.arange(genes)[None, :] >= point[:, None]
        children = np.where(take, mating[(k + 1) % parents], mating[k % parents])
        where = rng.integers(0, genes, size=pop - 1)
        children[k, where] += rng.uniform(-1, 1, size=pop - 1)
        population = np.vstack([elite[None, :], children])
        scores = np.concatenate([[elite_score], evaluate(children, list(range(1, pop)))])
    total = time.perf_counter() - start
    return {"total": total, "user": timer.seconds, "calls": timer.calls}


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def summary(runs: list[dict]) -> dict:
    return {
        "total": median_of(runs, "total"),
        "user": median_of(runs, "user"),
        "calls": median_of(runs, "calls"),
        "label": runs[0]["label"],
        "ctor": median_of(runs, "ctor"),
        "generations": runs[0]["generations"],
    }


def measure(name: str, engine: str, repeat: int, generations: int) -> dict:
    return summary([run_once(name, engine, generations, seed) for seed in range(repeat)])


def measure_pair(name: str, repeat: int, generations: int) -> tuple[dict, dict]:
    """Stock and accelerated on the same seeds, alternating run by run (machine noise hits both);
    for the small and batch jobs the matching floor (a minimal numpy GA) runs in the same rounds.
    Besides the medians, the median of the per-round ratios (stock overhead / accelerated overhead,
    accelerated total / floor total), which a drift of the machine's speed between rounds moves least."""
    stock, accel, floors = [], [], []
    for seed in range(repeat):
        stock.append(run_once(name, "stock", generations, seed))
        accel.append(run_once(name, "accelerated", generations, seed))
        if name in FLOORS:
            floors.append(floor_run(name == "batch", generations, seed=seed))
    stock_summary, accel_summary = summary(stock), summary(accel)
    accel_summary["round_ratio"] = statistics.median(
        (s["total"] - s["user"]) / max(a["total"] - a["user"], 1e-9) for s, a in zip(stock, accel)
    )
    if name in EXACT:
        accel_summary["identical"] = [s["digest"] == a["digest"] for s, a in zip(stock, accel)]
    if floors:
        accel_summary["floor"] = median_of(floors, "total")
        accel_summary["floor_round_ratio"] = statistics.median(a["total"] / f["total"] for a, f in zip(accel, floors))
    return stock_summary, accel_summary


def extrapolated_big(repeat: int, generations: int) -> dict:
    """Stock PyGAD on the big job: measure 1 and ``1 + generations`` generations, extrapolate."""
    one = measure("big", "stock", repeat, 1)
    more = measure("big", "stock", repeat, 1 + generations)
    per_gen_total = (more["total"] - one["total"]) / generations
    per_gen_user = (more["user"] - one["user"]) / generations
    per_gen_calls = (more["calls"] - one["calls"]) / generations
    return {
        "total": one["total"] + 99 * per_gen_total,
        "user": one["user"] + 99 * per_gen_user,
        "calls": one["calls"] + 99 * per_gen_calls,
        "label": "pygad",
        "note": f"extrapolated from {1 + generations} generations",
    }


# --------------------------------------------------------------------------- first runs


def first_run(name: str, engine: str, generations: int, seed: int) -> dict:
    """``--first``: this fresh interpreter's first run (imports done, nothing run yet)."""
    if engine == "accelerated":
        import allele_worker.engine.accelerated  # noqa: F401 - what the service's child has imported
    return run_once(name, engine, generations, seed)


def forked_run(name: str, generations: int, seed: int) -> dict:
    """The run in a child forked from this process, as the service forks each run's child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(run_once(name, "accelerated", generations, seed)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        result = json.loads(answer.read())
    os.waitpid(pid, 0)
    return result


def measure_first(name: str, repeat: int, generations: int) -> tuple[dict, dict]:
    """Stock's first run in a fresh interpreter vs the accelerated engine's in a child forked from a
    parent warmed as the fork server warms itself (and, for reference, its first run in a fresh
    interpreter)."""
    from allele_worker.child import forkserver

    job = name.removesuffix("-first")
    forkserver.warm()
    stock, accel, fresh = [], [], []
    for seed in range(repeat):
        for engine, into in (("stock", stock), ("accelerated", fresh)):
            command = [
                sys.executable,
                __file__,
                "--first",
                f"{job}:{engine}:{seed}:{generations}",
            ]
            into.append(
                json.loads(
                    subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
                )
            )
        accel.append(forked_run(job, generations, seed))
    stock_summary, accel_summary = summary(stock), summary(accel)
    accel_summary["round_ratio"] = statistics.median(
        (s["total"] - s["user"]) / max(a["total"] - a["user"], 1e-9) for s, a in zip(stock, accel)
    )
    fresh_summary = summary(fresh)
    accel_summary["fresh_overhead"] = fresh_summary["total"] - fresh_summary["user"]
    accel_summary["label"] += " (forked from the warm parent)"
    return stock_summary, accel_summary


# --------------------------------------------------------------------------- parallel fitness


def calibrated(work, target: float = 0.002) -> int:
    """The size for which ``work(size)`` takes ``target`` seconds here (median of a few calls)."""
    size = 1000
    while True:
        times = []
        for _ in range(7):
            start = time.perf_counter()
            work(size)
            times.append(time.perf_counter() - start)
        took = statistics.median(times)
        if took >= target / 4:
            return max(1, int(size * target / took))
        size *= 4


def python_work(loops: int) -> float:
    total = 0
    for i in range(loops):
        total += i
    return float(total % 7)


def numpy_work(size: int) -> float:
    values = np.arange(size, dtype=np.float64)
    return float(np.sqrt(values, out=values).sum() % 7)  # numpy's loops release the GIL


def parallel_run(mode: str, workers: int | None, engine: str, size: int, generations: int, seed: int) -> dict:
    timer = UserTimer()
    work = python_work if mode == "process" else numpy_work

    def slow(ga, solution, index):
        return -float(np.sum(solution**2)) - 0.0 * work(size)

    params = dict(
        num_generations=generations,
        sol_per_pop=64,
        num_parents_mating=16,
        num_genes=20,
        suppress_warnings=True,
        random_seed=seed,
        fitness_func=timer.fitness(slow),
        parallel_processing=None if workers is None else [mode, workers],
    )
    start, cpu = time.perf_counter(), _cpu_seconds()
    ga = build_ga(params) if engine == "accelerated" else pygad.GA(**params)
    ga.run()  # its worker processes are reaped when it ends: their CPU is in _cpu_seconds()
    total = time.perf_counter() - start
    return {
        "total": total,
        "user": timer.seconds,
        "cpu": _cpu_seconds() - cpu,
        "label": engine_label(ga),
        "best": float(ga.best_solution(pop_fitness=ga.last_generation_fitness)[1]),
    }


def _cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its reaped children (worker processes)."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def measure_parallel(name: str, repeat: int, quick: bool) -> dict:
    mode = "thread" if name == "parallel-thread" else "process"
    workers = os.cpu_count() or 1
    size = calibrated(python_work if mode == "process" else numpy_work, 0.0002 if quick else 0.002)
    generations = 3 if quick else 50
    runs: dict[str, list[dict]] = {key: [] for key in ("stock", "stock-N", "accel", "accel-N")}
    for seed in range(repeat):
        runs["stock"].append(parallel_run(mode, None, "stock", size, generations, seed))
        runs["stock-N"].append(parallel_run(mode, workers, "stock", size, generations, seed))
        runs["accel"].append(parallel_run(mode, None, "accelerated", size, generations, seed))
        runs["accel-N"].append(parallel_run(mode, workers, "accelerated", size, generations, seed))
        assert runs["accel-N"][-1]["best"] == runs["accel"][-1]["best"], "parallel != serial"
    result = {
        key: {
            "total": median_of(value, "total"),
            "user": median_of(value, "user"),
            "cpu": median_of(value, "cpu"),
            "label": value[0]["label"],
        }
        for key, value in runs.items()
    }
    serial = result["accel"]
    result["ideal"] = serial["user"] / workers + (serial["total"] - serial["user"])
    result["workers"], result["mode"] = workers, mode
    result["vs_ideal_rounds"] = statistics.median(
        p["total"] / (s["user"] / workers + s["total"] - s["user"]) for p, s in zip(runs["accel-N"], runs["accel"])
    )
    result["vs_stock_rounds"] = statistics.median(
        s["total"] / a["total"] for s, a in zip(runs["stock-N"], runs["accel-N"])
    )
    return result


def measure_job(name: str, repeat: int, generations: int, quick: bool, full: bool) -> object:
    """One job's figures (``--one-job``: run in a process of its own)."""
    if name.startswith("parallel"):
        return measure_parallel(name, min(repeat, PARALLEL_REPEAT), quick)
    if name.endswith("-first"):
        return measure_first(name, repeat if quick else max(repeat, FIRST_REPEAT), generations)
    job_repeat = max(1, min(repeat, 3 if name in ("big", "long") else 2)) if name in FEW_ROUNDS else repeat
    if name in FLOORS and not quick:
        job_repeat = max(repeat, CHEAP_REPEAT)
    if name == "big" and quick:
        stock = measure("big", "stock", 1, 1)
        stock["note"] = "1 generation (quick)"
        return stock, measure("big", "accelerated", 1, 1)
    if name == "big" and not full:
        return extrapolated_big(1, 2), measure("big", "accelerated", job_repeat, generations)
    return measure_pair(name, job_repeat, generations)


def fmt(seconds: float) -> str:
    return f"{seconds:9.3f}" if seconds < 100 else f"{seconds:9.1f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="run stock PyGAD's big job in full")
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (for tests)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (median)")
    parser.add_argument(
        "--jobs",
        default=",".join(JOBS),
        help="comma-separated subset of: " + ", ".join(JOBS),
    )
    parser.add_argument("--one-job", default=None, help=argparse.SUPPRESS)  # internal, see below
    parser.add_argument("--first", default=None, help=argparse.SUPPRESS)  # internal: job:engine:seed:gens
    args = parser.parse_args(argv)
    if args.first:
        job, engine, seed, gens = args.first.split(":")
        print(json.dumps(first_run(job, engine, int(gens), int(seed))))
        return 0
    jobs = [name for name in JOBS if name in args.jobs.split(",")]
    quick = args.quick
    repeat = args.repeat or (1 if quick else 5)
    generations = 5 if quick else 100
    if args.one_job:
        print(json.dumps(measure_job(args.one_job, repeat, generations, quick, args.full)))
        return 0
    print(
        f"PyGAD {pygad.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; medians of {repeat} rounds (small and batch jobs: "
        f"{max(repeat, CHEAP_REPEAT) if not quick else repeat}; big: fewer); "
        "each job in a fresh process"
    )
    rows, parallel = [], []
    for name in jobs:
        # Each job in a process of its own, as every run of the service is: a job run after another
        # in the same process finds the allocator in another state (stock PyGAD's constraint job
        # measured ≈ 20 % faster right after the big job than in a fresh process).
        command = [sys.executable, __file__, "--one-job", name, "--repeat", str(repeat)]
        command += ["--quick"] if quick else []
        command += ["--full"] if args.full else []
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        if name.startswith("parallel"):
            parallel.append((name, figures))
        else:
            rows.append((name, *figures))

    header = (
        f"{'job':<13} {'engine':<8} {'total s':>9} {'user s':>9} {'overhead':>9} "
        f"{'ratio':>7} {'rounds':>7} {'user calls':>11}  path"
    )
    print()
    print(header)
    print("-" * len(header))
    for name, stock, accel in rows:
        stock_overhead = stock["total"] - stock["user"]
        accel_overhead = accel["total"] - accel["user"]
        ratio = stock_overhead / accel_overhead if accel_overhead > 0 else float("inf")
        rounds = f"{accel['round_ratio']:6.1f}x" if "round_ratio" in accel else ""
        print(
            f"{name:<13} {'stock':<8} {fmt(stock['total'])} {fmt(stock['user'])} "
            f"{fmt(stock_overhead)} {'':>7} {'':>7} {int(stock['calls']):>11}  {stock['label']}"
            + (f" ({stock['note']})" if stock.get("note") else "")
        )
        print(
            f"{'':<13} {'accel':<8} {fmt(accel['total'])} {fmt(accel['user'])} "
            f"{fmt(accel_overhead)} {ratio:6.1f}x {rounds:>7} {int(accel['calls']):>11}  "
            f"{accel['label']}"
        )
    print("\nratio: stock overhead / accelerated overhead, of the medians; rounds: the median of the per-round ratios")
    failed = False
    for name, _, accel in rows:
        if "identical" in accel:
            same = all(accel["identical"])
            failed |= not same
            print(
                f"{name}: results identical to stock per seed (population, history, parents, fronts, best "
                f"solution): {'yes' if same else 'NO'} ({sum(accel['identical'])} of {len(accel['identical'])} seeds)"
            )
    for name, _, accel in rows:
        if "fresh_overhead" in accel:
            print(
                f"{name}: accelerated overhead in a fresh interpreter (no fork server) {accel['fresh_overhead']:.4f} s"
            )
        if "floor" in accel:
            kind = "batch" if name == "batch" else "per-solution"
            print(
                f"{name} job vs the {kind} floor (minimal numpy GA, same rounds): floor "
                f"{accel['floor']:.4f} s, accelerated total / floor total = "
                f"{accel['total'] / accel['floor']:.2f} (medians), "
                f"{accel['floor_round_ratio']:.2f} (median of the per-round ratios)"
            )
    for name, figures in parallel:
        workers, mode = figures["workers"], figures["mode"]
        print(
            f"\n{name}: {mode} workers, N = {workers} (the machine's CPUs); the whole run: wall time, "
            "CPU time of every process and thread"
        )
        for key, label in (
            ("stock", "stock, serial"),
            ("stock-N", f"stock, ['{mode}', {workers}]"),
            ("accel", "accelerated, serial"),
            ("accel-N", f"accelerated, ['{mode}', {workers}]"),
        ):
            print(f"  {label:<32} {fmt(figures[key]['total'])} s   CPU {fmt(figures[key]['cpu'])} s")
        ideal = figures["ideal"]
        print(f"  {'ideal (serial user / N + overhead)':<32} {fmt(ideal)} s")
        print(
            f"  accelerated parallel / ideal = {figures['accel-N']['total'] / ideal:.3f} "
            f"(rounds {figures['vs_ideal_rounds']:.3f}); stock parallel / accelerated parallel = "
            f"{figures['stock-N']['total'] / figures['accel-N']['total']:.2f} "
            f"(rounds {figures['vs_stock_rounds']:.2f})"
        )
    print(JOBS_LEGEND)
    return 1 if failed else 0


JOBS_LEGEND = "\n".join(f"  {name:<15} {text}" for name, text in JOBS.items())

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
