"""The published Vilvik SDK (vilvik==0.5.7 from PyPI, unmodified) works against Allele: every call a
user of it makes first — create, get, list, iterate, wait, update, continue, reexecute, delete,
webhooks, health, `vilvik.run`, code uploads, `vilvik.push` of a local PyGAD run (one objective, two
with nsga2, and every gene_type Allele runs; one whose parameters hold NaN is refused naming where) — and
the errors it maps (docs/clients.md); a run of several objectives reads back as PyGAD gives it
(`Result.best_fitness` the best solution's objective values)."""

from __future__ import annotations

import json
import time
import urllib.request

import numpy
import pygad
import pytest
import vilvik
from conftest import JOB
from vilvik.exceptions import APIError, AuthenticationError, NotFoundError, RateLimitError, ValidationError


def sphere(ga, solution, idx):
    """A local run's fitness: `vilvik.push` captures this source (and `import numpy`) itself."""
    return -float(numpy.sum(solution**2))


def sphere_skipping_nan(ga, solution, idx):
    """A local run's fitness that skips a NaN gene (its gene space offers one)."""
    return -float(numpy.nansum(solution**2))


def two_wells(ga, solution, idx):
    """Two objectives, both maximised: close to +1 and close to -1 (a front between them)."""
    return [-float(numpy.sum((solution - 1) ** 2)), -float(numpy.sum((solution + 1) ** 2))]


def dominated(a, b):
    """Whether objective vector `b` dominates `a` (maximised)."""
    return all(y >= x for x, y in zip(a, b)) and any(y > x for x, y in zip(a, b))


def test_the_installed_sdk_is_the_published_one():
    assert vilvik.__version__ == "0.5.7"


def test_create_and_get_carry_real_values(client):
    created = client.submissions.create(name="sdk create", description="from the SDK", **JOB)
    assert created.id and created.status == "queued" and created.name == "sdk create"
    assert created.description == "from the SDK" and created.submission_type == "new"
    assert created.created_at is not None and created.request_id
    assert created.status_url.endswith(f"/api/v1/submissions/{created.id}")
    assert created.result_url.endswith(f"/api/v1/results/?submission_id={created.id}")
    got = client.submissions.get(created.id)
    assert got.id == created.id and got.name == "sdk create"
    assert got.description == "from the SDK" and got.submission_type == "new"
    assert got.created_at is not None and got.status in ("queued", "running", "succeeded")


def test_wait_for_returns_the_result_with_its_solution(client):
    created = client.submissions.create(name="sdk wait", random_seed=3, **JOB)
    result = client.results.wait_for(created.id, timeout=120, poll_interval=0.2)
    assert result.submission_id == created.id
    assert isinstance(result.best_fitness, float) and len(result.best_solution) == JOB["num_genes"]
    assert result.num_generations_ran == JOB["num_generations"] and result.stopped_reason == "completed"
    assert result.created_at is not None


def test_lists_page_with_limit_and_iter_all_follows_the_cursor(client):
    for i in range(3):
        client.submissions.create(name=f"sdk page {i}", **JOB)
    page = client.submissions.list(limit=2)
    assert len(page) == 2 and page.next_cursor
    second = client.submissions.list(limit=2, cursor=page.next_cursor)
    assert {s.id for s in page}.isdisjoint({s.id for s in second})
    everything = list(client.submissions.iter_all(limit=2))
    assert len({s.id for s in everything}) == len(everything) >= 3
    results = client.results.list(limit=1)
    assert len(results) <= 1


def test_update_continue_reexecute_and_delete(client):
    created = client.submissions.create(name="sdk chain", random_seed=5, **JOB)
    result = client.results.wait_for(created.id, timeout=120, poll_interval=0.2)
    renamed = client.results.update(result.id, name="renamed by the SDK", is_shared=True)
    assert renamed.name == "renamed by the SDK" and renamed.is_shared is True
    continued = client.results.continue_run(result.id, num_generations=5)
    assert continued.id == created.id and continued.status == "queued" and continued.name == "sdk chain"
    _until_ended(client, created.id)  # one live run per submission: the next waits for this one
    again = client.submissions.reexecute(created.id, random_seed=6)
    assert again.id == created.id
    _until_ended(client, created.id)
    client.submissions.delete(created.id)
    with pytest.raises(NotFoundError):
        client.submissions.get(created.id)


def _until_ended(client, submission_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not client.submissions.get(submission_id).is_terminal:
        assert time.monotonic() < deadline, f"submission {submission_id} did not end"
        time.sleep(0.2)


def test_vilvik_run_submits_and_yields_the_result(api_key, base_url):
    with vilvik.run(api_key=api_key, base_url=base_url, poll_interval=0.2, timeout=120, **JOB) as result:
        assert isinstance(result.best_fitness, float)


def test_code_uploads_and_a_submission_that_references_one(client):
    upload = client.code_uploads.create(content=JOB["fitness_func"])
    assert upload.code_id and upload.content_size == len(JOB["fitness_func"]) and upload.is_expired is False
    assert upload.content_sha256 and upload.created_at and upload.expires_at > upload.created_at
    got = client.code_uploads.get(upload.code_id)
    assert got.content == JOB["fitness_func"]
    assert upload.code_id in {u.code_id for u in client.code_uploads.list(limit=100)}
    job = {k: v for k, v in JOB.items() if k != "fitness_func"}
    created = client.submissions.create(fitness_func_id=upload.code_id, fitness_func_entry="fitness", **job)
    result = client.results.wait_for(created.id, timeout=120, poll_interval=0.2)
    assert isinstance(result.best_fitness, float)


def test_quick_subset_sum_with_generated_integers(client):
    """The SDK's quick call as its README shows it: the server generates the integers and echoes them."""
    created = client.submissions.create(submission_type="quick_binary_subset_sum", num_integers=20)
    assert created.submission_type == "quick_binary_subset_sum" and created.status == "queued"
    integers = created.generated["integers"]
    assert len(integers) == 20 and all(isinstance(n, int) for n in integers)
    result = client.results.wait_for(created.id, timeout=180, poll_interval=0.5)
    chosen = [integers[i] for i, gene in enumerate(result.best_solution) if gene > 0.5]
    interpretation = result.raw["interpretation"]
    assert interpretation["chosen_integers"] == chosen and interpretation["sum"] == sum(chosen)
    assert interpretation["target"] == created.generated["target"]
    got = client.submissions.get(created.id)
    assert got.submission_type == "quick_binary_subset_sum"


def test_quick_knapsack(client):
    """The SDK README's knapsack call, unmodified: the answer packs within the capacity."""
    created = client.submissions.create(
        submission_type="quick_knapsack",
        item_names=["map", "compass", "water", "rope"],
        item_values=[5, 8, 3, 4],
        item_weights=[[2], [1], [3], [2]],
        dimension_names=["weight"],
        dimension_capacities=[5],
    )
    assert created.submission_type == "quick_knapsack" and created.generated == {}
    result = client.results.wait_for(created.id, timeout=180, poll_interval=0.5)
    interpretation = result.raw["interpretation"]
    assert interpretation["within_capacity"] is True
    assert sorted(interpretation["items"]) == ["compass", "map", "rope"] and interpretation["total_value"] == 17
    assert result.best_fitness == 17


def test_webhooks_list_and_health(client):
    assert isinstance(client.webhooks.list(), list)
    assert client.health()["status"] == "ok"


def test_errors_map_to_the_sdk_exceptions(client, base_url):
    with pytest.raises(NotFoundError):
        client.submissions.get("AAAAAAAAAAAA")
    with pytest.raises(ValidationError) as refused:
        client.submissions.create(submission_type="quick", **JOB)
    assert refused.value.code == "unsupported_submission_type" and refused.value.request_id
    with pytest.raises(ValidationError) as unsupported:
        client.submissions.create(webhook_url="https://example.com/hook", **JOB)
    assert unsupported.value.code == "unsupported_field"
    with pytest.raises(AuthenticationError):
        vilvik.Client(api_key="alk_AAAAAAAA_" + "A" * 40, base_url=base_url).submissions.list()


def test_wait_for_a_failing_run_raises_the_sdks_error(client):
    failing = dict(JOB, fitness_func="def fitness(ga, solution, idx):\n    return 1 / 0\n")
    created = client.submissions.create(name="sdk fails", **failing)
    with pytest.raises(APIError) as failed:
        client.results.wait_for(created.id, timeout=120, poll_interval=0.2)
    assert failed.value.code == "submission_failed" and created.id in failed.value.message
    # The SDK's exception does not carry the run's error; the submission row does.
    error = client.submissions.get(created.id).raw["error"]
    assert error["code"] == "code_error" and "ZeroDivisionError" in error["message"]


def test_push_a_local_pygad_run_then_continue_it(client):
    ga = pygad.GA(
        num_generations=12,
        num_parents_mating=4,
        sol_per_pop=10,
        num_genes=4,
        fitness_func=sphere,
        random_seed=11,
        suppress_warnings=True,
    )
    ga.run()
    best, fitness, _ = ga.best_solution()
    record = vilvik.push(ga, client=client, name="pushed from pytest", description="a local run")
    assert isinstance(record, vilvik.ImportRecord) and record.id and record.result_id
    assert record.result_url.endswith(f"/api/v1/results/{record.result_id}")
    submission = client.submissions.get(record.id)
    assert submission.status == "succeeded" and submission.raw["source"] == "import"
    assert submission.name == "pushed from pytest" and submission.description == "a local run"
    imported = client.results.get(record.result_id)
    assert imported.best_solution == pytest.approx(best.tolist()) and imported.best_fitness == pytest.approx(fitness)
    assert imported.num_generations_ran == 12 and imported.stopped_reason == "imported"
    assert imported.raw["parameters"]["fitness_func_entry"] == "sphere"

    continued = client.results.continue_run(record.result_id, num_generations=6)
    assert continued.id == record.id and continued.status == "queued"
    result = client.results.wait_for(record.id, timeout=120, poll_interval=0.2)
    assert result.id != record.result_id and result.num_generations_ran == 6
    # Elitism keeps the imported best: the continued run started from the imported population.
    assert result.best_fitness >= imported.best_fitness


def test_push_of_a_ga_whose_parameters_hold_nan_is_a_400_naming_where(client):
    # Python's json.dumps (what the SDK sends) writes float('nan') as a bare NaN, which JSON does not have.
    ga = pygad.GA(
        num_generations=3,
        num_parents_mating=4,
        sol_per_pop=10,
        num_genes=4,
        fitness_func=sphere_skipping_nan,
        gene_space=[0.0, 1.0, float("nan")],
        random_seed=11,
        suppress_warnings=True,
    )
    ga.run()
    with pytest.raises(ValidationError) as refused:
        vilvik.push(ga, client=client, name="nan pushed from pytest")
    assert refused.value.status_code == 400 and refused.value.code == "non_finite_number"
    assert refused.value.message.startswith("$.ga_parameters.gene_space[2]: NaN is not a finite number")
    assert refused.value.payload["error"]["details"] == {"path": "$.ga_parameters.gene_space[2]", "value": "NaN"}


def test_push_a_local_multi_objective_nsga2_run_then_continue_it(client, base_url, api_key):
    ga = pygad.GA(
        num_generations=10,
        num_parents_mating=4,
        sol_per_pop=12,
        num_genes=3,
        fitness_func=two_wells,
        parent_selection_type="nsga2",
        random_seed=5,
        suppress_warnings=True,
    )
    ga.run()
    best, objectives, _ = ga.best_solution()
    record = vilvik.push(ga, client=client, name="nsga2 pushed from pytest")
    imported = client.results.get(record.result_id)
    raw = imported.raw
    assert raw["num_objectives"] == 2 and imported.stopped_reason == "imported"
    # As PyGAD gives it: best_solution()'s objective values, for the SDK's Result.best_fitness too.
    assert imported.best_fitness == pytest.approx(objectives.tolist())
    assert raw["best_solution_objectives"] == pytest.approx(objectives.tolist())
    assert imported.best_solution == pytest.approx(best.tolist())
    numpy.testing.assert_allclose(raw["best_solutions_fitness"], numpy.array(ga.best_solutions_fitness))
    # The front Allele computed from the final population is PyGAD's own first front, its distinct solutions
    # (PyGAD's run ends with a selection on the final population: with nsga2, pareto_fronts are its fronts).
    fitness = ga.last_generation_fitness.tolist()
    first = sorted({tuple(ga.population[i].tolist()) for i in ga.pareto_fronts[0][:, 0].astype(int)})
    # The SDK has no file download: read the front's file as any HTTP client would.
    request = urllib.request.Request(
        f"{base_url}/results/{record.result_id}/files/pareto_front.json", headers={"Authorization": f"Bearer {api_key}"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        front = json.load(answer)
    assert raw["pareto_front_size"] == len(front["solutions"]) == len(first)
    numpy.testing.assert_allclose(sorted(map(tuple, front["solutions"])), first)
    for values in front["objectives"]:
        assert not any(dominated(values, other) for other in fitness)
    assert {"pareto_front.json", "pareto_front.csv", "pareto_front.svg"} <= {f["name"] for f in raw["files"]}

    continued = client.results.continue_run(record.result_id, num_generations=5)
    assert continued.id == record.id and continued.status == "queued"
    result = client.results.wait_for(record.id, timeout=120, poll_interval=0.2)
    assert result.id != record.result_id and result.num_generations_ran == 5
    assert result.raw["num_objectives"] == 2 and result.raw["pareto_front_size"] >= 1
    assert result.raw["parameters"]["parent_selection_type"] == "nsga2"
    assert {"pareto_front.json", "pareto_front.csv", "pareto_front.svg"} <= {f["name"] for f in result.raw["files"]}


def test_a_multi_objective_result_reads_as_pygad_gives_it(client):
    """A run of two objectives through the service: Result.best_fitness is the best solution's objective
    values (a list, as PyGAD's best_solution() gives it), the history is PyGAD's best_solutions_fitness
    (one list per generation), and each objective's population maximum is the second series."""
    two = (
        "def fitness(ga, solution, idx):\n"
        "    return [-float((solution ** 2).sum()), -float(((solution - 1) ** 2).sum())]\n"
    )
    created = client.submissions.create(
        name="sdk two objectives", **{**JOB, "fitness_func": two, "parent_selection_type": "nsga2", "random_seed": 4}
    )
    result = client.results.wait_for(created.id, timeout=120, poll_interval=0.2)
    raw = result.raw
    assert raw["num_objectives"] == 2 and isinstance(result.best_fitness, list) and len(result.best_fitness) == 2
    assert result.best_fitness == raw["best_solution_fitness"] == raw["best_solution_objectives"]
    history, maxima = raw["best_solutions_fitness"], raw["objective_maxima"]
    assert len(history) == len(maxima) == JOB["num_generations"] + 1
    assert all(isinstance(row, list) and len(row) == 2 for row in history)
    assert history[-1] == result.best_fitness  # PyGAD's last history entry is the final best solution's
    assert all(m >= h for row_m, row_h in zip(maxima, history) for m, h in zip(row_m, row_h))


@pytest.mark.parametrize(
    "gene_type,expected",
    [
        ([float, 2], ["float", 2]),
        ([int, float, [float, 1], numpy.float32], ["int", "float", ["float", 1], "float32"]),
        (numpy.float32, "float32"),
    ],
    ids=["[float, 2]", "a per-gene list", "numpy.float32"],
)
def test_push_a_run_of_any_gene_type_then_continue_it_with_the_same_types(client, gene_type, expected):
    """`vilvik.push(ga)` sends gene_type as the SDK serialises it ("numpy.float32", or "custom" with a
    `custom_gene_type` expression such as "[float, 2]"): stored as the same types, and continuing the
    import runs them (a precision of 2 rounds every gene of the continued run)."""
    ga = pygad.GA(
        num_generations=6,
        num_parents_mating=4,
        sol_per_pop=8,
        num_genes=4,
        fitness_func=sphere,
        gene_type=gene_type,
        random_seed=3,
        suppress_warnings=True,
    )
    ga.run()
    record = vilvik.push(ga, client=client, name=f"gene_type {expected}")
    imported = client.results.get(record.result_id)
    assert imported.raw["parameters"]["gene_type"] == expected
    client.results.continue_run(record.result_id, num_generations=4)
    result = client.results.wait_for(record.id, timeout=120, poll_interval=0.2)
    assert result.id != record.result_id and result.num_generations_ran == 4
    assert result.raw["parameters"]["gene_type"] == expected
    if expected == ["float", 2]:
        assert all(round(v, 2) == v for v in result.best_solution)
    if isinstance(expected, list) and expected[0] == "int":
        assert float(result.best_solution[0]).is_integer()


def test_a_429_is_the_sdks_rate_limit_error_with_retry_after(limited_client):
    limited_client.submissions.create(name="the day's one run", **JOB)
    with pytest.raises(RateLimitError) as refused:
        limited_client.submissions.create(name="one too many", **JOB)
    assert refused.value.status_code == 429 and refused.value.code == "capacity_exceeded"
    assert isinstance(refused.value.retry_after, int) and 86_000 < refused.value.retry_after <= 86_400
