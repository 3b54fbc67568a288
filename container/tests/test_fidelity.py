"""PyGAD fidelity, in this process: every creation parameter and accepted form is honoured
by the run (checked on its result), the stock path equals stock PyGAD exactly for the same seed, and
what a run reports besides: multi-objective results, warnings, constraint violations, how far a failed
run got, the engine path, the files uploaded before the report.

"Equals stock" compares ``jobs.execute`` (what the sandboxed child runs) with ``pygad.GA`` built here
from the same job independently of ``child/jobs.py`` (``stock_ga``).  "Honoured" adds, for every parameter,
that leaving it out changes the stock result for that seed, so the comparison could fail.
"""

from __future__ import annotations

import io
import json
import os
import threading
import warnings
from typing import Any

import numpy as np
import pygad
import pytest
from conftest import CONTAINER, params

from allele_worker import validation
from allele_worker.child import ga_result, jobs, objectives, staged_files
from allele_worker.child.warning_tally import MAX_DISTINCT, WarningTally
from allele_worker.wire import OPERATOR_FIELDS as OPERATORS

TYPES: dict[str, Any] = {"int": int, "float": float, **{name: getattr(np, name) for name in jobs.NUMPY_GENE_TYPES}}
# A batch fitness whose values depend on the batch's size: batches of another size change the run.
BATCH = "def fitness(ga, solutions, idx):\n    return [-float((s ** 2).sum()) - len(solutions) for s in solutions]\n"
TWO = (
    "def fitness(ga, solution, idx):\n    return [-float((solution ** 2).sum()), -float(((solution - 1) ** 2).sum())]\n"
)
THREE = (
    "def fitness(ga, solution, idx):\n"
    "    return [-float((solution ** 2).sum()), -float(((solution - 1) ** 2).sum()), -float(solution[0])]\n"
)
STOCK_PATH = {"gene_type": ["float", None]}  # same genes as float, but not covered: stock pygad.GA


def execute(job: dict[str, Any], initial_population: list[list[float]] | None = None) -> dict[str, Any]:
    return jobs.execute(jobs.JobSpec(params=job, initial_population=initial_population), emit=lambda message: None)


def succeeded(job: dict[str, Any], initial_population: list[list[float]] | None = None) -> dict[str, Any]:
    outcome = execute(job, initial_population)
    assert outcome["status"] == "succeeded", outcome.get("error")
    return outcome


def _types(value: Any) -> Any:
    if isinstance(value, str):
        return TYPES[value]
    if isinstance(value, list):
        return [_types(v) for v in value]
    return value


def stock_ga(job: dict[str, Any], initial_population: list[list[float]] | None = None) -> pygad.GA:
    """``pygad.GA`` run on the job's parameters, built without ``child/jobs.py``."""
    kwargs: dict[str, Any] = {"init_range_low": -4, "init_range_high": 4}
    code = [name for name in jobs.CODE_FIELDS if name in job and (name not in OPERATORS or f"{name}_entry" in job)]
    for name, value in job.items():
        if name in code or name.endswith("_entry"):
            continue
        kwargs[name] = _types(value) if name == "gene_type" else value
    for name in code:
        if name in job:
            namespace: dict[str, Any] = {}
            exec(compile(job[name], f"<{name}>", "exec"), namespace)
            kwargs[name] = namespace[job[f"{name}_entry"]]
    if initial_population is not None:
        kwargs["initial_population"] = initial_population
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ga = pygad.GA(**kwargs)
        ga.run()
    return ga


def stock_result(ga: pygad.GA) -> dict[str, Any]:
    """What the report holds, from a stock GA."""
    best, _, _ = ga.best_solution(pop_fitness=ga.last_generation_fitness)
    return {
        "best_solution": ga_result.jsonable(best),
        "population": ga_result.jsonable(ga.population),
        "generations_completed": int(ga.generations_completed),
        "best_solutions_fitness": [ga_result.fitness_value(f) for f in ga.best_solutions_fitness],
    }


def same_as_stock(outcome: dict[str, Any], ga: pygad.GA) -> None:
    expected = stock_result(ga)
    got = outcome["result"]
    for key in ("best_solution", "population", "generations_completed"):
        assert got[key] == expected[key], key
    if got["num_objectives"] == 1:
        assert got["best_solutions_fitness"] == expected["best_solutions_fitness"]


# --------------------------------------------------------------------------- the stock path


STOCK_CONFIGS = {
    "gene_type with a precision": dict(gene_type=["float", 2]),
    "gene_type per gene": dict(num_genes=4, gene_type=["int", "float", ["float", 1], "float32"]),
    "gene_type a numpy type": dict(gene_type="float32"),
    "gene_type int16 with a gene space": dict(gene_type="int16", gene_space={"low": -5, "high": 5}),
    "no duplicate genes": dict(gene_type="int", allow_duplicate_genes=False, gene_space=list(range(10))),
    "save_solutions": dict(save_solutions=True, save_best_solutions=True),
    "per-gene mutation ranges with a precision": dict(
        gene_type=["float", 3],
        random_mutation_min_val=[-1, 0, 0.5],
        random_mutation_max_val=[1, 0, 0.5],
        mutation_by_replacement=True,
        mutation_probability=0.5,
    ),
    "nsga2": dict(fitness_func=TWO, parent_selection_type="nsga2"),
    "tournament_nsga2": dict(fitness_func=TWO, parent_selection_type="tournament_nsga2", K_tournament=3),
    "several objectives with sss": dict(fitness_func=TWO),
    "several objectives, reach per objective": dict(
        fitness_func=TWO, parent_selection_type="nsga2", stop_criteria="reach_-1_-2", num_generations=50
    ),
    "a one-value array fitness": dict(
        fitness_func=(
            "import numpy\ndef fitness(ga, solution, idx):\n    return numpy.array([-float((solution ** 2).sum())])\n"
        )
    ),
    "evaluations stop": dict(gene_type=["float", None], stop_criteria="evaluations_40", num_generations=50),
}


@pytest.mark.parametrize("config", list(STOCK_CONFIGS), ids=list(STOCK_CONFIGS))
def test_the_stock_path_equals_stock_pygad_exactly(config):
    job = params(random_seed=11, num_generations=12, sol_per_pop=10, num_parents_mating=4, num_genes=3)
    job.update(STOCK_CONFIGS[config])
    outcome = succeeded(job)
    # Several objectives take the exact mode (stock's results, the NSGA sort vectorised).
    assert outcome["engine"] == "pygad" or outcome["engine"].startswith("exact:"), outcome["engine"]
    same_as_stock(outcome, stock_ga(job))


# --------------------------------------------------------------------------- every parameter honoured

# (parameter, value, what else the job needs for it to act); run on the stock path and compared with
# stock PyGAD with the parameter and without it (a required parameter: with the base job's value; a
# per-gene list: with its partner back to a number).
HONOURED: list[tuple[str, Any, dict[str, Any]]] = [
    ("num_generations", 7, {}),
    ("num_parents_mating", 6, {}),
    ("sol_per_pop", 12, {}),
    ("num_genes", 5, {}),
    ("init_range_low", 1.5, {}),
    ("init_range_low", [0, 1, 2], {"init_range_high": [1, 2, 3]}),
    ("init_range_high", -1, {}),
    ("init_range_high", [0, 1, 9], {"init_range_low": [-1, -1, -1]}),
    (
        "sample_size",
        7,
        {"gene_constraint": "c = [lambda s, v: [x for x in v if x > 0], None, None]\n", "gene_constraint_entry": "c"},
    ),
    ("mutation_type", "swap", {}),
    ("mutation_type", None, {}),
    ("mutation_probability", 0.6, {}),
    ("mutation_percent_genes", 70, {}),
    ("mutation_num_genes", 2, {}),
    ("mutation_by_replacement", True, {}),
    ("random_mutation_min_val", 0.5, {}),
    ("random_mutation_min_val", [-3, 0, 0.2], {"random_mutation_max_val": [3, 0, 0.2]}),
    ("random_mutation_max_val", 0.25, {"random_mutation_min_val": 0.25}),
    ("crossover_type", "uniform", {}),
    ("crossover_type", None, {}),
    ("crossover_probability", 0.3, {}),
    ("parent_selection_type", "rank", {}),
    ("K_tournament", 2, {"parent_selection_type": "tournament"}),
    ("keep_parents", 0, {"keep_elitism": 0}),
    ("keep_elitism", 4, {}),
    ("gene_type", ["int", None], {}),
    ("gene_type", ["float", 1], {}),
    ("gene_space", [[0, 1, 2], {"low": -1, "high": 1}, None], {}),
    ("allow_duplicate_genes", False, {"gene_type": "int", "gene_space": list(range(8))}),
    ("stop_criteria", "saturate_2", {"num_generations": 40}),
    ("stop_criteria", "reach_-1e-1", {"num_generations": 60}),
    ("stop_criteria", "evaluations_25", {"num_generations": 40}),
    ("stop_criteria", "time_0", {"num_generations": 40}),
    ("random_seed", 12345, {}),
    ("fitness_batch_size", 4, {"fitness_func": BATCH}),
    ("save_solutions", True, {}),
    ("save_best_solutions", True, {}),
    ("parent_selection_type", "nsga2", {"fitness_func": TWO}),
    ("parent_selection_type", "nsga3", {"fitness_func": THREE, "nsga3_num_divisions": 2}),
    ("parent_selection_type", "tournament_nsga3", {"fitness_func": THREE, "nsga3_num_divisions": 2}),
    ("nsga3_num_divisions", 2, {"fitness_func": THREE, "parent_selection_type": "nsga3", "nsga3_num_divisions": 4}),
    ("crossover_type", "sbx", {}),
    ("sbx_crossover_eta", 2, {"crossover_type": "sbx"}),
    ("mutation_type", "polynomial", {}),
    ("polynomial_mutation_eta", 2, {"mutation_type": "polynomial", "mutation_probability": 0.5}),
    (
        "gene_categorical",
        [True, False, True],
        {"gene_space": [[0, 1, 2, 3], None, [5, 6]], "crossover_type": "sbx", "mutation_type": "polynomial"},
    ),
    ("gene_categorical", True, {"gene_space": [0, 1, 2, 3], "mutation_type": "polynomial"}),
    ("gene_space", {"low": 3, "high": -1}, {}),  # reversed: PyGAD takes it in either order
    ("K_tournament", 40, {"parent_selection_type": "tournament"}),  # past sol_per_pop: PyGAD clips it
]


# Leaving these out is no run (or PyGAD's error): compared with the base job's value instead.
REQUIRED = ("num_generations", "num_parents_mating", "sol_per_pop", "num_genes", "nsga3_num_divisions")
PARTNERS = {
    "init_range_low": ("init_range_high",),
    "init_range_high": ("init_range_low",),
    "random_mutation_min_val": ("random_mutation_max_val",),
    "random_mutation_max_val": ("random_mutation_min_val",),
}


def _base(extra: dict[str, Any], stock: bool = True) -> dict[str, Any]:
    job = params(random_seed=5, num_generations=10, sol_per_pop=10, num_parents_mating=4, num_genes=3)
    job.update(STOCK_PATH if stock else {})
    job.update(extra)
    return job


def _fingerprint(ga: pygad.GA) -> Any:
    extra = (len(ga.solutions), len(ga.best_solutions))
    return stock_result(ga), extra


@pytest.mark.parametrize("name,value,extra", HONOURED, ids=[f"{name}={value!r}"[:60] for name, value, _ in HONOURED])
def test_every_parameter_is_honoured(name, value, extra):
    base = _base(extra)
    job = {**base, name: value}
    outcome = execute(job)
    assert outcome["status"] == "succeeded", outcome.get("error")
    ga = stock_ga(job)
    same_as_stock(outcome, ga)
    without = dict(base)
    if name not in REQUIRED:
        without.pop(name, None)
    for partner in PARTNERS.get(name, ()):
        if isinstance(value, list) and isinstance(without.get(partner), list):
            without.pop(partner)
    assert _fingerprint(stock_ga(without)) != _fingerprint(ga), f"{name} changed nothing for this seed"
    if name in ("save_solutions", "save_best_solutions"):
        assert outcome["result"][name.removeprefix("save_")]  # the data is reported


# Parameters honoured by giving the same result, checked apart (below): parameter → its test.
HONOURED_APART = {
    "parallel_processing": "test_parallel_processing_is_honoured",
    "suppress_warnings": "test_suppress_warnings_is_honoured",
}


def test_the_table_covers_every_parameter():
    """Every GA parameter a submission may carry is in HONOURED or checked apart (code fields, and
    HONOURED_APART)."""
    assert {name for name, _, _ in HONOURED} | set(HONOURED_APART) == set(jobs.PLAIN_PARAMS)
    assert all(callable(globals().get(test)) for test in HONOURED_APART.values())


PARALLEL_PATHS = {  # path → (the job's own parameters, the engine label's start)
    "accelerated": ({}, "accelerated:"),
    "stock": (STOCK_PATH, "pygad"),
    "nsga2": ({"fitness_func": TWO, "parent_selection_type": "nsga2"}, "exact:nsga2"),
}


@pytest.mark.parametrize("path", list(PARALLEL_PATHS))
@pytest.mark.parametrize("parallel", [2, ["thread", 2], ["process", 2]], ids=str)
def test_parallel_processing_is_honoured(tmp_path, parallel, path):
    """``parallel_processing`` is honoured by evaluating elsewhere than the run's own thread — the
    workers exist — with exactly the serial run's result, on every path (on the stock path: stock
    PyGAD's own result with the same setting)."""
    where = tmp_path / "evaluated"
    extra, engine = PARALLEL_PATHS[path]
    fitness = extra.get("fitness_func", params()["fitness_func"])
    record = (
        "import os, threading\n"
        "def fitness(ga, solution, idx):\n"
        f"    with open({str(where)!r}, 'a') as out:\n"
        "        out.write(f'{os.getpid()} {threading.get_ident()}\\n')\n"
        "    return scored(ga, solution, idx)\n"
    )
    job = _base({**extra, "fitness_func": fitness.replace("def fitness(", "def scored(") + record}, stock=False)
    serial = succeeded(job)
    assert serial["engine"].startswith(engine), serial["engine"]
    own = {f"{os.getpid()} {threading.get_ident()}"}
    assert set(where.read_text().splitlines()) == own
    where.unlink()
    outcome = succeeded({**job, "parallel_processing": parallel})
    assert outcome["result"] == serial["result"] and outcome["engine"] == serial["engine"]
    assert set(where.read_text().splitlines()) - own, "no evaluation ran in a worker"
    if outcome["engine"] == "pygad" or outcome["engine"].startswith("exact:"):
        same_as_stock(outcome, stock_ga({**job, "parallel_processing": parallel}))


def test_suppress_warnings_is_honoured():
    """PyGAD's warnings (here: K_tournament clipped, a mutation count rounded up) reach the run's
    warnings, and none with ``suppress_warnings``; the run itself is the same, and stock's."""
    job = _base({"parent_selection_type": "tournament", "K_tournament": 40, "mutation_percent_genes": 5})
    loud = succeeded(job)
    texts = [w["message"] for w in loud["warnings"]]
    assert any("K_tournament is clipped to sol_per_pop (10)" in t for t in texts), texts
    assert any("mutation_percent_genes selects fewer than one gene" in t for t in texts), texts
    quiet = succeeded({**job, "suppress_warnings": True})
    assert quiet["warnings"] == [] and quiet["result"] == loud["result"]
    same_as_stock(quiet, stock_ga({**job, "suppress_warnings": True}))


CUSTOM_OPERATORS = {
    "parent_selection_type": (
        "import numpy\n"
        "def pick(fitness, num_parents, ga):\n"
        "    order = numpy.argsort(fitness)[::-1][1 : num_parents + 1]  # not the best\n"
        "    return ga.population[order].copy(), order\n"
    ),
    "crossover_type": (
        "import numpy\n"
        "def mix(parents, offspring_size, ga):\n"
        "    offspring = numpy.empty(offspring_size)\n"
        "    for k in range(offspring_size[0]):\n"
        "        a, b = parents[k % len(parents)], parents[(k + 1) % len(parents)]\n"
        "        offspring[k] = (a + b) / 2 + ga.numpy_random_generator.uniform(-0.1, 0.1, offspring_size[1])\n"
        "    return offspring\n"
    ),
    "mutation_type": (
        "def shake(offspring, ga):\n    return offspring + ga.numpy_random_generator.normal(0, 0.3, offspring.shape)\n"
    ),
}


@pytest.mark.parametrize("field", list(CUSTOM_OPERATORS))
def test_a_custom_operator_runs_as_in_pygad(field):
    """A custom operator (source + ``<field>_entry``) is called by PyGAD with its own arguments: the
    run is stock PyGAD's with the same function, on the stock path and on the accelerated engine's
    (which hands the step to stock); leaving it out changes the run."""
    source = CUSTOM_OPERATORS[field]
    entry = source.split("def ")[1].split("(")[0]
    for stock_path in (True, False):
        job = {**_base({}, stock=stock_path), field: source, f"{field}_entry": entry}
        outcome = succeeded(job)
        if stock_path:
            assert outcome["engine"] == "pygad"
            same_as_stock(outcome, stock_ga(job))
        else:
            assert "+custom=pygad" in outcome["engine"] or outcome["engine"].startswith("accelerated:custom=pygad")
        assert outcome["result"] != succeeded(_base({}, stock=stock_path))["result"]


@pytest.mark.parametrize("field", jobs.CODE_FIELDS)
def test_every_code_field_is_called(field):
    """A code field that raises fails the run naming itself: it was called, as PyGAD calls it."""
    arity = {
        "fitness_func": "ga, s, i",
        "gene_constraint": "s, v",
        "on_start": "ga",
        "on_generation": "ga",
        "parent_selection_type": "fitness, num_parents, ga",
        "crossover_type": "parents, offspring_size, ga",
        "mutation_type": "offspring, ga",
    }.get(field, "ga, x")
    source = f"def f({arity}):\n    raise ValueError('{field} ran')\n"
    job = params(random_seed=1, num_generations=2)
    if field == "gene_constraint":
        source += "c = [f, None, None]\n"
    job[field], job[f"{field}_entry"] = source, "c" if field == "gene_constraint" else "f"
    outcome = execute(job)
    assert outcome["status"] == "failed"
    assert outcome["error"]["message"] == f"{field} line 2: ValueError: {field} ran"


# --------------------------------------------------------------------------- the accelerated path

ACCELERATED = params(random_seed=3, num_generations=15, sol_per_pop=12, num_parents_mating=4, num_genes=4)


def test_accelerated_path_honours_init_range_per_gene():
    job = {
        **ACCELERATED,
        "init_range_low": [0, 10, -5, 2],
        "init_range_high": [1, 11, -4, 2],
        "mutation_type": None,
        "crossover_type": None,
    }
    outcome = succeeded(job)
    assert outcome["engine"].startswith("accelerated:")
    population = np.array(outcome["result"]["population"])
    assert (population >= [0, 10, -5, 2]).all() and (population <= [1, 11, -4, 2]).all()
    assert (population[:, 3] == 2).all()  # equal bounds: that value


def test_accelerated_path_honours_per_gene_mutation_ranges_and_equal_bounds():
    job = {
        **ACCELERATED,
        "random_mutation_min_val": [0.5, -1, 3, 0],
        "random_mutation_max_val": [0.5, 1, 4, 0],
        "mutation_by_replacement": True,
        "mutation_probability": 1.0,
        "crossover_type": None,
        "keep_elitism": 0,
        "keep_parents": 0,
    }
    outcome = succeeded(job)
    assert outcome["engine"] == "accelerated:sss+none+random"
    population = np.array(outcome["result"]["population"])
    assert (population[:, 0] == 0.5).all() and (population[:, 3] == 0).all()
    assert ((population[:, 1] >= -1) & (population[:, 1] <= 1)).all()
    assert ((population[:, 2] >= 3) & (population[:, 2] <= 4)).all()


@pytest.mark.parametrize(
    "stop,generations", [("evaluations_30", None), ("time_0", 1), (["reach_1e3", "saturate_1e9", "time_1e4"], 15)]
)
def test_accelerated_path_honours_the_new_stop_criteria(stop, generations):
    outcome = succeeded({**ACCELERATED, "stop_criteria": stop})
    assert outcome["engine"].startswith("accelerated:")
    result = outcome["result"]
    if generations is not None:
        assert result["generations_completed"] == generations
    else:  # 12 evaluations at first, then the new offspring (11 of 12) of each generation
        assert result["generations_completed"] == 2 and result["stopped_reason"] == "stop_criteria"


def test_engine_path_is_named_with_null_crossover_or_mutation():
    """The label stays in the report's alphabet (lowercase): it was 'None' and refused as 'pygad'."""
    for overrides, label in (
        [{"crossover_type": None}, "accelerated:sss+none+random"],
        [{"mutation_type": None}, "accelerated:sss+single_point+none"],
        [{"crossover_type": None, "mutation_type": None}, "accelerated:sss+none+none"],
    ):
        outcome = succeeded({**ACCELERATED, **overrides})
        assert outcome["engine"] == label
        assert validation.validate_outcome(outcome)["engine"] == label


# --------------------------------------------------------------------------- several objectives


def test_a_multi_objective_result_is_stocks_front_best_and_history():
    job = params(
        random_seed=4,
        num_generations=15,
        sol_per_pop=16,
        num_parents_mating=8,
        num_genes=3,
        fitness_func=TWO,
        parent_selection_type="nsga2",
    )
    outcome = succeeded(job)
    result = outcome["result"]
    assert outcome["engine"] == "exact:nsga2+single_point=pygad+random"
    ga = stock_ga({**job, "save_solutions": True})  # the same run, keeping every generation's fitness
    fitness = np.asarray(ga.last_generation_fitness)
    same_as_stock(outcome, ga)
    # As PyGAD gives them: best_solution()'s objective values, and PyGAD's own history.
    best, best_fitness, _ = ga.best_solution(pop_fitness=fitness)
    assert result["num_objectives"] == 2 and result["best_solution_fitness"] == best_fitness.tolist()
    assert result["best_solution_objectives"] == best_fitness.tolist()
    assert result["best_solution"] == best.tolist()
    assert result["best_solutions_fitness"] == [list(map(float, f)) for f in ga.best_solutions_fitness]
    # Allele's second series: each objective's maximum over the population, per generation.
    per_generation = np.asarray(ga.solutions_fitness).reshape(-1, 16, 2).max(axis=1)
    assert result["objective_maxima"] == per_generation.tolist()
    assert result["objective_maxima"] != result["best_solutions_fitness"]  # the two series differ
    front = result["pareto_front"]
    assert len(front["solutions"]) == len(front["objectives"]) > 0
    rows = {tuple(row) for row in ga.population.tolist()}
    for solution, values in zip(front["solutions"], front["objectives"]):
        assert tuple(solution) in rows
        assert not any((other >= values).all() and (other > values).any() for other in fitness)
    dominated = [i for i in range(16) if any((o >= fitness[i]).all() and (o > fitness[i]).any() for o in fitness)]
    assert len({tuple(ga.population[i]) for i in range(16) if i not in dominated}) == len(front["solutions"])


def test_progress_of_a_multi_objective_run_carries_both_series():
    messages: list[dict[str, Any]] = []
    job = params(
        random_seed=4,
        num_generations=6,
        sol_per_pop=10,
        num_parents_mating=4,
        fitness_func=TWO,
        parent_selection_type="nsga2",
    )
    result = jobs.execute(jobs.JobSpec(params=job), emit=messages.append)["result"]
    progress = [m for m in messages if m.get("type") == "progress"]
    assert progress and all(m["best_solution_fitness"] is None for m in progress)
    for message in progress:  # the live chart's points: the two series' values at that generation
        generation = message["generations_completed"]
        assert message["best_solution_objectives"] == result["best_solutions_fitness"][generation]
        assert message["best_objectives"] == result["objective_maxima"][generation]
    one: list[dict[str, Any]] = []
    jobs.execute(jobs.JobSpec(params=params(random_seed=4)), emit=one.append)
    assert not any("best_objectives" in m or "best_solution_objectives" in m for m in one)


def test_pareto_front_of_known_points():
    fitness = np.array([[1, 5], [2, 4], [2, 4], [1, 4], [3, 1], [0, 0], [3, 0.5]], dtype=float)
    assert objectives.pareto_front(fitness).tolist() == [0, 1, 2, 4]
    population = np.array([[0.0], [1.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    assert objectives.distinct_rows(population, np.array([0, 1, 2, 4])).tolist() == [0, 1, 4]


def test_nsga2_with_one_objective_is_pygads_clear_error():
    outcome = execute(params(random_seed=1, parent_selection_type="nsga2"))
    assert outcome["status"] == "failed" and outcome["error"]["code"] == "code_error"
    assert outcome["error"]["message"].startswith("TypeError: Incorrect parent selection type.")
    assert "only works for multi-objective" in outcome["error"]["message"]


def test_a_one_value_array_fitness_is_one_objective():
    job = params(
        random_seed=2,
        fitness_func=(
            "import numpy\ndef fitness(ga, solution, idx):\n    return numpy.array([-float((solution ** 2).sum())])\n"
        ),
    )
    result = succeeded(job)["result"]
    assert result["num_objectives"] == 1 and isinstance(result["best_solution_fitness"], float)
    assert all(isinstance(f, float) for f in result["best_solutions_fitness"])


def test_multi_objective_continue_starts_from_the_population():
    job = params(
        random_seed=8,
        num_generations=5,
        sol_per_pop=10,
        num_parents_mating=4,
        num_genes=3,
        fitness_func=TWO,
        parent_selection_type="tournament_nsga2",
        K_tournament=3,
    )
    first = succeeded(job)["result"]
    population = first["population"]
    second = succeeded(job, initial_population=population)["result"]
    ga = stock_ga(job, initial_population=population)
    assert second["population"] == ga_result.jsonable(ga.population)
    # generation 0 of the continued run is the stored population: its best values are the first's last
    assert second["best_solutions_fitness"][0] == first["best_solutions_fitness"][-1]
    assert second["objective_maxima"][0] == first["objective_maxima"][-1]


@pytest.mark.slow
def test_multi_objective_fronts_come_close_to_the_true_ones(monkeypatch):
    """One seed of the full quality run (bench/quality_mo.py, 30 seeds, in docs/performance.md): ZDT1's
    front within IGD 0.05 of the true front, DTLZ2's within a mean distance of 0.05 to the unit
    sphere, each with more than 0.7 of the true front's hypervolume, after 200 generations."""
    monkeypatch.syspath_prepend(str(CONTAINER.parent / "bench"))
    import quality_mo

    for problem in quality_mo.PROBLEMS:
        front = quality_mo.front_of(problem, seed=0, generations=200)
        assert quality_mo.closeness(problem, front) < quality_mo.CLOSE, problem
        assert quality_mo.hv(front) > 0.7 * quality_mo.TRUE_HV[problem], problem


def test_report_and_staged_files_of_a_multi_objective_run():
    job = params(
        random_seed=4,
        num_generations=4,
        sol_per_pop=8,
        num_parents_mating=4,
        num_genes=2,
        fitness_func=TWO,
        parent_selection_type="nsga2",
        save_solutions=True,
        save_best_solutions=True,
    )
    outcome = succeeded(job)
    checked = validation.validate_outcome(outcome)
    assert checked is not None, "the report must pass the parent's validation"
    result = checked["result"]
    files = staged_files.take_files(result)
    assert set(files) == {
        "pareto_front.json",
        "pareto_front.csv",
        "pareto_history.json",
        "solutions.json",
        "best_solutions.json",
    }
    assert result["pareto_front"]["size"] == len(result["pareto_front"]["objectives"])
    assert "solutions" not in result and "best_solutions" not in result
    csv = files["pareto_front.csv"].decode().splitlines()
    assert csv[0] == "index,objective_0,objective_1,gene_0,gene_1"
    assert len(csv) == 1 + result["pareto_front"]["size"]
    saved = json.loads(files["solutions.json"])
    assert [entry["generation"] for entry in saved] == [0, 1, 2, 3, 4]
    assert all(len(entry["solutions"]) == 8 and len(entry["fitness"][0]) == 2 for entry in saved)
    best = json.loads(files["best_solutions.json"])
    assert len(best) == 5 and len(best[0]["solution"]) == 2


def test_hostile_front_and_saved_data_are_refused():
    outcome = succeeded(params(random_seed=1, fitness_func=TWO, num_generations=2))
    outcome["result"]["pareto_front"]["objectives"][0] = ["x", 1]
    assert validation.validate_outcome(outcome) is None
    outcome = succeeded(params(random_seed=1, num_generations=2, save_solutions=True))
    outcome["result"]["solutions"][0]["fitness"] = [1.0]
    assert validation.validate_outcome(outcome) is None


# --------------------------------------------------------------------------- warnings and constraints


def test_warnings_are_counted_and_deduplicated_and_printed_once(capsys):
    job = params(
        random_seed=1,
        num_generations=3,
        sol_per_pop=6,
        num_parents_mating=2,
        fitness_func=(
            "import warnings\ndef fitness(ga, s, i):\n"
            "    warnings.warn(f'odd value {s[0]}')\n    return -float((s ** 2).sum())\n"
        ),
    )
    outcome = succeeded(job)
    odd = [w for w in outcome["warnings"] if "odd value" in w["message"]]
    assert len(odd) == 1 and odd[0]["message"].startswith("fitness_func line 3: UserWarning: odd value")
    assert odd[0]["count"] >= 6 + 3 * 5  # every call warned: the first population, then offspring
    assert capsys.readouterr().err.count("odd value") == 1


def test_warnings_past_the_distinct_limit_are_counted_together_and_not_printed():
    """Each of the first MAX_DISTINCT templates is printed once; later new templates are counted in
    one last entry and never printed, so many different warnings cannot flood the output either."""
    printed = io.StringIO()
    tally = WarningTally(("fitness_func",), stream=printed)
    for kind in range(MAX_DISTINCT + 10):
        for _ in range(2):
            tally.show(f"kind {'x' * kind}", UserWarning, "<fitness_func>", 3)
    lines = printed.getvalue().splitlines()
    assert len(lines) == MAX_DISTINCT and len(set(lines)) == MAX_DISTINCT
    assert lines[0] == "fitness_func line 3: UserWarning: kind "
    entries = tally.entries()
    assert [entry["count"] for entry in entries] == [2] * MAX_DISTINCT + [20]
    assert entries[-1]["message"] == f"other warnings (more than {MAX_DISTINCT} different ones)"


def test_the_best_solution_violating_its_constraint_is_said():
    job = params(
        random_seed=1,
        num_generations=3,
        gene_constraint=("c = [lambda s, v: [x for x in v if x > 100], None, None]\n"),
        gene_constraint_entry="c",
    )
    outcome = succeeded(job)
    violations = outcome["result"]["constraint_violations"]
    assert [v["gene"] for v in violations] == [0]
    assert violations[0]["value"] == outcome["result"]["best_solution"][0]
    assert any("violates the gene_constraint of gene(s) 0" in w["message"] for w in outcome["warnings"])
    assert any(
        "No value satisfied the constraint" in w["message"] or "satisf" in w["message"] for w in outcome["warnings"]
    )


def test_a_satisfied_constraint_reports_no_violation():
    job = params(
        random_seed=1,
        num_generations=3,
        gene_constraint=("c = [lambda s, v: [x for x in v if x > 0], None, None]\n"),
        gene_constraint_entry="c",
    )
    assert succeeded(job)["result"]["constraint_violations"] == []
    assert succeeded(params(random_seed=1))["result"]["constraint_violations"] is None


def test_an_invalid_constraint_output_names_the_users_line_and_gene():
    job = params(
        random_seed=1,
        gene_constraint=("def ok(s, v):\n    return v\n\ndef bad(s, v):\n    return [99.0]\nc = [ok, bad, None]\n"),
        gene_constraint_entry="c",
    )
    outcome = execute(job)
    assert outcome["status"] == "failed"
    assert outcome["error"]["message"].startswith(
        "gene_constraint line 4: the function for gene 1 returned [99.0] (list)"
    )
    assert "parameters rejected" not in outcome["error"]["message"]


# --------------------------------------------------------------------------- smaller defects


def test_a_failed_run_keeps_the_progress_it_made():
    job = params(
        random_seed=1,
        num_generations=20,
        fitness_func=(
            "def fitness(ga, s, i):\n    if ga.generations_completed == 5:\n        raise ValueError('boom')\n"
            "    return -float((s ** 2).sum())\n"
        ),
    )
    outcome = execute(job)
    assert outcome["status"] == "failed"
    assert outcome["progress"]["generations_completed"] == 5
    best = outcome["progress"]["best_solution_fitness"]
    assert isinstance(best, float) and best > -48  # the best of the generations it evaluated
    assert validation.validate_outcome(outcome)["progress"] == outcome["progress"]


def test_an_infinite_fitness_is_kept_as_text():
    job = params(
        random_seed=1,
        num_generations=3,
        fitness_func=(
            "import math\ndef fitness(ga, s, i):\n    return math.inf if s[0] > 0 else -float((s ** 2).sum())\n"
        ),
    )
    outcome = succeeded(job)
    assert outcome["result"]["best_solution_fitness"] == "inf"
    assert validation.validate_outcome(outcome)["result"]["best_solution_fitness"] == "inf"
    assert outcome["engine"].startswith("accelerated:")  # same_as_stock below: the same values
    same_as_stock(succeeded({**job, **STOCK_PATH}), stock_ga({**job, **STOCK_PATH}))
