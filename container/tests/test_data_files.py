"""A run's data files in its sandbox (sandbox/confine.py, docs/api.md#data-files): read-only at
/data/<name> in the minimal root, the run's own only, never the cache; a hostile name never lands outside
/data. And through the worker's HTTP surface: files fetched from the Worker with the run's token, once
for many runs (worker/data_cache.py), their bytes checked."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from conftest import params, run_child
from starlette.testclient import TestClient

from allele_worker.errors import InvalidRequest
from allele_worker.worker.app import create_app
from allele_worker.worker.data_cache import DataCache
from allele_worker.worker.run_request import check_run_request
from allele_worker.worker.runs import RunManager

CSV = b"job,duration\na,3\nb,5\nc,2\n"

# Facts the run gathers about /data as the run's user, printed as one JSON line.
PROBE = """
import json, os

def attempt(action):
    try:
        action()
        return "allowed"
    except OSError as exc:
        return type(exc).__name__

def on_start(ga):
    facts = {"listing": sorted(os.listdir("/data")), "uid": os.getuid()}
    for name in facts["listing"]:
        path = "/data/" + name
        info = os.stat(path)
        facts[name] = {
            "text": open(path).read(),
            "owner": info.st_uid,
            "mode": oct(info.st_mode & 0o777),
            "append": attempt(lambda: open(path, "a").write("x")),
            "truncate": attempt(lambda: open(path, "w").close()),
            "chmod": attempt(lambda: os.chmod(path, 0o666)),
            "unlink": attempt(lambda: os.unlink(path)),
            "rename": attempt(lambda: os.rename(path, "/tmp/moved")),
        }
    facts["create"] = attempt(lambda: open("/data/new.csv", "w").close())
    facts["mkdir"] = attempt(lambda: os.mkdir("/data/sub"))
    facts["seen"] = {p: os.path.exists(p) for p in HIDDEN}
    print("FACTS " + json.dumps(facts), flush=True)

def fitness(ga, solution, idx):
    return 0.0
"""


def cached_file(folder, content: bytes) -> str:
    """A file as the worker's cache keeps one: in a directory of its own (0700), the file 0644."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(content).hexdigest())
    with open(path, "wb") as handle:
        handle.write(content)
    os.chmod(path, 0o644)
    return path


def probe(host, files, hidden=()) -> dict:
    source = PROBE.replace("HIDDEN", repr(list(hidden)))
    body, _ = run_child(
        host,
        params(
            num_generations=1,
            fitness_func=source,
            fitness_func_entry="fitness",
            on_start=source,
            on_start_entry="on_start",
        ),
        data_files=files,
    )
    assert body["status"] == "succeeded", body["error"]
    line = next(line for line in body["output"].splitlines() if line.startswith("FACTS "))
    return json.loads(line[len("FACTS ") :])


def needs_minimal_root(isolation) -> None:
    if not isolation.minimal_root:
        pytest.skip("this machine cannot make the sandbox's minimal root (mount namespaces need root)")


@pytest.mark.slow
def test_a_run_reads_its_files_at_data_and_cannot_change_them(host, isolation, tmp_path):
    needs_minimal_root(isolation)
    cache = tmp_path / "cache"
    path = cached_file(cache, CSV)
    facts = probe(host, [{"name": "jobs.csv", "path": path}], hidden=[str(cache), path, str(tmp_path)])
    assert facts["listing"] == ["jobs.csv"]
    assert facts["jobs.csv"]["text"] == CSV.decode()
    assert facts["uid"] != 0 and facts["jobs.csv"]["owner"] == 0 and facts["jobs.csv"]["mode"] == "0o644"
    for action in ("append", "truncate", "chmod", "unlink", "rename"):
        assert facts["jobs.csv"][action] != "allowed", action
    assert facts["create"] != "allowed" and facts["mkdir"] != "allowed"
    assert facts["seen"] == {str(cache): False, path: False, str(tmp_path): False}
    assert Path(path).read_bytes() == CSV  # untouched


@pytest.mark.slow
def test_every_run_has_an_empty_data_directory_without_files(host, isolation):
    needs_minimal_root(isolation)
    facts = probe(host, [])
    assert facts["listing"] == [] and facts["create"] != "allowed"


@pytest.mark.slow
def test_runs_at_once_see_only_their_own_files(host, isolation, tmp_path):
    needs_minimal_root(isolation)
    mine = cached_file(tmp_path / "cache", b"mine\n")
    theirs = cached_file(tmp_path / "cache", b"theirs\n")
    seen: dict[str, dict] = {}

    def run(name: str, path: str) -> None:
        seen[name] = probe(host, [{"name": name, "path": path}], hidden=[mine, theirs])

    threads = [threading.Thread(target=run, args=("a.csv", mine)), threading.Thread(target=run, args=("b.csv", theirs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert seen["a.csv"]["listing"] == ["a.csv"] and seen["a.csv"]["a.csv"]["text"] == "mine\n"
    assert seen["b.csv"]["listing"] == ["b.csv"] and seen["b.csv"]["b.csv"]["text"] == "theirs\n"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["../escape.csv", "a/b.csv", "..", ".", "", "/etc/passwd"])
def test_a_hostile_name_never_lands_outside_data(host, isolation, tmp_path, name):
    """Whatever reaches the plan (the worker checks names before it: below), confine binds nothing
    outside /data: the run fails before its code runs."""
    needs_minimal_root(isolation)
    path = cached_file(tmp_path / "cache", CSV)
    marker = "print('USER CODE RAN')\ndef fitness(ga, solution, idx):\n    return 0.0\n"
    body, _ = run_child(host, params(fitness_func=marker), data_files=[{"name": name, "path": path}])
    assert body["status"] == "failed"
    assert "USER CODE RAN" not in body["output"]
    assert Path(path).read_bytes() == CSV


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "a\\b", "..", ".", "", "tab\there", "nul\x00", "del\x7f", "c1\x85", "x" * 129, "\ud800"]
)
def test_the_worker_refuses_a_name_that_cannot_be_a_file_in_data(name):
    body = {
        "run_id": "run123456789",
        "submission_id": "sub123456789",
        "params": params(),
        "caps": {"time_seconds": 10, "memory_mb": 256},
        "report": {"url": "http://127.0.0.1:9/internal/v1/runs/run123456789", "token": "t"},
        "data_scope": "acct12345678",
        "data_files": [{"name": name, "sha256": "0" * 64, "size_bytes": 1, "url": "http://127.0.0.1:9/f"}],
    }
    with pytest.raises(InvalidRequest, match="data_files"):
        check_run_request(body)
    body["data_files"][0]["name"] = "ok name.csv"
    assert check_run_request(body)["data_files"][0]["name"] == "ok name.csv"


def _start(run_id: str, worker_url: str, files: list[dict], fitness: str) -> dict:
    return {
        "run_id": run_id,
        "submission_id": "sub123456789",
        "params": params(num_generations=2, fitness_func=fitness, fitness_func_entry="fitness"),
        "initial_population": None,
        "data_files": files,
        "data_scope": "acct12345678",
        "caps": {"time_seconds": 30, "memory_mb": 512},
        "report": {"url": f"{worker_url}/internal/v1/runs/{run_id}", "token": "ab" * 32},
    }


READ = (
    "import csv\n"
    "ROWS = list(csv.DictReader(open('/data/jobs.csv')))\n"
    "print('TOTAL', sum(int(r['duration']) for r in ROWS))\n"
    "def fitness(ga, solution, idx):\n    return float(len(ROWS))\n"
)


@pytest.mark.slow
def test_runs_fetch_a_file_once_from_the_worker_with_their_token_and_read_it(host, isolation, tmp_path, fake_worker):
    needs_minimal_root(isolation)
    sha = hashlib.sha256(CSV).hexdigest()
    manager = RunManager(
        host=host, run_root=str(tmp_path), concurrency=5, data_cache=DataCache(str(tmp_path / "dc"), 1 << 20)
    )
    ids = [f"runDATA{n:05d}" for n in range(5)]
    for run_id in ids:
        fake_worker.served[f"/internal/v1/runs/{run_id}/data-files/{sha}"] = CSV
    with TestClient(create_app(manager)) as client:
        for run_id in ids:
            file = {
                "name": "jobs.csv",
                "sha256": sha,
                "size_bytes": len(CSV),
                "url": f"{fake_worker.url}/internal/v1/runs/{run_id}/data-files/{sha}",
            }
            assert client.post("/runs", json=_start(run_id, fake_worker.url, [file], READ)).status_code == 202
        assert manager.wait_idle(60)
        health = client.get("/health").json()["data_cache"]
    fetches = [r for r in fake_worker.requests if "/data-files/" in r["path"]]
    assert len(fetches) == 1 and fetches[0]["authorization"] == "Bearer " + "ab" * 32
    assert health["downloads"] == 1 and health["hits"] == 4 and health["files"] == 1
    completes = [r for r in fake_worker.requests if r["path"].endswith("/complete")]
    assert len(completes) == 5
    for report in completes:
        assert report["body"]["status"] == "succeeded", report["body"]["error"]
        assert "TOTAL 10" in report["body"]["output"]
        assert report["body"]["result"]["best_solution_fitness"] == 3.0


@pytest.mark.slow
def test_a_file_whose_bytes_do_not_match_fails_the_run(host, isolation, tmp_path, fake_worker):
    needs_minimal_root(isolation)
    sha = hashlib.sha256(CSV).hexdigest()
    manager = RunManager(host=host, run_root=str(tmp_path), data_cache=DataCache(str(tmp_path / "dc"), 1 << 20))
    fake_worker.served[f"/internal/v1/runs/runFORGED0001/data-files/{sha}"] = CSV.replace(b"3", b"9")
    file = {
        "name": "jobs.csv",
        "sha256": sha,
        "size_bytes": len(CSV),
        "url": f"{fake_worker.url}/internal/v1/runs/runFORGED0001/data-files/{sha}",
    }
    with TestClient(create_app(manager)) as client:
        assert client.post("/runs", json=_start("runFORGED0001", fake_worker.url, [file], READ)).status_code == 202
        report = fake_worker.wait_for("/complete")["body"]
        assert manager.wait_idle(30)
        assert client.get("/health").json()["data_cache"]["files"] == 0
    assert report["status"] == "failed"
    assert report["error"] == {"code": "internal_error", "message": "the data file jobs.csv did not match its sha256"}
