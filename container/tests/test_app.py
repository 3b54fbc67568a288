"""The HTTP surface end to end: real run manager, real children, a fake Worker for the reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest
from starlette.testclient import TestClient

from app import create_app
from conftest import CONTAINER, IS_ROOT, params
from runs import RunManager

TOKEN = "ab" * 32


@pytest.fixture
def client(isolation, tmp_path):
    manager = RunManager(isolation=isolation, run_root=str(tmp_path),
                         uid_base=63000 if IS_ROOT else None, uid_slots=20)
    with TestClient(create_app(manager)) as test_client:
        test_client.manager = manager
        yield test_client
    manager.wait_idle(10)


def body(run_id: str, worker_url: str, **changes) -> dict:
    data = {"run_id": run_id, "submission_id": "sub123456789", "params": params(random_seed=1),
            "initial_population": None, "caps": {"time_seconds": 30, "memory_mb": 512},
            "report": {"url": f"{worker_url}/internal/v1/runs/{run_id}", "token": TOKEN}}
    data.update(changes)
    return data


def test_health(client):
    answer = client.get("/health")
    assert answer.status_code == 200
    data = answer.json()
    assert data["status"] == "ok" and data["active_runs"] == 0 and data["version"]
    assert {"user", "network", "rlimits"} <= set(data["isolation"])


def test_run_reports_progress_and_complete(client, fake_worker):
    job = body("runAAA000001", fake_worker.url,
               params=params(num_generations=30, random_seed=1,
                             fitness_func=("import time\ndef f(ga, s, i):\n    time.sleep(0.01)\n"
                                           "    return -float((s**2).sum())\n"),
                             fitness_func_entry="f"))
    answer = client.post("/runs", json=job)
    assert answer.status_code == 202 and answer.json() == {"run_id": "runAAA000001",
                                                           "state": "running"}
    complete = fake_worker.wait_for("/complete")
    assert complete["authorization"] == f"Bearer {TOKEN}"
    assert complete["path"] == "/internal/v1/runs/runAAA000001/complete"
    report = complete["body"]
    assert report["status"] == "succeeded" and report["result"]["generations_completed"] == 30
    assert set(report) == {"status", "result", "error", "metrics", "output", "engine"}
    progress = [r for r in fake_worker.requests if r["path"].endswith("/progress")]
    assert progress, fake_worker.paths()
    assert progress[0]["authorization"] == f"Bearer {TOKEN}"
    assert set(progress[0]["body"]) == {"generations_completed", "best_solution_fitness"}
    assert sum(p.endswith("/complete") for p in fake_worker.paths()) == 1


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


def test_cancel(client, fake_worker):
    job = body("runCCC000003", fake_worker.url,
               params=params(num_generations=100000,
                             fitness_func="def f(ga, s, i):\n    return sum(range(20000))\n",
                             fitness_func_entry="f"))
    assert client.post("/runs", json=job).status_code == 202
    time.sleep(1.0)
    answer = client.post("/runs/runCCC000003/cancel")
    assert answer.status_code == 200
    metrics = answer.json()["metrics"]
    assert answer.json()["run_id"] == "runCCC000003"
    assert metrics["cpu_seconds_used"] > 0.2 and metrics["execution_duration_ms"] >= 900
    assert client.manager.wait_idle(10)
    time.sleep(0.5)
    assert not any(p.endswith("/complete") for p in fake_worker.paths())
    assert client.post("/runs/runCCC000003/cancel").status_code == 404


def test_cancel_unknown(client):
    answer = client.post("/runs/nosuchrun123/cancel")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_run"


def test_invalid_bodies(client, fake_worker):
    assert client.post("/runs", content=b"{nope").status_code == 400
    bad = body("runDDD000004", fake_worker.url)
    del bad["caps"]
    answer = client.post("/runs", json=bad)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_request"
    bad = body("run/../x", fake_worker.url)
    assert client.post("/runs", json=bad).status_code == 400


def test_failed_run_reports_code_error(client, fake_worker):
    job = body("runEEE000005", fake_worker.url,
               params=params(fitness_func="def f(ga, s, i):\n    return undefined_name\n",
                             fitness_func_entry="f"))
    client.post("/runs", json=job)
    report = fake_worker.wait_for("/complete")["body"]
    assert report["status"] == "failed" and report["result"] is None
    assert report["error"] == {"code": "code_error",
                               "message": "fitness_func line 2: NameError: name 'undefined_name' "
                                          "is not defined"}


def test_serve_py_from_any_cwd(tmp_path):
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, PORT=str(port))
    server = subprocess.Popen([sys.executable, str(CONTAINER / "serve.py")], cwd=tmp_path,
                              env=env, stderr=subprocess.PIPE)
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
