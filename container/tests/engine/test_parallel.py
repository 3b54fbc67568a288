"""engine/parallel.py: every form of ``parallel_processing`` gives the serial run (calls, state), also
when stock evaluates in the same run; the first error in population order; a lost worker; attributes
callbacks set.  In the real sandbox: tests/test_parallel.py."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import pytest
from conftest import live_children

from allele_worker.engine import (
    build_ga,
    coverage,
    engine_label,
)
from allele_worker.engine.accelerated import AcceleratedGA

from .conftest import STATE, base


def generation_aware(ga, solution, index):
    return -float(np.sum(solution**2)) + 0.01 * ga.generations_completed


PARALLEL_FORMS = [2, 3, ["thread", 2], ["thread", 4], ["process", 2], ["process", 4]]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"fitness_batch_size": 3},
        {"keep_elitism": 0, "keep_parents": 2},
        {"gene_type": int, "init_range_low": -3, "init_range_high": 3},  # many cache hits
        {"on_parents": lambda ga, parents: None},  # stock's loop with the accelerated operators
    ],
)
@pytest.mark.parametrize("parallel", PARALLEL_FORMS)
def test_parallel_fitness_gives_the_serial_run(parallel, overrides, tmp_path):
    """Every form of ``parallel_processing`` gives exactly the serial run: the same fitness calls
    (rows, batches, count), the same final state; the fitness sees the current generation in ``ga``;
    the parallel run evaluates in its workers (not only in the run's own thread); the worker
    processes end with the run."""
    runs, before = [], live_children()
    where = tmp_path / "evaluated"

    def record() -> None:  # one line per call, appended in one write (forked workers share the file)
        descriptor = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(descriptor, f"{os.getpid()} {threading.get_ident()}\n".encode())
        finally:
            os.close(descriptor)

    evaluated_in = []
    for setting in (None, parallel):

        def fitness(ga, solution, index):
            record()
            return generation_aware(ga, solution, index)

        if overrides.get("fitness_batch_size"):

            def fitness(ga, rows, indices):
                record()
                return -np.sum(np.asarray(rows, dtype=float) ** 2, axis=1) + 0.01 * ga.generations_completed

        ga = AcceleratedGA(
            **base(
                **{
                    "num_generations": 12,
                    "sol_per_pop": 30,
                    "fitness_func": fitness,
                    "parallel_processing": setting,
                    **overrides,
                }
            )
        )
        ga.run()
        runs.append(ga)
        evaluated_in.append(set(where.read_text().splitlines()))
        where.unlink()
    own = {f"{os.getpid()} {threading.get_ident()}"}
    assert evaluated_in[0] == own
    assert evaluated_in[1] - own, "no evaluation ran in a worker"
    serial, parallel_run = runs
    for name in STATE:
        np.testing.assert_array_equal(getattr(parallel_run, name), getattr(serial, name), err_msg=name)
    assert parallel_run.best_solutions_fitness == serial.best_solutions_fitness
    assert parallel_run.num_fitness_evaluations == serial.num_fitness_evaluations
    assert engine_label(parallel_run) == engine_label(serial)
    assert live_children() <= before


def two_objectives(ga, solution, index):
    return [-float(np.sum(solution**2)), -float(np.sum((solution - 1) ** 2))]


def finite_genes(ga, solution, index):
    finite = np.isfinite(solution)
    return float(finite.sum()) - float(np.sum(np.where(finite, solution, 0.0) ** 2))


@pytest.mark.parametrize("case", ["multi-objective", "infinite genes"])
@pytest.mark.parametrize("parallel", [2, ["thread", 2], ["process", 2]])
def test_parallel_fitness_when_stock_evaluates_in_the_same_run(parallel, case):
    """Stock's evaluation inside ``AcceleratedGA`` — after a multi-objective first evaluation hands
    the run to stock's loop, or for a population holding inf (no cache match) — uses stock's own
    executor (its ``_fitness_pool()``, which the engine's pool must not shadow) and still gives the
    serial run; the engine's workers and stock's executor are never open at once, and both end with
    the run."""
    overrides: dict[str, Any] = {"fitness_func": two_objectives}
    if case == "infinite genes":
        population = np.random.default_rng(1).uniform(-4, 4, (20, 8))
        population[:3, 2] = np.inf
        overrides = {"fitness_func": finite_genes, "initial_population": population}
    both_open: list[bool] = []

    def on_generation(ga):
        both_open.append(ga._warm_pool is not None and ga._fitness_executor is not None)

    runs, before = [], live_children()
    for setting in (None, parallel):
        ga = AcceleratedGA(
            **base(num_generations=6, parallel_processing=setting, on_generation=on_generation, **overrides)
        )
        ga.run()
        runs.append(ga)
    assert len(both_open) == 12 and not any(both_open)
    serial, parallel_run = runs
    np.testing.assert_array_equal(parallel_run.population, serial.population)
    np.testing.assert_array_equal(parallel_run.best_solutions_fitness, serial.best_solutions_fitness)
    assert parallel_run.num_fitness_evaluations == serial.num_fitness_evaluations
    assert engine_label(parallel_run) == engine_label(serial)
    assert parallel_run._warm_pool is None and parallel_run._fitness_executor is None
    assert live_children() <= before


@pytest.mark.parametrize("parallel", [["thread", 3], ["process", 3]])
def test_parallel_fitness_raises_the_first_error_in_population_order(parallel):
    """An exception in any worker is raised for the first failing solution in population order, as a
    serial run would, after counting the evaluations before it; the pool ends with the run."""

    def fitness(ga, solution, index):
        if ga.generations_completed == 1 and index in (14, 25):
            raise ValueError(f"solution {index}")
        return 1.0

    before = live_children()
    serial = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, num_generations=3))
    with pytest.raises(ValueError, match="solution 14"):
        serial.run()
    ga = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, num_generations=3, parallel_processing=parallel))
    with pytest.raises(ValueError, match="solution 14") as raised:
        ga.run()
    assert ga.num_fitness_evaluations == serial.num_fitness_evaluations
    if parallel[0] == "process":  # the frames of the worker's call travel with the exception
        assert raised.value.remote_frames[-1].name == "fitness"
    assert live_children() <= before


def test_a_worker_process_that_dies_fails_the_run():
    from allele_worker.engine.parallel import WorkerLost

    def fitness(ga, solution, index):
        if index == 29:
            os._exit(3)  # only a worker evaluates the last solution
        return 1.0

    before = live_children()
    ga = AcceleratedGA(**base(fitness_func=fitness, sol_per_pop=30, parallel_processing=["process", 2]))
    with pytest.raises(WorkerLost, match="exit status 3"):
        ga.run()
    assert live_children() <= before


def test_parallel_workers_see_attributes_callbacks_set():
    """A process worker's ``ga`` is refreshed every generation with the GA's data, attributes set by
    a callback included (stock's process mode sends a snapshot too); functions stay its own."""

    def on_generation(ga):
        ga.penalty = ga.generations_completed * 2

    def fitness(ga, solution, index):
        return float(getattr(ga, "penalty", -1)) - float(np.sum(solution**2))

    runs = []
    for setting in (None, ["process", 2]):
        ga = AcceleratedGA(
            **base(
                fitness_func=fitness,
                on_generation=on_generation,
                sol_per_pop=10,
                num_generations=4,
                parallel_processing=setting,
            )
        )
        ga.run()
        runs.append(ga.best_solutions_fitness)
    assert runs[1] == runs[0] and max(runs[0]) > 0  # the penalty reached the workers


def test_parallel_forms_are_covered_by_the_accelerated_engine():
    for form in PARALLEL_FORMS:
        assert coverage(base(parallel_processing=form)) == (True, "covered")
    assert isinstance(build_ga(base(parallel_processing=["process", 2])), AcceleratedGA)
