"""The child's message channel, bounded by what a message may carry: the run's relay reads
what the job writes, in the run's own control group; the worker — one process for every run, outside
their groups — reads only the relay's small messages and streams the outcome's parts from the run's
store.  Through the real sandbox, and the real worker process for its memory."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import params, run_child
from test_hostile import _start_worker, hostile

from allele_worker.wire import MAX_OBJECTIVES, MESSAGE_BYTES, to_json

# The worker's peak resident memory over a run may pass its idle one by at most this much, whatever
# the run sends (docs/performance.md, "The GA worker's own memory"; measured 0.1 and 2.3 MB).
WORKER_RSS_BOUND_MB = 32
# The plan's largest population: Premium's sol_per_pop × num_genes (src/admission/limits.ts,
# src/http/validation/submission.ts; docs/api.md "Parameter caps").
LARGEST = {"sol_per_pop": 5000, "num_genes": 1000, "num_generations": 1, "num_parents_mating": 2}

WRITE_TO_EVERY_PIPE = """
import stat
for fd in range(3, 64):
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            continue
        view = memoryview(LINE)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass
"""


def _status_kb(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(value.split()[0])
    return values


def _post(port: int, fake_worker: Any, run_id: str, job: dict[str, Any]) -> dict[str, Any]:
    body = {
        "run_id": run_id,
        "submission_id": "sub123456789",
        "params": job,
        "initial_population": None,
        "caps": {"time_seconds": 300, "memory_mb": 2048},
        "report": {"url": f"{fake_worker.url}/internal/v1/runs/{run_id}", "token": "ab" * 32},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/runs",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=30).close()
    return fake_worker.wait_for(f"/{run_id}/complete", 300)


@pytest.mark.slow
def test_the_workers_memory_stays_bounded_whatever_a_run_sends(fake_worker, tmp_path):
    """At the plan's largest population, a run that writes one 200 MiB progress line (52 million
    numbers: the worker went from 36 MB to 2.4 GB parsing it, and the run succeeded) fails as
    ``resource_limit_exceeded``, and a normal run whose outcome carries that population (92 MB of
    JSON: 624 MB) succeeds with its population uploaded whole; the worker's peak resident memory
    (``VmHWM``) stays within WORKER_RSS_BOUND_MB of its idle memory through both."""
    run_dir = str(tmp_path / "runs")
    os.makedirs(run_dir)
    port = _free_port()
    worker = _start_worker(port, run_dir)
    try:
        warm = _post(port, fake_worker, "runWARM000001", params())
        assert warm["body"]["status"] == "succeeded", warm["body"]
        idle = _status_kb(worker.pid)["VmRSS"]
        head = b'{"type":"progress","generations_completed":1,"best_solution_fitness":1.0,"x":[1.5'
        count = (200 * 2**20 - len(head) - 3) // 4  # 200 MiB in all
        flood = hostile("LINE = " + repr(head) + " + b',1.5' * " + str(count) + " + b']}\\n'\n" + WRITE_TO_EVERY_PIPE)
        flooded = _post(port, fake_worker, "runFLOOD00001", {**flood, **LARGEST})["body"]
        after_flood = _status_kb(worker.pid)["VmHWM"]
        outcome = params(fitness_func="def f(ga, s, i):\n    return -float((s ** 2).sum())\n", fitness_func_entry="f")
        large = _post(port, fake_worker, "runLARGE00001", {**outcome, **LARGEST, "random_seed": 1})["body"]
        after_outcome = _status_kb(worker.pid)["VmHWM"]
    finally:
        worker.terminate()
        worker.wait(10)
    assert (after_flood - idle) / 1024 < WORKER_RSS_BOUND_MB, (idle, after_flood)
    assert (after_outcome - idle) / 1024 < WORKER_RSS_BOUND_MB, (idle, after_outcome)
    assert flooded["status"] == "failed", flooded
    assert flooded["error"]["code"] == "resource_limit_exceeded", flooded["error"]
    assert large["status"] == "succeeded", large["error"]
    [upload] = [r for r in fake_worker.requests if r["path"].endswith("/runLARGE00001/population")]
    assert len(upload["body"]) == 5000 and {len(row) for row in upload["body"]} == {1000}


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.slow
def test_a_flood_that_ends_before_the_watchdog_looks_still_stops_the_run(host):
    """300 messages in one write, and the run over within milliseconds: it failed as ``code_error``
    ("exited with status 0 before sending a result": the flood was seen, its outcome dropped, but the
    process was gone before the watchdog's next poll).  The relay counts every message, and the end
    of a run folds in what the channel saw."""
    body, report = run_child(
        host,
        hostile(
            'LINE = b\'{"type":"progress","generations_completed":1,"best_solution_fitness":1.0}\\n\' * 300\n'
            + WRITE_TO_EVERY_PIPE
        ),
    )
    assert body["status"] == "failed", body
    assert body["error"]["code"] == "resource_limit_exceeded", body["error"]
    assert "messages a second" in body["error"]["message"]
    assert report.killed == "messages"


@pytest.mark.slow
def test_a_message_past_its_bound_stops_the_run_at_once(host):
    """A progress line (anything but the outcome) of more than MESSAGE_BYTES: the relay stops reading
    it at the bound and ends the run, whose process has not finished writing it."""
    line = b'{"type":"progress","generations_completed":1,"x":"' + b"x" * (4 * MESSAGE_BYTES) + b'"}\n'
    body, report = run_child(host, hostile(f"LINE = {line!r}\n" + WRITE_TO_EVERY_PIPE + "time.sleep(30)\n"))
    assert body["status"] == "failed", body
    assert body["error"]["code"] == "resource_limit_exceeded", body["error"]
    assert f"more than {MESSAGE_BYTES // 1024} KiB" in body["error"]["message"]
    assert report.killed == "message" and body["metrics"]["execution_duration_ms"] < 20000


@pytest.mark.slow
def test_an_outcome_past_its_bound_stops_the_run(host):
    """The outcome may be large, up to its bound (from the run's sizes): past it the relay stops the
    run (it buffers the outcome in the run's own memory, never the worker's)."""
    head = b'{"type":"outcome","status":"succeeded","result":{"x":"'
    write = "LINE = " + repr(head) + " + b'x' * " + str(3 * 2**20) + " + b'\"}}\\n'\n"
    body, report = run_child(host, hostile(write + WRITE_TO_EVERY_PIPE), outcome_bytes=2**20)
    assert body["status"] == "failed", body
    assert body["error"]["code"] == "resource_limit_exceeded", body["error"]
    assert "result larger than allowed" in body["error"]["message"]
    assert report.killed == "outcome"


def test_the_services_own_largest_progress_message_fits():
    """What the service's own progress carries — generations, a fitness, at most MAX_OBJECTIVES
    objective values — fits in a message, at the longest a float's JSON can be."""
    longest = -2.2250738585072014e-308
    assert len(json.dumps(longest)) == 24
    message = {
        "type": "progress",
        "generations_completed": 10**9,
        "best_solution_fitness": longest,
        "best_objectives": [longest] * MAX_OBJECTIVES,
    }
    assert len(to_json(message)) + 1 <= MESSAGE_BYTES


@pytest.mark.slow
def test_progress_and_a_forged_outcome_through_the_relay(host):
    """What the relay lets through: checked, re-encoded progress (junk lines dropped), and the last
    outcome line — here one user code forged in the shape of a result, validated like any other."""
    forged = {
        "type": "outcome",
        "status": "succeeded",
        "hit_time_cap": False,
        "hit_memory_cap": False,
        "result": {
            "best_solution": [1.0],
            "best_solution_fitness": 7.0,
            "best_solution_generation": 0,
            "best_solutions_fitness": [7.0],
            "generations_completed": 1,
            "population": [[1.0]],
            "stopped_reason": "completed",
        },
    }
    lines = (
        b"not json\n[1, 2]\n"
        + b'{"type":"progress","generations_completed":42,"best_solution_fitness":1.5,"extra":"x"}\n'
        + to_json(forged)
        + b"\n"
    )
    body, _ = run_child(host, hostile(f"LINE = {lines!r}\n" + WRITE_TO_EVERY_PIPE + "os._exit(0)\n"))
    assert {"generations_completed": 42, "best_solution_fitness": 1.5} in body["_progress"]
    assert all(
        set(p) <= {"generations_completed", "best_solution_fitness", "best_objectives"} for p in body["_progress"]
    )
    assert body["status"] == "succeeded", body
    assert body["result"]["best_solution_fitness"] == 7.0 and body["result"]["population"] == [[1.0]]


@pytest.mark.slow
def test_the_job_holds_nothing_of_the_relays(host):
    """The job's only way out is its own pipe to the relay: it holds neither the relay's channel to
    the worker (where it could forge the relay's messages) nor the run's store, nor its spec."""
    body, _ = run_child(
        host,
        hostile("""
        import stat
        for fd in sorted(int(fd) for fd in os.listdir('/proc/self/fd')):
            try:
                mode = os.fstat(fd).st_mode
                print('FD', fd, 'fifo' if stat.S_ISFIFO(mode) else 'other', os.readlink(f'/proc/self/fd/{fd}'))
            except OSError:
                pass  # the directory listing's own descriptor, closed by now
    """),
    )
    assert body["status"] == "succeeded", body
    fds = [line.split() for line in body["output"].splitlines() if line.startswith("FD ")]
    above = [fd for fd in fds if int(fd[1]) > 2]
    assert [fd[2] for fd in above] == ["fifo"], fds  # one pipe: the job's own, to its relay
    assert not any("memfd" in fd[3] for fd in fds), fds
