"""The published Vilvik SDK (vilvik==0.5.7 from PyPI, unmodified) works against Allele: every call a
user of it makes first — create, get, list, iterate, wait, update, continue, reexecute, delete,
webhooks, health, `vilvik.run` — and the errors it maps (docs/clients.md)."""

from __future__ import annotations

import time

import pytest
import vilvik
from conftest import JOB
from vilvik.exceptions import AuthenticationError, NotFoundError, ValidationError


def test_the_installed_sdk_is_the_published_one():
    assert vilvik.__version__ == "0.5.7"


def test_create_and_get_carry_real_values(client):
    created = client.submissions.create(name="sdk create", description="from the SDK", **JOB)
    assert created.id and created.status == "queued"
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
    assert continued.id == created.id and continued.status == "queued"
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
