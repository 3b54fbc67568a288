"""child/jobs.py in this process: parameter mapping into pygad.GA, user-code compilation and messages."""

from __future__ import annotations

import math

import numpy
import pygad
import pytest
from conftest import params

from allele_worker.child import jobs
from allele_worker.errors import UserCodeError


def _ga(job_params: dict, initial_population=None) -> pygad.GA:
    spec = jobs.JobSpec(params=job_params, initial_population=initial_population)
    code = jobs.compile_all(job_params)
    guard = jobs.GenerationGuard(
        user_callback=code.get("on_generation"), spec=spec, emit=lambda m: None, rss_mb=lambda: 0.0
    )
    return pygad.GA(**jobs.build_ga_kwargs(spec, code, guard, logger=jobs.pygad_logger()))


CALLBACKS = {
    "on_start": "def cb(ga):\n    pass\n",
    "on_fitness": "def cb(ga, fitness):\n    pass\n",
    "on_parents": "def cb(ga, parents):\n    pass\n",
    "on_crossover": "def cb(ga, offspring):\n    pass\n",
    "on_mutation": "def cb(ga, offspring):\n    pass\n",
    "on_generation": "def cb(ga):\n    pass\n",
    "on_stop": "def cb(ga, fitness):\n    pass\n",
}


def test_every_parameter_reaches_pygad():
    job = params(
        num_generations=7,
        sol_per_pop=12,
        num_parents_mating=5,
        num_genes=4,
        init_range_low=-2,
        init_range_high=3,
        mutation_type="random",
        mutation_probability=0.3,
        mutation_by_replacement=True,
        random_mutation_min_val=-0.5,
        random_mutation_max_val=0.5,
        crossover_type="two_points",
        crossover_probability=0.8,
        parent_selection_type="tournament",
        K_tournament=4,
        keep_parents=2,
        keep_elitism=0,
        gene_type="float",
        allow_duplicate_genes=True,
        stop_criteria=["reach_0", "saturate_5"],
        random_seed=42,
        fitness_batch_size=3,
        sample_size=50,
        fitness_func="def fit(ga, solutions, idx):\n    return [-float((s**2).sum()) for s in solutions]\n",
        fitness_func_entry="fit",
        gene_constraint="limits = [None, None, None, lambda solution, values: [v for v in values if v >= 0]]\n",
        gene_constraint_entry="limits",
        **CALLBACKS,
        **{f"{name}_entry": "cb" for name in CALLBACKS},
    )
    ga = _ga(job)
    assert (ga.num_generations, ga.sol_per_pop, ga.num_parents_mating, ga.num_genes) == (7, 12, 5, 4)
    assert (ga.init_range_low, ga.init_range_high) == (-2, 3)
    assert ga.mutation_probability == 0.3 and ga.mutation_by_replacement is True
    assert (ga.random_mutation_min_val, ga.random_mutation_max_val) == (-0.5, 0.5)
    assert ga.crossover_probability == 0.8 and ga.crossover_type == "two_points"
    assert ga.parent_selection_type == "tournament" and ga.K_tournament == 4
    assert ga.keep_parents == 2 and ga.keep_elitism == 0
    assert ga.gene_type[0] is float
    assert ga.stop_criteria == [["reach", 0.0], ["saturate", 5]]
    assert ga.random_seed == 42 and ga.fitness_batch_size == 3 and ga.sample_size == 50
    assert ga.fitness_func.__name__ == "fit"
    assert ga.gene_constraint[:3] == [None, None, None] and callable(ga.gene_constraint[3])
    for name in CALLBACKS:
        if name == "on_generation":
            assert isinstance(ga.on_generation, jobs.GenerationGuard)
            assert ga.on_generation.user_callback.__name__ == "cb"
        else:
            assert getattr(ga, name).__name__ == "cb", name
    assert ga.allow_duplicate_genes is True


def test_more_parameters_reach_pygad():
    ga = _ga(
        params(
            num_genes=4,
            mutation_type="swap",
            mutation_num_genes=2,
            gene_type="int",
            gene_space=[[1, 2, 3], {"low": 0, "high": 5}, None, [7, 8]],
            allow_duplicate_genes=False,
            parent_selection_type="rank",
            crossover_type="uniform",
        )
    )
    assert ga.mutation_num_genes == 2 and ga.mutation_type == "swap"
    assert ga.gene_type[0] is int and ga.allow_duplicate_genes is False
    assert ga.gene_space[0] == [1, 2, 3] and ga.gene_space[3] == [7, 8]
    ga = _ga(params(num_genes=10, mutation_percent_genes=30))
    assert ga.mutation_percent_genes == 30 and ga.mutation_num_genes == 3


def test_defaults_are_pygads_and_init_range_is_minus_four_to_four():
    ga = _ga(params())
    assert (ga.init_range_low, ga.init_range_high) == (-4, 4)
    assert ga.parent_selection_type == "sss" and ga.keep_elitism == 1 and ga.sample_size == 100
    assert float(ga.population.min()) >= -4 and float(ga.population.max()) <= 4


def test_initial_population_is_passed():
    population = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
    ga = _ga(params(sol_per_pop=4, num_parents_mating=2), initial_population=population)
    assert ga.population.tolist() == population


def test_syntax_error_names_field_and_line():
    with pytest.raises(UserCodeError) as info:
        jobs.compile_user_code("fitness_func", "def f(ga, s, i):\n    x = 1\n    return (\n", "f")
    assert info.value.message.startswith("fitness_func line 3: SyntaxError")
    assert "/" not in info.value.message
    assert info.value.as_error()["stage"] == "compile"  # none of it ran: charged 0 (docs/api.md#credits)


def test_entry_missing_or_wrong_kind():
    with pytest.raises(UserCodeError, match="entry 'g' is not defined"):
        jobs.compile_user_code("fitness_func", "def f(ga, s, i):\n    return 1\n", "g")
    with pytest.raises(UserCodeError, match="not callable"):
        jobs.compile_user_code("on_stop", "f = 3\n", "f")
    with pytest.raises(UserCodeError, match="must be a list"):
        jobs.compile_user_code("gene_constraint", "def c(s, v):\n    return v\n", "c")
    with pytest.raises(UserCodeError, match="item 1"):
        jobs.compile_user_code("gene_constraint", "c = [None, 3]\n", "c")


def test_error_at_module_level_names_line():
    with pytest.raises(UserCodeError) as info:
        jobs.compile_user_code("on_start", "x = 1\ny = x / 0\n", "x")
    assert info.value.message == "on_start line 2: ZeroDivisionError: division by zero"
    assert "stage" not in info.value.as_error()  # it compiled and ran: charged


def test_jsonable():
    data = {
        "a": numpy.float64("nan"),
        "b": numpy.array([1, 2]),
        "c": math.inf,
        "d": numpy.int64(3),
        "e": [numpy.float32(0.5)],
    }
    assert jobs.jsonable(data) == {"a": None, "b": [1, 2], "c": None, "d": 3, "e": [0.5]}


def test_a_batch_answer_is_bounded_per_solution_not_as_a_whole():
    """A batched fitness answers one value (or one objective vector) per solution of the batch: the
    1,000-value bound applies to each solution's answer, whatever the batch's size (up to 5,000)."""

    def per_row(ga, rows, idx):
        return -numpy.sum(rows**2, axis=1)

    def two_per_row(ga, rows, idx):
        return numpy.stack([-numpy.sum(rows**2, axis=1), numpy.sum(rows, axis=1)], axis=1)

    rows = numpy.ones((1200, 3))
    assert jobs.bounded_fitness(per_row, 1200)(None, rows, list(range(1200))).shape == (1200,)
    assert jobs.bounded_fitness(two_per_row, 1200)(None, rows, list(range(1200))).shape == (1200, 2)
    assert len(jobs.bounded_fitness(lambda ga, r, i: [1.0] * 1200, 1200)(None, rows, None)) == 1200
    too_wide = jobs.bounded_fitness(lambda ga, r, i: numpy.zeros((1200, 1001)), 1200)
    with pytest.raises(UserCodeError, match="1001 values for one solution"):
        too_wide(None, rows, None)
    with pytest.raises(UserCodeError, match="1001 values for one solution"):
        jobs.bounded_fitness(lambda ga, r, i: numpy.zeros(1001), None)(None, rows[0], 0)
    source = "import numpy\ndef f(ga, rows, idx):\n    return -numpy.sum(rows ** 2, axis=1)\n"
    outcome = jobs.execute(
        jobs.JobSpec(
            params=params(
                fitness_func=source,
                fitness_func_entry="f",
                sol_per_pop=1200,
                fitness_batch_size=1200,
                num_parents_mating=4,
                num_generations=2,
            )
        ),
        lambda message: None,
    )
    assert outcome["status"] == "succeeded", outcome.get("error")
