"""The HTTP surface end to end: real run manager, real children, a fake Worker for the reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
import urllib.request

import pytest
from conftest import params
from starlette.testclient import TestClient

from allele_worker.child.collector import Collector
from allele_worker.sandbox import Limits, ProcessReport
from allele_worker.sandbox.process import collected_summary
from allele_worker.sandbox.store import Store, payload_chunks
from allele_worker.worker import completion, runs
from allele_worker.worker.app import create_app
from allele_worker.worker.runs import RunManager

TOKEN = "ab" * 32


@pytest.fixture
def client(host, tmp_path):
    manager = RunManager(host=host, run_root=str(tmp_path))
    with TestClient(create_app(manager)) as test_client:
        test_client.manager = manager
        yield test_client
    manager.wait_idle(10)


def body(run_id: str, worker_url: str, **changes) -> dict:
    data = {
        "run_id": run_id,
        "submission_id": "sub123456789",
        "params": params(random_seed=1),
        "initial_population": None,
        "caps": {"time_seconds": 30, "memory_mb": 512},
        "report": {"url": f"{worker_url}/internal/v1/runs/{run_id}", "token": TOKEN},
    }
    data.update(changes)
    return data


@pytest.mark.slow
def test_health(client):
    answer = client.get("/health")
    assert answer.status_code == 200
    data = answer.json()
    assert data["status"] == "ok" and data["active_runs"] == 0 and data["version"]
    assert {"user", "network", "rlimits"} <= set(data["isolation"])
    assert data["capacity"] >= 1 and data["in_use"] == 0


@pytest.mark.slow
def test_a_start_past_the_worker_places_is_refused_and_a_place_frees_with_the_child(host, tmp_path, fake_worker):
    """WORKER_CONCURRENCY places: one more start is 503 at_capacity and starts nothing; once a run's
    child is gone its place is free again (the completion report may still be on its way)."""
    manager = RunManager(host=host, run_root=str(tmp_path), concurrency=1)
    with TestClient(create_app(manager)) as client:
        slow = params(
            fitness_func="import time\ndef f(ga, s, i):\n    time.sleep(0.05)\n    return 0.0\n",
            fitness_func_entry="f",
            num_generations=20,
        )
        assert client.post("/runs", json=body("runCAP000001", fake_worker.url, params=slow)).status_code == 202
        refused = client.post("/runs", json=body("runCAP000002", fake_worker.url))
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "at_capacity"
        assert client.get("/health").json()["in_use"] == 1
        assert client.get("/runs/runCAP000002").status_code == 404  # nothing of it was started
        fake_worker.wait_for("/complete")
        deadline = time.monotonic() + 10
        while client.get("/health").json()["in_use"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.post("/runs", json=body("runCAP000003", fake_worker.url)).status_code == 202
    manager.wait_idle(10)


@pytest.mark.slow
def test_a_run_with_parallel_workers_takes_a_place_per_worker(host, tmp_path, fake_worker):
    """``parallel_processing`` N: the run takes N places (at most all of them), so a run that would
    need more than are left is refused; one asking for more than the worker has takes them all."""
    manager = RunManager(host=host, run_root=str(tmp_path), concurrency=3)
    slow = "import time\ndef f(ga, s, i):\n    time.sleep(0.05)\n    return 0.0\n"
    with TestClient(create_app(manager)) as client:
        wide = params(fitness_func=slow, fitness_func_entry="f", num_generations=20, parallel_processing=["process", 2])
        assert client.post("/runs", json=body("runPAR000001", fake_worker.url, params=wide)).status_code == 202
        assert client.get("/health").json()["in_use"] == 2
        both = params(parallel_processing=2)
        refused = client.post("/runs", json=body("runPAR000002", fake_worker.url, params=both))
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "at_capacity"
        narrow = params(fitness_func=slow, fitness_func_entry="f", num_generations=20)
        assert client.post("/runs", json=body("runPAR000003", fake_worker.url, params=narrow)).status_code == 202
        assert client.get("/health").json()["in_use"] == 3
        assert manager.wait_idle(30)
        everything = params(
            fitness_func=slow, fitness_func_entry="f", num_generations=20, parallel_processing=["thread", 8]
        )
        assert client.post("/runs", json=body("runPAR000004", fake_worker.url, params=everything)).status_code == 202
        assert client.get("/health").json()["in_use"] == 3
    manager.wait_idle(10)


@pytest.mark.slow
def test_run_reports_progress_and_complete(client, fake_worker):
    job = body(
        "runAAA000001",
        fake_worker.url,
        params=params(
            num_generations=30,
            random_seed=1,
            fitness_func=("import time\ndef f(ga, s, i):\n    time.sleep(0.01)\n    return -float((s**2).sum())\n"),
            fitness_func_entry="f",
        ),
    )
    answer = client.post("/runs", json=job)
    assert answer.status_code == 202 and answer.json() == {"run_id": "runAAA000001", "state": "running"}
    complete = fake_worker.wait_for("/complete")
    assert complete["authorization"] == f"Bearer {TOKEN}"
    assert complete["path"] == "/internal/v1/runs/runAAA000001/complete"
    report = complete["body"]
    assert report["status"] == "succeeded" and report["result"]["generations_completed"] == 30
    assert set(report) == {"status", "result", "error", "metrics", "output", "engine", "warnings", "progress"}
    # a small final population rides inside the report (no PUT of its own)
    population = report["result"]["population"]
    assert len(population) == 8 and all(len(row) == 3 for row in population)
    assert all(isinstance(v, float) for row in population for v in row)
    assert not any(p.endswith("/population") for p in fake_worker.paths())
    progress = [r for r in fake_worker.requests if r["path"].endswith("/progress")]
    assert progress, fake_worker.paths()
    assert progress[0]["authorization"] == f"Bearer {TOKEN}"
    # one objective: the population's [best, mean, median, worst] too, once a generation has ended, and
    # the trail points of the generations since the last report
    assert set(progress[0]["body"]) - {"population", "points"} == {"generations_completed", "best_solution_fitness"}
    # Together (the last report just before the completion's), every generation once, from generation 0.
    assert [p[0] for r in progress for p in r["body"].get("points", [])] == list(range(31))
    assert sum(p.endswith("/complete") for p in fake_worker.paths()) == 1


@pytest.mark.slow
def test_the_first_progress_report_waits_one_interval(host, tmp_path, fake_worker):
    """The heartbeat's first report goes one interval after the start (the Worker's claim stamped the
    heartbeat when it started the run): a run that ends sooner reports its completion only."""
    manager = RunManager(host=host, run_root=str(tmp_path), progress_seconds=60)
    with TestClient(create_app(manager)) as client:
        assert client.post("/runs", json=body("runHBT000001", fake_worker.url)).status_code == 202
        fake_worker.wait_for("/complete")
    assert manager.wait_idle(10)
    assert not any(path.endswith("/progress") for path in fake_worker.paths()), fake_worker.paths()


@pytest.mark.slow
def test_a_run_the_worker_no_longer_has_live_is_stopped_at_its_next_progress(host, tmp_path, fake_worker):
    """A run the Worker ended while its start was on the way (a delete between the claim and POST /runs:
    the cancel found no such run here) answers 409 to its first progress report: it is stopped as by a
    cancel, sends no completion and frees its place, instead of running to its end unbilled; and it is
    forgotten, so a later start of the same run (re-queued by the Worker) runs."""
    manager = RunManager(host=host, run_root=str(tmp_path), progress_seconds=0.2)
    fake_worker.status_for["/progress"] = 409
    slow = params(
        num_generations=100000, fitness_func="def f(ga, s, i):\n    return sum(range(20000))\n", fitness_func_entry="f"
    )
    with TestClient(create_app(manager)) as client:
        assert client.post("/runs", json=body("runORPHAN0001", fake_worker.url, params=slow)).status_code == 202
        fake_worker.wait_for("/progress")
        assert manager.wait_idle(15)
        assert sum(p.endswith("/progress") for p in fake_worker.paths()) == 1
        assert not any(p.endswith("/complete") for p in fake_worker.paths())
        # Not remembered as finished: the Worker starting it again (it had put the run back in line
        # after a start it saw fail) starts it.
        assert client.get("/runs/runORPHAN0001").status_code == 404
        del fake_worker.status_for["/progress"]
        again = body("runORPHAN0001", fake_worker.url)
        assert client.post("/runs", json=again).status_code == 202
        fake_worker.wait_for("/complete")
        assert manager.wait_idle(15)


@pytest.mark.slow
def test_duplicate_post_starts_nothing(client, fake_worker):
    job = body("runBBB000002", fake_worker.url)
    assert client.post("/runs", json=job).status_code == 202
    again = client.post("/runs", json=job)
    assert again.status_code == 200 and again.json()["run_id"] == "runBBB000002"
    fake_worker.wait_for("/complete")
    assert client.manager.wait_idle(10)
    finished = client.post("/runs", json=job)
    assert finished.status_code == 200 and finished.json()["state"] == "finished"
    time.sleep(0.3)
    assert sum(p.endswith("/complete") for p in fake_worker.paths()) == 1


@pytest.mark.slow
def test_cancel(client, fake_worker):
    job = body(
        "runCCC000003",
        fake_worker.url,
        params=params(
            num_generations=100000,
            fitness_func="def f(ga, s, i):\n    return sum(range(20000))\n",
            fitness_func_entry="f",
        ),
    )
    assert client.post("/runs", json=job).status_code == 202
    time.sleep(1.0)
    assert client.get("/runs/runCCC000003").json()["state"] == "running"
    answer = client.post("/runs/runCCC000003/cancel")
    assert answer.status_code == 200
    metrics = answer.json()["metrics"]
    assert answer.json()["run_id"] == "runCCC000003"
    # Measured up to the cancel (how much CPU a second gave it depends on the machine's load).
    assert metrics["cpu_seconds_used"] > 0 and metrics["execution_duration_ms"] >= 900
    assert client.manager.wait_idle(10)
    time.sleep(0.5)
    assert not any(p.endswith("/complete") for p in fake_worker.paths())
    assert client.post("/runs/runCCC000003/cancel").status_code == 404
    # The container's Durable Object asks this before letting an idle instance sleep.
    assert client.get("/runs/runCCC000003").json() == {"run_id": "runCCC000003", "state": "finished"}


@pytest.mark.slow
def test_cancel_unknown(client):
    answer = client.post("/runs/nosuchrun123/cancel")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_run"
    assert client.get("/runs/nosuchrun123").status_code == 404


@pytest.mark.slow
def test_invalid_bodies(client, fake_worker):
    assert client.post("/runs", content=b"{nope").status_code == 400
    bad = body("runDDD000004", fake_worker.url)
    del bad["caps"]
    answer = client.post("/runs", json=bad)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_request"
    bad = body("run/../x", fake_worker.url)
    assert client.post("/runs", json=bad).status_code == 400


@pytest.mark.slow
def test_failed_run_reports_code_error(client, fake_worker):
    job = body(
        "runEEE000005",
        fake_worker.url,
        params=params(fitness_func="def f(ga, s, i):\n    return undefined_name\n", fitness_func_entry="f"),
    )
    client.post("/runs", json=job)
    report = fake_worker.wait_for("/complete")["body"]
    assert report["status"] == "failed" and report["result"] is None
    assert report["error"] == {
        "code": "code_error",
        "message": "fitness_func line 2: NameError: name 'undefined_name' is not defined",
    }


@pytest.mark.slow
def test_a_killed_run_reports_how_far_its_last_progress_got(client, fake_worker):
    """Killed past its wall time with no generation boundary in time: the report keeps the progress
    of the last generation the child told of, not generation 0 and no fitness."""
    job = body(
        "runEEE000006",
        fake_worker.url,
        caps={"time_seconds": 1, "memory_mb": 512},
        params=params(
            fitness_func=(
                "import time\ndef f(ga, s, i):\n"
                "    if ga.generations_completed == 2:\n        time.sleep(60)\n"
                "    return -float((s ** 2).sum())\n"
            ),
            fitness_func_entry="f",
            random_seed=1,
        ),
    )
    client.post("/runs", json=job)
    report = fake_worker.wait_for("/complete")["body"]
    assert report["error"]["code"] == "time_limit_exceeded"
    assert report["progress"]["generations_completed"] == 1
    assert isinstance(report["progress"]["best_solution_fitness"], float)


@pytest.mark.slow
def test_worker_starts_from_any_cwd(tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, PORT=str(port))
    server = subprocess.Popen([sys.executable, "-m", "allele_worker"], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
                    data = json.load(answer)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        assert data["status"] == "ok"
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=10)
    assert b"isolation:" in stderr


@pytest.mark.slow
def test_run_starts_from_the_population_at_its_url(client, fake_worker):
    run_url = f"{fake_worker.url}/internal/v1/runs/runFFF000006"
    served = [[0.0, 0.0, 0.0]] + [[3.0, -3.0, 3.0]] * 7  # random init never gives an exact 0 row
    fake_worker.served["/internal/v1/runs/runFFF000006/initial-population"] = served
    job = body(
        "runFFF000006",
        fake_worker.url,
        params=params(num_generations=3, random_seed=1),
        initial_population_url=f"{run_url}/initial-population",
    )
    assert client.post("/runs", json=job).status_code == 202
    report = fake_worker.wait_for("/complete")["body"]
    [fetch] = [r for r in fake_worker.requests if r["method"] == "GET"]
    assert fetch["path"] == "/internal/v1/runs/runFFF000006/initial-population"
    assert fetch["authorization"] == f"Bearer {TOKEN}"
    assert report["status"] == "succeeded", report
    assert report["result"]["best_solutions_fitness"][0] == 0.0
    assert report["result"]["best_solution"] == [0.0, 0.0, 0.0]


@pytest.mark.slow
def test_the_worker_never_parses_a_start_population(client, fake_worker, monkeypatch):
    """A fetched start population reaches the job unread (the job parses it under the run's caps):
    no JSON parse in the worker's process sees its bytes."""
    run_id = "runFFF000016"
    served = b"[[0, 0, 0]" + b", [3, -3, 3]" * 7 + b" " * (1 << 20) + b"]"
    fake_worker.served[f"/internal/v1/runs/{run_id}/initial-population"] = served
    parsed: list[int] = []
    real = json.loads
    monkeypatch.setattr(json, "loads", lambda data, *a, **k: parsed.append(len(data)) or real(data, *a, **k))
    job = body(
        run_id,
        fake_worker.url,
        params=params(num_generations=3, random_seed=1),
        initial_population_url=f"{fake_worker.url}/internal/v1/runs/{run_id}/initial-population",
    )
    assert client.post("/runs", json=job).status_code == 202
    report = fake_worker.wait_for("/complete")["body"]
    assert report["status"] == "succeeded", report
    assert report["result"]["best_solution"] == [0.0, 0.0, 0.0]
    assert parsed and max(parsed) < len(served)


@pytest.mark.slow
@pytest.mark.parametrize(
    "served",
    # The worker fetches it unread; the job parses and checks it apart from its spec (bytes meant to
    # close the population and set the spec's sandbox plan are just not JSON there).
    [404, {"not": "a population"}, [[1.0, 2.0], [3.0]], b'[[1, 2]]], "sandbox": null, "x": [[1', b"[" * 100_000],
    ids=["404", "object", "ragged", "not-json", "too-deep"],
)
def test_start_population_not_loaded_fails_the_run(client, fake_worker, served):
    run_id = "runGGG000007"
    fake_worker.served[f"/internal/v1/runs/{run_id}/initial-population"] = served
    job = body(
        run_id,
        fake_worker.url,
        initial_population_url=f"{fake_worker.url}/internal/v1/runs/{run_id}/initial-population",
    )
    assert client.post("/runs", json=job).status_code == 202
    complete = fake_worker.wait_for("/complete")
    report = complete["body"]
    assert complete["authorization"] == f"Bearer {TOKEN}"
    assert report["status"] == "failed" and report["result"] is None
    assert report["error"] == {"code": "internal_error", "message": "the start population could not be loaded"}
    assert [r["method"] for r in fake_worker.requests if r["path"].endswith("/initial-population")] == ["GET"]
    assert not any(p.endswith("/population") for p in fake_worker.paths())


@pytest.mark.slow
def test_cancel_while_fetching_the_start_population(client, fake_worker):
    run_id = "runKKK000011"
    fake_worker.served[f"/internal/v1/runs/{run_id}/initial-population"] = 503  # retried
    job = body(
        run_id,
        fake_worker.url,
        initial_population_url=f"{fake_worker.url}/internal/v1/runs/{run_id}/initial-population",
    )
    assert client.post("/runs", json=job).status_code == 202
    time.sleep(0.3)
    started = time.monotonic()
    answer = client.post(f"/runs/{run_id}/cancel")
    assert answer.status_code == 200 and answer.json()["metrics"]["cpu_seconds_used"] == 0
    # The cancel does not wait out the fetch's retry window (60 s): far under it, however loaded.
    assert time.monotonic() - started < 20 and client.manager.wait_idle(5)
    assert not any(p.endswith(("/complete", "/population")) for p in fake_worker.paths())


@pytest.mark.slow
def test_a_population_too_large_for_the_report_is_put_before_it(client, fake_worker, monkeypatch):
    monkeypatch.setattr(runs, "INLINE_POPULATION_BYTES", 64)  # the 8 x 3 population is ≈ 500 bytes
    client.post("/runs", json=body("runPUT000001", fake_worker.url))
    report = fake_worker.wait_for("/complete")["body"]
    assert report["status"] == "succeeded" and "population" not in report["result"]
    paths = fake_worker.paths()
    upload_at = paths.index("/internal/v1/runs/runPUT000001/population")
    assert upload_at < paths.index("/internal/v1/runs/runPUT000001/complete")
    upload = fake_worker.requests[upload_at]
    assert upload["method"] == "PUT" and upload["authorization"] == f"Bearer {TOKEN}"
    assert upload["content_type"] == "application/json" and int(upload["content_length"]) > 0
    population = upload["body"]
    assert len(population) == 8 and all(len(row) == 3 for row in population)
    assert all(isinstance(v, float) for row in population for v in row)
    assert sum(p.endswith("/population") for p in paths) == 1


def test_a_population_with_a_non_finite_value_is_put_not_inlined():
    """The report carries only finite numbers. A succeeded run's population is finite (the child fails
    a run whose population is not), but an outcome forged by hostile code may hold null (a non-finite
    value, as the outcome's check leaves it): such a population goes by PUT, as population.json always
    held it.  (The outcome collected as the run's relay does, into a store of its own.)"""
    uploads: list[bytes] = []
    supervisor = types.SimpleNamespace(
        reporter=types.SimpleNamespace(upload_population=lambda part: uploads.append(part.read())),
        _log_upload=lambda what, status: None,
    )

    def collected(population: list) -> completion.Completion:
        outcome = {
            "type": "outcome",
            "status": "succeeded",
            "hit_time_cap": False,
            "hit_memory_cap": False,
            "result": {
                "best_solution": [1.0, 2.0],
                "best_solution_fitness": 3.0,
                "best_solution_generation": 1,
                "best_solutions_fitness": [3.0],
                "generations_completed": 1,
                "population": population,
                "stopped_reason": "completed",
            },
        }
        store, sent = Store(), []
        collector = Collector(-1, -1, store.fd, Limits.from_caps(time_seconds=1, memory_mb=64).channel())
        collector.send = sent.append  # type: ignore[method-assign]
        collector.collect(json.dumps(outcome).encode())
        process = ProcessReport(0, None, None, collected_summary(store, sent[-1]), "", False, 0.0, 0.0, 0, store)
        return completion.fold(process, Limits.from_caps(time_seconds=1, memory_mb=64))

    forged = collected([[1.0, None], [2.0, 3.0]])
    result = runs._Run._upload_files(supervisor, forged)  # type: ignore[arg-type]
    assert result is not None and "population" not in json.loads(b"".join(payload_chunks(result)))
    assert uploads == [b"[[1.0,null],[2.0,3.0]]"]
    finite = collected([[1.0, 0.5], [2.0, 3.0]])
    result = runs._Run._upload_files(supervisor, finite)  # type: ignore[arg-type]
    assert result is not None and json.loads(b"".join(payload_chunks(result)))["population"] == [[1.0, 0.5], [2.0, 3.0]]
    assert len(uploads) == 1


@pytest.mark.slow
def test_refused_population_upload_still_completes(client, fake_worker, monkeypatch):
    monkeypatch.setattr(runs, "INLINE_POPULATION_BYTES", 0)
    fake_worker.status_for["/population"] = 409
    client.post("/runs", json=body("runHHH000008", fake_worker.url))
    report = fake_worker.wait_for("/complete")["body"]
    assert report["status"] == "succeeded" and "population" not in report["result"]
    assert sum(p.endswith("/population") for p in fake_worker.paths()) == 1


@pytest.mark.slow
def test_inline_initial_population_still_works(client, fake_worker):
    job = body(
        "runIII000009",
        fake_worker.url,
        params=params(num_generations=2, random_seed=1),
        initial_population=[[0.0, 0.0, 0.0]] + [[3.0, 3.0, 3.0]] * 7,
    )
    assert client.post("/runs", json=job).status_code == 202
    report = fake_worker.wait_for("/complete")["body"]
    assert report["result"]["best_solution"] == [0.0, 0.0, 0.0]
    assert not any(r["method"] == "GET" for r in fake_worker.requests)


@pytest.mark.slow
def test_initial_population_url_must_be_a_url(client, fake_worker):
    for bad in (12, "file:///etc/passwd", ["http://x"]):
        answer = client.post("/runs", json=body("runJJJ000010", fake_worker.url, initial_population_url=bad))
        assert answer.status_code == 400 and "initial_population_url" in answer.json()["error"]["message"]
