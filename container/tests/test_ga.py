"""Whole GA runs in a real sandboxed child: constraints, callbacks, stop reasons, seeds, continue,
user-code errors."""

from __future__ import annotations

import pytest
from conftest import params, run_child


@pytest.mark.slow
def test_completed_run_shape(host):
    body, _ = run_child(host, params(random_seed=3))
    assert body["status"] == "succeeded" and body["error"] is None
    assert body["engine"] == "accelerated:sss+single_point+random"
    result = body["result"]
    assert result["stopped_reason"] == "completed" and result["generations_completed"] == 10
    assert len(result["best_solutions_fitness"]) == 11  # initial population + each generation
    assert len(result["population"]) == 8 and len(result["best_solution"]) == 3
    assert result["best_solution_fitness"] == max(result["best_solutions_fitness"])
    assert body["_progress"] and body["metrics"]["cpu_seconds_used"] > 0
    assert body["metrics"]["peak_memory_mb"] > 0 and body["metrics"]["execution_duration_ms"] > 0


@pytest.mark.slow
def test_gene_constraint_and_sample_size(host):
    job = params(
        num_genes=3,
        num_generations=15,
        sol_per_pop=10,
        sample_size=200,
        random_seed=5,
        gene_constraint=(
            "def positive(solution, values):\n"
            "    return [v for v in values if v > 1]\n"
            "constraints = [positive, None, lambda s, v: [x for x in v if x < -1]]\n"
        ),
        gene_constraint_entry="constraints",
        on_generation=(
            "def check(ga):\n"
            "    assert ga.sample_size == 200\n"
            "    assert (ga.population[:, 0] > 1).all(), ga.population[:, 0]\n"
            "    assert (ga.population[:, 2] < -1).all(), ga.population[:, 2]\n"
        ),
        on_generation_entry="check",
    )
    body, _ = run_child(host, job)
    assert body["status"] == "succeeded", body["error"]
    population = body["result"]["population"]
    assert all(row[0] > 1 and row[2] < -1 for row in population)


@pytest.mark.slow
def test_callbacks_fire_and_on_generation_stop(host):
    log = "def {name}(*args):\n    print('{name}')\n"
    job = params(num_generations=50, random_seed=1)
    for name in ("on_start", "on_fitness", "on_parents", "on_crossover", "on_mutation", "on_stop"):
        job[name], job[f"{name}_entry"] = log.format(name=name), name
    job["on_generation"] = (
        "def on_generation(ga):\n    print('on_generation')\n"
        "    if ga.generations_completed == 3:\n        return 'stop'\n"
    )
    job["on_generation_entry"] = "on_generation"
    body, _ = run_child(host, job)
    assert body["status"] == "succeeded", body["error"]
    assert body["result"]["stopped_reason"] == "callback_stop"
    assert body["result"]["generations_completed"] == 3
    lines = body["output"].split()
    assert lines.count("on_start") == 1 and lines.count("on_stop") == 1
    assert lines.count("on_generation") == 3 and lines.count("on_mutation") == 3
    for name in ("on_fitness", "on_parents", "on_crossover"):
        assert name in lines


@pytest.mark.slow
def test_stop_criteria(host):
    job = params(num_generations=200, stop_criteria="saturate_3", random_seed=2, gene_space=[0, 1], gene_type="int")
    body, _ = run_child(host, job)
    assert body["result"]["stopped_reason"] == "stop_criteria"
    assert body["result"]["generations_completed"] < 200


@pytest.mark.slow
def test_random_seed_reproducible(host):
    job = params(num_generations=15, random_seed=1234)
    first, _ = run_child(host, job)
    second, _ = run_child(host, job)
    for key in ("best_solution", "best_solutions_fitness", "population", "best_solution_generation"):
        assert first["result"][key] == second["result"][key], key


@pytest.mark.slow
def test_continue_from_initial_population(host):
    first, _ = run_child(host, params(random_seed=9))
    population = first["result"]["population"]
    job = params(
        random_seed=9,
        num_generations=5,
        on_start=(
            f"def s(ga):\n    import numpy\n    assert numpy.allclose(ga.population, numpy.array({population!r}))\n"
        ),
        on_start_entry="s",
    )
    second, _ = run_child(host, job, initial_population=population)
    assert second["status"] == "succeeded", second["error"]
    assert second["result"]["best_solutions_fitness"][0] == first["result"]["best_solution_fitness"]


@pytest.mark.slow
def test_runtime_error_names_line(host):
    job = params(fitness_func="def f(ga, s, i):\n    x = 1\n    return x / 0\n", fitness_func_entry="f")
    body, _ = run_child(host, job)
    assert body["status"] == "failed" and body["result"] is None
    assert body["error"] == {
        "code": "code_error",
        "message": "fitness_func line 3: ZeroDivisionError: division by zero",
    }
    assert "site-packages" not in body["output"] and "jobs.py" not in body["output"]


@pytest.mark.slow
def test_syntax_error_names_line(host):
    job = params(on_stop="def s(ga, f):\n    pass\n  oops\n", on_stop_entry="s")
    body, _ = run_child(host, job)
    assert body["error"]["code"] == "code_error"
    assert body["error"]["message"].startswith("on_stop line 3: ")


@pytest.mark.slow
def test_missing_entry(host):
    body, _ = run_child(host, params(fitness_func_entry="nope"))
    assert body["error"] == {"code": "code_error", "message": "fitness_func: entry 'nope' is not defined by the code"}


@pytest.mark.slow
def test_soft_time_cap_stops_at_generation_boundary(host):
    job = params(
        num_generations=100000,
        fitness_func="import time\ndef f(ga, s, i):\n    time.sleep(0.002)\n    return 1.0\n",
        fitness_func_entry="f",
    )
    body, _ = run_child(host, job, time_seconds=1)
    assert body["status"] == "succeeded", body["error"]
    assert body["result"]["stopped_reason"] == "time_cap"
    assert body["metrics"]["hit_time_cap"] is True and body["metrics"]["hit_memory_cap"] is False
    # Stopped by the soft cap, at a boundary (succeeded, not killed at the hard cap), not before it.
    assert body["metrics"]["execution_duration_ms"] >= 1000


@pytest.mark.slow
def test_soft_memory_cap(host):
    job = params(
        num_generations=100000,
        on_start="keep = []\ndef s(ga):\n    keep.append(bytearray(80 * 2**20))\n",
        on_start_entry="s",
    )
    body, _ = run_child(host, job, memory_mb=64)
    assert body["status"] == "succeeded", body["error"]
    assert body["result"]["stopped_reason"] == "memory_cap"
    assert body["metrics"]["hit_memory_cap"] is True
