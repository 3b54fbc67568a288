"""Durable runs, in this process: a run checkpointed at generation boundaries and resumed from any of
its checkpoints ends exactly as the same run uninterrupted (the whole outcome: result, history,
population, saved solutions, warnings, engine path), for every configuration of the fidelity set, on
the stock path and on the accelerated one; checkpointing does not change a run; a checkpoint is an
``.npz`` read without pickle, capped, bound to its job, and a hostile one fails the run cleanly.
Design: docs/architecture.md ("Durable runs")."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np
import pytest
from conftest import params
from test_fidelity import BATCH, CUSTOM_OPERATORS, HONOURED, STOCK_CONFIGS, THREE, TWO, _base

from allele_worker.child import jobs
from allele_worker.engine import checkpoint

AT = (2, 5, 8)  # generation boundaries the tests checkpoint at


def run(
    job: dict[str, Any], *, at: tuple[int, ...] = (), resume: bytes | None = None
) -> tuple[dict[str, Any], dict[int, bytes]]:
    """The job's outcome, and the checkpoints it wrote by the generation they resume at."""
    taken: dict[int, bytes] = {}
    plan = None
    if at:
        plan = jobs.CheckpointPlan(sink=lambda data: taken.__setitem__(len(taken), data), interval=1e9)
        plan.at_generations = frozenset(at)
    outcome = jobs.execute(jobs.JobSpec(params=job, checkpoints=plan, resume_from=resume), emit=lambda m: None)
    by_generation: dict[int, bytes] = {}
    for data in taken.values():
        document, arrays = checkpoint.read(data, 1 << 30)
        by_generation[checkpoint.decode(document["extra"], arrays)["generation"]] = data
    return outcome, by_generation


def plan_refusal(job: dict[str, Any]) -> str | None:
    plan = jobs.CheckpointPlan(sink=lambda data: None, interval=1e9, at_generations=frozenset(AT))
    jobs.execute(jobs.JobSpec(params=job, checkpoints=plan), emit=lambda m: None)
    return plan.refused


def assert_resumes_exactly(job: dict[str, Any], at: tuple[int, ...] = AT) -> None:
    plain, _ = run(job)
    assert plain["status"] == "succeeded", plain.get("error")
    checkpointed, taken = run(job, at=at)
    assert checkpointed == plain  # taking checkpoints changes nothing
    if plain["result"]["generations_completed"] > max(at):
        assert set(taken) == set(at), plan_refusal(job)
    for generation, data in taken.items():
        resumed, _ = run(job, resume=data)
        assert resumed == plain, f"resumed at generation {generation}"
    if len(taken) >= 2:  # resumed from the first, checkpointing again, resumed from a later one
        first, *later = sorted(taken)
        again, retaken = run(job, at=tuple(later), resume=taken[first])
        assert again == plain
        for generation, data in retaken.items():
            assert data == taken[generation] or run(job, resume=data)[0] == plain


@pytest.mark.parametrize("config", list(STOCK_CONFIGS), ids=list(STOCK_CONFIGS))
def test_the_stock_path_resumes_exactly(config):
    job = params(random_seed=11, num_generations=12, sol_per_pop=10, num_parents_mating=4, num_genes=3)
    job.update(STOCK_CONFIGS[config])
    assert_resumes_exactly(job)


@pytest.mark.parametrize("stock", [True, False], ids=["stock", "accelerated"])
@pytest.mark.parametrize("name,value,extra", HONOURED, ids=[f"{name}={value!r}"[:60] for name, value, _ in HONOURED])
def test_every_parameter_resumes_exactly(name, value, extra, stock):
    if name == "stop_criteria" and str(value).startswith("time"):
        pytest.skip("a time criterion depends on the clock")
    assert_resumes_exactly({**_base(extra, stock=stock), name: value})


@pytest.mark.parametrize("field", list(CUSTOM_OPERATORS))
@pytest.mark.parametrize("stock", [True, False], ids=["stock", "accelerated"])
def test_custom_operators_resume_exactly(field, stock):
    source = CUSTOM_OPERATORS[field]
    entry = source.split("def ")[1].split("(")[0]
    assert_resumes_exactly({**_base({}, stock=stock), field: source, f"{field}_entry": entry})


ACCELERATED = params(random_seed=3, num_generations=15, sol_per_pop=12, num_parents_mating=4, num_genes=4)
MORE = {
    "processes": dict(parallel_processing=["process", 2]),
    "accelerated, the lean loop": {},
    "accelerated, tournament and uniform": dict(parent_selection_type="tournament", crossover_type="uniform"),
    "accelerated, saturate": dict(stop_criteria="saturate_3", num_generations=40),
    "stock, saturate": dict(
        gene_type=["float", None], stop_criteria="saturate_3", num_generations=40, mutation_probability=0.05
    ),
    "accelerated, evaluations": dict(stop_criteria="evaluations_90"),
    "accelerated, a gene space dict": dict(gene_space={"low": -2, "high": 2}, gene_type="int"),
    "accelerated, adaptive mutation": dict(mutation_type="adaptive", mutation_probability=[0.6, 0.1]),
    "accelerated, on_fitness": dict(
        on_fitness="def f(ga, fitness):\n    return fitness - 1\n",
        on_fitness_entry="f",
    ),
    "nsga3": dict(fitness_func=THREE, parent_selection_type="nsga3", nsga3_num_divisions=3),
    "tournament_nsga3": dict(fitness_func=THREE, parent_selection_type="tournament_nsga3", nsga3_num_divisions=2),
    "several objectives, lean hand-over": dict(fitness_func=TWO),
    "a batch fitness": dict(fitness_batch_size=5, fitness_func=BATCH),
    "threads": dict(parallel_processing=["thread", 2]),
    "the global generators in user code": dict(
        fitness_func=(
            "import random\nimport numpy\n"
            "numpy.random.seed(7)\nrandom.seed(7)  # at load: a resumed run's load does it again\n"
            "def fitness(ga, solution, idx):\n"
            "    return -float((solution ** 2).sum()) + numpy.random.random() + random.random()\n"
        ),
        on_generation=(
            "import random\nimport numpy\ndef g(ga):\n    numpy.random.shuffle(ga.population)\n    random.random()\n"
        ),
        on_generation_entry="g",
    ),
    "warnings before and after": dict(
        fitness_func=(
            "import warnings\n"
            "def fitness(ga, solution, idx):\n"
            "    warnings.warn(f'generation {ga.generations_completed}')\n"
            "    return -float((solution ** 2).sum())\n"
        )
    ),
}


@pytest.mark.parametrize("config", list(MORE), ids=list(MORE))
def test_more_configurations_resume_exactly(config):
    assert_resumes_exactly({**ACCELERATED, **MORE[config]})


def test_a_continue_with_a_start_population_resumes_exactly():
    job = dict(ACCELERATED)
    start = np.arange(48, dtype=float).reshape(12, 4).tolist()
    plain = jobs.execute(jobs.JobSpec(params=job, initial_population=start), emit=lambda m: None)
    taken: list[bytes] = []
    plan = jobs.CheckpointPlan(sink=taken.append, interval=1e9, at_generations=frozenset({4}))
    jobs.execute(jobs.JobSpec(params=job, initial_population=start, checkpoints=plan), emit=lambda m: None)
    resumed = jobs.execute(jobs.JobSpec(params=job, initial_population=start, resume_from=taken[0]), lambda m: None)
    assert resumed == plain


def test_on_start_is_not_called_again_on_resume():
    job = {
        **ACCELERATED,
        "on_start": "import warnings\ndef s(ga):\n    warnings.warn('started')\n",
        "on_start_entry": "s",
    }
    plain, taken = run(job, at=(3,))
    resumed, _ = run(job, resume=taken[3])
    assert resumed == plain
    assert next(w for w in resumed["warnings"] if "started" in w["message"])["count"] == 1


def test_a_checkpoint_is_an_npz_without_pickle():
    _, taken = run(dict(ACCELERATED), at=(3,))
    data = taken[3]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
    assert "__state__.npy" in names and all(name.endswith(".npy") for name in names)
    with np.load(io.BytesIO(data), allow_pickle=False) as loaded:  # would raise on an object array
        assert all(loaded[name].dtype != object for name in loaded.files)


def test_a_checkpoint_past_the_cap_is_not_written_and_the_run_goes_on():
    taken: list[bytes] = []
    plan = jobs.CheckpointPlan(sink=taken.append, interval=1e9, max_bytes=100, at_generations=frozenset({2}))
    outcome = jobs.execute(jobs.JobSpec(params=dict(ACCELERATED), checkpoints=plan), emit=lambda m: None)
    assert outcome == run(dict(ACCELERATED))[0]
    assert taken == [] and plan.taken == 0 and plan.refused and "past the run's 100" in plan.refused


HOSTILE = {
    "not a zip": b"not a checkpoint",
    "empty": b"",
    "a pickle": b"\x80\x04K\x01.",
    "a zip bomb": None,
    "an object array": None,
    "another job's": None,
    "a bad tag": None,
}


def _hostile(kind: str) -> bytes:
    job = dict(ACCELERATED)
    if HOSTILE[kind] is not None:
        return HOSTILE[kind]  # type: ignore[return-value]
    buffer = io.BytesIO()
    if kind == "a zip bomb":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("__state__.npy", b"\0" * (200 << 20))
        return buffer.getvalue()
    if kind == "an object array":
        np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
        with zipfile.ZipFile(out := io.BytesIO(), "w") as archive:
            archive.writestr("__state__.npy", buffer.getvalue())
        return out.getvalue()
    _, taken = run({**job, "random_seed": 99} if kind == "another job's" else job, at=(3,))
    data = taken[3]
    if kind == "a bad tag":
        document, arrays = checkpoint.read(data, 1 << 30)
        document["attributes"]["population"] = {"$": "eval", "v": "__import__('os')"}
        out = io.BytesIO()
        checkpoint.write(out.write, document, arrays, 1 << 30)
        return out.getvalue()
    return data


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_checkpoint_fails_the_run_cleanly(kind):
    plan = jobs.CheckpointPlan(sink=lambda data: None, max_bytes=1 << 20)
    spec = jobs.JobSpec(params=dict(ACCELERATED), checkpoints=plan, resume_from=_hostile(kind))
    outcome = jobs.execute(spec, emit=lambda m: None)
    assert outcome["status"] == "failed"
    assert outcome["error"]["code"] == "internal_error"
    assert "checkpoint" in outcome["error"]["message"]


def test_every_attribute_of_a_run_is_state_or_configuration():
    """``capture`` writes every attribute it can and raises on any other: nothing is left out silently."""
    ga_holder: list[Any] = []
    job = {**ACCELERATED, "on_generation": "def g(ga):\n    ga.my_note = object()\n", "on_generation_entry": "g"}
    plan = jobs.CheckpointPlan(sink=lambda data: None, interval=1e9, at_generations=frozenset({2}))
    outcome = jobs.execute(jobs.JobSpec(params=job, checkpoints=plan), emit=lambda m: ga_holder.append(m))
    assert outcome["status"] == "succeeded"
    assert plan.taken == 0 and plan.refused is not None and plan.refused.startswith("my_note: a object")


@pytest.mark.parametrize("stock", [True, False], ids=["stock", "accelerated"])
def test_saturate_counts_across_a_resume(stock):
    """A checkpoint at every generation: the saturate counter goes on from where it was."""
    job = {**_base({}, stock=stock), "stop_criteria": "saturate_3", "num_generations": 40, "mutation_probability": 0.05}
    plain, _ = run(job)
    assert plain["result"]["stopped_reason"] == "stop_criteria"
    assert_resumes_exactly(job, at=tuple(range(1, plain["result"]["generations_completed"])))
