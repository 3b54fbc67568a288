"""The sandbox with real children: hard caps, bombs, floods, and what the child cannot see or do."""

from __future__ import annotations

import os
import socket
import time
import types
from pathlib import Path

import pytest
from conftest import CONTAINER, IS_ROOT, params, run_child

from allele_worker import sandbox
from allele_worker.child import jobs
from allele_worker.sandbox import process


def fitness(body: str) -> dict:
    """params whose fitness function runs ``body`` (indented into the function) once."""
    source = (
        "import os, sys\ndef f(ga, solution, idx):\n"
        + "".join(f"    {line}\n" for line in body.splitlines())
        + "    return 1.0\n"
    )
    return params(fitness_func=source, fitness_func_entry="f", num_generations=1, sol_per_pop=2, num_parents_mating=1)


def test_progress_messages_are_checked_before_they_are_reported():
    got: list[dict] = []
    report = types.SimpleNamespace(on_progress=got.append)
    for message in [
        {"generations_completed": 3, "best_solution_fitness": None, "best_objectives": [1.5, -2]},
        {"generations_completed": 4, "best_solution_fitness": 0.5, "best_objectives": [1, "x"]},
        {"generations_completed": 5, "best_solution_fitness": None, "best_objectives": [float("nan"), 1.0]},
        {"generations_completed": 6, "best_solution_fitness": None, "best_objectives": [0.0] * 1001},
        {"generations_completed": 7, "best_solution_fitness": None, "best_objectives": [True, 1.0]},
        {"generations_completed": -1, "best_solution_fitness": None, "best_objectives": [1.0, 2.0]},
        {"generations_completed": 8, "best_solution_fitness": "inf"},
        {"generations_completed": 9, "best_solution_fitness": None, "best_solution_objectives": [2.5, -1]},
        {"generations_completed": 10, "best_solution_fitness": None, "best_solution_objectives": [float("inf"), 1]},
    ]:
        sandbox.SandboxedProcess._progress(report, message)  # type: ignore[arg-type]
    assert got == [
        {"generations_completed": 3, "best_solution_fitness": None, "best_objectives": [1.5, -2]},
        {"generations_completed": 4, "best_solution_fitness": 0.5},
        {"generations_completed": 5, "best_solution_fitness": None},
        {"generations_completed": 6, "best_solution_fitness": None},
        {"generations_completed": 7, "best_solution_fitness": None},
        {"generations_completed": 9, "best_solution_fitness": None, "best_solution_objectives": [2.5, -1]},
        {"generations_completed": 10, "best_solution_fitness": None},
    ]
    assert process.MAX_PROGRESS_OBJECTIVES == jobs.MAX_OBJECTIVES


def test_limits_from_caps():
    limits = sandbox.Limits.from_caps(time_seconds=60, memory_mb=512)
    assert limits.hard_time_seconds == 66 and limits.cpu_seconds >= 66
    assert limits.hard_memory_mb > 512 and limits.address_space_mb > limits.hard_memory_mb
    assert sandbox.Limits.from_caps(time_seconds=2, memory_mb=512).hard_time_seconds == 4


@pytest.mark.slow
def test_infinite_loop_killed_at_hard_cap(host):
    started = time.monotonic()
    body, report = run_child(host, fitness("while True:\n    pass"), time_seconds=1)
    assert report.killed == "time"
    assert body["status"] == "failed" and body["error"]["code"] == "time_limit_exceeded"
    assert body["metrics"]["hit_time_cap"] is True and body["result"] is None
    # Not before the hard cap (no upper bound: a loaded machine may take longer to reap it).
    assert time.monotonic() - started >= 3.0
    assert body["metrics"]["cpu_seconds_used"] > 0  # measured and billed (how much depends on the load)


@pytest.mark.slow
def test_memory_bomb(host):
    body, _ = run_child(host, fitness("x = bytearray(4 * 2**30)"), memory_mb=128)
    assert body["status"] == "failed" and body["error"]["code"] == "memory_limit_exceeded"
    assert body["metrics"]["hit_memory_cap"] is True


@pytest.mark.slow
def test_gradual_memory_growth(host):
    body, _ = run_child(host, fitness("keep = []\nwhile True:\n    keep.append(b'x' * 2**20)"), memory_mb=128)
    assert body["error"]["code"] == "memory_limit_exceeded"
    assert body["metrics"]["hit_memory_cap"] is True
    assert body["metrics"]["peak_memory_mb"] >= 128


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="the process limit needs a user of the run's own (root)")
def test_fork_bomb_contained(host):
    uids: list[int] = []
    body, _ = run_child(
        host, fitness("while True:\n    os.fork()"), time_seconds=3, on_start=lambda process: uids.append(process.uid)
    )
    assert body["status"] == "failed"
    assert body["error"]["code"] == "resource_limit_exceeded", body["error"]
    assert "process limit" in body["error"]["message"]
    assert sandbox.uids.pids_of_uids(uids[0], 1) == []


@pytest.mark.slow
def test_huge_print_truncated(host):
    body, report = run_child(host, fitness("print('x' * 10_000_000)"))
    assert body["status"] == "succeeded"
    assert len(body["output"].encode()) <= 64 * 1024 and report.output_truncated
    assert body["output"].endswith("[output truncated]\n")


@pytest.mark.slow
def test_output_flood_killed(host):
    body, _ = run_child(host, fitness("while True:\n    sys.stdout.write('y' * 65536)"), output_flood_bytes=4 * 2**20)
    assert body["error"]["code"] == "resource_limit_exceeded"
    assert len(body["output"]) <= 64 * 1024


@pytest.mark.slow
def test_child_cannot_see_worker_environment(host, monkeypatch):
    monkeypatch.setenv("ALLELE_FAKE_SECRET", "s3cr3t-value")
    body, _ = run_child(
        host,
        fitness(
            "print(sorted(os.environ))\n"
            "try:\n"
            "    print(open(f'/proc/{os.getppid()}/environ', 'rb').read())\n"
            "except OSError as exc:\n"
            "    print('environ:', type(exc).__name__)"
        ),
    )
    assert body["status"] == "succeeded", body["error"]
    assert "s3cr3t" not in body["output"] and "ALLELE_FAKE_SECRET" not in body["output"]
    if IS_ROOT:
        assert "environ: PermissionError" in body["output"]


@pytest.mark.slow
def test_no_network(host, isolation):
    if not isolation.network:
        pytest.skip("network namespaces are not available on this machine")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        body, _ = run_child(
            host,
            fitness(
                "import socket\n"
                "for host in ('127.0.0.1', '1.1.1.1'):\n"
                "    try:\n"
                f"        socket.create_connection((host, {port}), timeout=2)\n"
                "        print('connected', host)\n"
                "    except OSError as exc:\n"
                "        print('blocked', host)"
            ),
        )
    finally:
        listener.close()
    assert "blocked 127.0.0.1" in body["output"] and "blocked 1.1.1.1" in body["output"]
    assert "connected" not in body["output"]


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="writing elsewhere is only prevented for a different user")
def test_cannot_write_outside_its_directory(host, isolation, tmp_path):
    target = Path("/tmp") / f"allele-escape-{os.getpid()}"
    os.chmod(tmp_path, 0o777)  # even a world-writable directory of the worker's
    outside = [str(target), str(CONTAINER / "escape.txt"), "/etc/escape", str(tmp_path / "x")]
    code = f"for path in {outside!r}:\n" + (
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print('denied', path)\n"
        "open('inside.txt', 'w').write('ok')\n"
        "print('inside ok')"
    )
    body, _ = run_child(host, fitness(code))
    assert "inside ok" in body["output"], body
    for path in outside:
        assert not Path(path).exists(), path
    if not isolation.minimal_root:
        assert body["output"].count("denied") == len(outside) - 1 or "denied" in body["output"]


@pytest.mark.slow
def test_file_size_limit(host):
    body, _ = run_child(
        host, fitness("with open('big', 'wb') as out:\n    out.write(b'0' * (9 * 2**20))"), file_size_mb=8
    )
    assert body["status"] == "failed"
    assert body["error"]["code"] == "resource_limit_exceeded"


@pytest.mark.slow
def test_probe_reports_this_machine(host, isolation):
    health = isolation.health()
    assert set(health) == {
        "user",
        "network",
        "pid_namespace",
        "minimal_root",
        "syscall_filter",
        "cgroup",
        "memory_tree",
        "cpu_tree",
        "pids",
        "rlimits",
        "notes",
    }
    assert {"cpu", "as", "fsize", "nofile", "core"} <= set(health["rlimits"])


@pytest.mark.slow
def test_a_kill_as_the_run_starts_stops_it(host):
    """A cancel that lands just after the start (the child forked but not yet in its own session,
    cgroup or uid: the fork server answers with its pid first) still stops the run: the job never gets
    through a generation (each takes ≈ 1.6 s) and reports no outcome. Before the relay was also killed
    by its pid, about one kill in twenty landing this early was lost and the run went on to succeed."""
    job = params(
        fitness_func="import time\ndef f(ga, s, i):\n    time.sleep(0.2)\n    return 1.0\n",
        fitness_func_entry="f",
        num_generations=3,
        sol_per_pop=8,
    )
    for _ in range(100):
        body, report = run_child(host, job, on_start=lambda process: process.kill("cancel"))
        assert report.killed == "cancel"
        assert report.outcome is None and body["_progress"] == [], body["_progress"]
