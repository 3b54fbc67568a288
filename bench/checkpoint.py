"""What durable runs cost: a run with checkpoints against the same run without, side by side.

    container/.venv/bin/python bench/checkpoint.py            # the plan's largest population (≈ 3 min)
    container/.venv/bin/python bench/checkpoint.py --quick    # a small one (seconds)

The job is the largest population a Premium run may have (``sol_per_pop`` 1000 × ``num_genes`` 1000, the
accelerated engine, what bench/engine.py calls "big"), run in this process through ``jobs.execute`` as
the sandboxed child runs it, with the checkpoints going to an in-memory sink (the child's memfd slot):

- **one checkpoint**: the time to capture and write one (median of several) and its size;
- **overhead at an interval**: the run's time with checkpoints every ``--interval`` seconds (default 2: a
  short interval, so a run of a few tens of seconds takes several) against the same run without, median of
  the per-round ratios; and the overhead predicted at the default interval (30 s) from the measured cost of
  one checkpoint: ``cost / 30 s`` (the hook's own cost per generation, a clock read, is measured in the
  no-checkpoint run and is in both);
- **work lost per kill**: at most one interval of run time (the kill lands just before the next checkpoint)
  plus the generation in progress; printed for the default interval with the measured generation time.

Figures: docs/performance.md ("Durable runs").
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "container"))

from allele_worker.child import jobs
from allele_worker.engine import checkpoint

FITNESS = "import numpy\ndef fitness(ga, solutions, idx):\n    return -numpy.sum(solutions ** 2, axis=1)\n"
DEFAULT_INTERVAL = 30.0


def job(population: int, genes: int, generations: int) -> dict[str, object]:
    return {
        "num_generations": generations,
        "sol_per_pop": population,
        "num_genes": genes,
        "num_parents_mating": population // 2,
        "fitness_func": FITNESS,
        "fitness_func_entry": "fitness",
        "fitness_batch_size": population,
        "random_seed": 7,
    }


def timed(params: dict[str, object], interval: float | None) -> tuple[float, int, list[int]]:
    sizes: list[int] = []
    plan = None
    if interval is not None:
        plan = jobs.CheckpointPlan(
            sink=lambda data: sizes.append(len(data)),
            interval=interval,
            max_bytes=1 << 34,
        )
    started = time.perf_counter()
    outcome = jobs.execute(jobs.JobSpec(params=params, checkpoints=plan), emit=lambda m: None)
    elapsed = time.perf_counter() - started
    assert outcome["status"] == "succeeded", outcome.get("error")
    return elapsed, outcome["result"]["generations_completed"], sizes


def one_checkpoint(params: dict[str, object], rounds: int) -> tuple[float, int]:
    """The median time to capture and write one checkpoint of the job's GA (built and run 2 generations)."""
    from allele_worker.engine import build_ga

    code = jobs.compile_all(params)
    kwargs = jobs.build_ga_kwargs(jobs.JobSpec(params={**params, "num_generations": 2}), code, lambda ga: None)
    ga = build_ga(kwargs)
    ga.run()
    times, size = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        document, arrays = checkpoint.capture(ga, {"loop": {}})
        size = checkpoint.write(lambda data: None, document, arrays, 1 << 34)
        times.append(time.perf_counter() - started)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    population, genes, generations = (100, 50, 200) if args.quick else (1000, 1000, 400)
    params = job(population, genes, generations)
    cost, size = one_checkpoint(params, 3 if args.quick else 5)
    ratios, plain_times, taken = [], [], 0
    timed(params, None)  # warm-up: imports and first-call costs out of the rounds
    for _ in range(1 if args.quick else args.repeat):
        plain, done, _ = timed(params, None)
        with_checkpoints, _, sizes = timed(params, args.interval)
        ratios.append(with_checkpoints / plain)
        plain_times.append(plain)
        taken = len(sizes)
    plain = statistics.median(plain_times)
    per_generation = plain / max(1, done)
    print(f"job: sol_per_pop {population} x num_genes {genes}, {done} generations (accelerated engine)")
    print(f"one checkpoint: {cost * 1000:.0f} ms, {size / 2**20:.1f} MiB")
    print(
        f"run without checkpoints: {plain:.2f} s ({per_generation * 1000:.0f} ms per generation); "
        f"with a checkpoint every {args.interval:g} s ({taken} taken): ratio {statistics.median(ratios):.3f}"
    )
    print(
        f"predicted overhead at the default interval ({DEFAULT_INTERVAL:g} s): "
        f"{100 * cost / DEFAULT_INTERVAL:.2f} % (one checkpoint per {DEFAULT_INTERVAL:g} s of run time)"
    )
    print(
        f"work lost per kill at the default interval: at most {DEFAULT_INTERVAL:g} s of run time "
        f"+ the generation in progress ({per_generation:.2f} s)"
    )


if __name__ == "__main__":
    main()
