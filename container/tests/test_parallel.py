"""Parallel fitness evaluation (``parallel_processing``) in the real sandbox: the worker processes are
the run's — confined like it, billed with it, killed with it — and the results equal a serial run's.
Engine-level equivalence (every form, batches, errors) is in engine/test_parallel.py."""

from __future__ import annotations

import json
import os
import textwrap
import time
from typing import Any

import pytest
from conftest import IS_ROOT, params, run_child
from test_hostile import requires

from allele_worker import sandbox
from allele_worker.sandbox.uids import pids_of_uids

needs_root = pytest.mark.skipif(not IS_ROOT, reason="namespaces, uids and cgroups need a root worker")
FORMS: list[Any] = [3, ["thread", 3], ["process", 3]]


def job(body: str, parallel: Any, **overrides: Any) -> dict[str, Any]:
    """A job whose fitness runs ``body`` (``solution``, ``idx`` and ``say``, one JSON line to the
    output in one write, in scope)."""
    source = (
        "import json, os, socket, sys, threading, time\nimport numpy\n"
        "def say(fact):\n    os.write(1, (json.dumps(fact) + '\\n').encode())\n"
        "def fitness(ga, solution, idx):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return params(
        fitness_func=source,
        fitness_func_entry="fitness",
        parallel_processing=parallel,
        **{
            "num_generations": 3,
            "sol_per_pop": 12,
            "num_parents_mating": 4,
            "num_genes": 4,
            "random_seed": 5,
            **overrides,
        },
    )


def facts(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.slow
@pytest.mark.parametrize("parallel", FORMS)
def test_results_equal_a_serial_run(host, parallel):
    """The same seed gives the same result in every form as one evaluation at a time: best genes and
    fitness, their history, the final population (the fitness reads ``ga`` too); the parallel run
    evaluated in its workers, not only in the run's own thread."""
    body = (
        "say({'pid': os.getpid(), 'thread': threading.get_ident()})\n"
        "return -float(numpy.sum(solution ** 2)) + 0.01 * ga.generations_completed\n"
    )
    serial, _ = run_child(host, job(body, None, num_generations=15))
    parallel_run, _ = run_child(host, job(body, parallel, num_generations=15))
    assert serial["status"] == parallel_run["status"] == "succeeded", parallel_run
    assert parallel_run["result"] == serial["result"]
    assert parallel_run["engine"] == serial["engine"]
    assert len(evaluators(serial["output"])) == 1, serial["output"]
    assert len(evaluators(parallel_run["output"])) > 1, "no evaluation ran in a worker"


def evaluators(output: str) -> set[tuple[int, int]]:
    """The (process, thread) pairs that evaluated fitness, as the fitness said them."""
    return {(fact["pid"], fact["thread"]) for fact in facts(output)}


@pytest.mark.slow
@needs_root
def test_worker_processes_are_confined_like_the_run(host, isolation):
    """Each process that evaluates fitness runs as the run's user, in its PID namespace (it sees the
    run's processes only), without network and without the host's files."""
    requires(isolation, "user", "pid_namespace", "network", "minimal_root")
    hidden = os.path.abspath(__file__)
    body, _ = run_child(
        host,
        job(
            f"""
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1).close()
            network = True
        except OSError:
            network = False
        procs = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        say({{"pid": os.getpid(), "uid": os.getuid(), "procs": procs, "network": network,
             "host_file": os.path.exists({hidden!r})}})
        return float(idx)
    """,
            ["process", 3],
        ),
    )
    assert body["status"] == "succeeded", body
    seen = facts(body["output"])
    pids = {fact["pid"] for fact in seen}
    assert len(pids) == 3, seen  # the run's own process and its 2 workers each evaluated
    uids = {fact["uid"] for fact in seen}
    assert len(uids) == 1 and uids != {0}, seen  # the run's own user, in every process
    assert not any(fact["network"] or fact["host_file"] for fact in seen)
    for fact in seen:  # init (1), the job and its workers, nothing else
        assert set(fact["procs"]) <= pids | {1}, fact


@pytest.mark.slow
@needs_root
@pytest.mark.parametrize("parallel", [["process", 3], ["thread", 3]])
def test_cpu_of_workers_is_billed(host, isolation, parallel):
    """Every CPU-second of the workers is billed, processes and threads alike: 34 evaluations (the 12
    first, then 11 new children in each of 2 generations) burning 50 ms of CPU each, spread over 3
    workers, bill at least their 1.7 CPU-seconds."""
    requires(isolation, "cgroup")
    body, _ = run_child(
        host,
        job(
            """
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        say({"pid": os.getpid(), "thread": threading.get_ident()})
        return float(idx)
    """,
            parallel,
            num_generations=2,
        ),
        time_seconds=60,
    )
    assert body["status"] == "succeeded", body
    calls = len(facts(body["output"]))
    assert calls == 34, body["output"]
    assert len(evaluators(body["output"])) == 3  # the run's own thread and its 2 workers
    if parallel[0] == "process":
        assert len({fact["pid"] for fact in facts(body["output"])}) == 3
    assert body["metrics"]["cpu_seconds_used"] >= 0.05 * calls * 0.95, (calls, body["metrics"])


@pytest.mark.slow
@needs_root
@pytest.mark.parametrize("parallel", [["thread", 16], ["process", 16]])
def test_memory_of_the_widest_run_is_capped_as_a_whole(host, isolation, parallel):
    """16 workers holding 40 MB each (640 MB) against a 256 MB cap: the run ends, holding no more than
    its cap allows. 16 processes are stopped by the tree's memory cap; 16 threads share one process,
    whose address-space limit (the cap plus 512 MB: threads' stacks and arenas count) may refuse a
    thread or an allocation first — then the run fails as the user's error, still within its memory."""
    requires(isolation, "cgroup")
    body, _ = run_child(
        host,
        job(
            """
        block = bytearray(40 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(5)
        return float(len(block))
    """,
            parallel,
            sol_per_pop=16,
            num_generations=1,
        ),
        memory_mb=256,
        time_seconds=30,
    )
    assert body["status"] == "failed", body
    limits = sandbox.Limits.from_caps(time_seconds=30, memory_mb=256)
    assert body["metrics"]["peak_memory_mb"] <= limits.hard_memory_mb + 64, body["metrics"]
    if parallel[0] == "process":
        assert body["error"]["code"] == "memory_limit_exceeded", body["error"]
        assert body["metrics"]["hit_memory_cap"] is True
    else:
        assert body["error"]["code"] in ("memory_limit_exceeded", "code_error"), body["error"]


@pytest.mark.slow
@needs_root
def test_a_fork_bomb_in_a_worker_process_stops_at_the_runs_process_limit(host, isolation):
    """Each worker process of a 16-wide run forks as much as it can: together they stop at the run's
    process limit (not 64 per worker), and nothing of the run is left after it."""
    requires(isolation, "user")
    uids: list[int] = []
    body, _ = run_child(
        host,
        job(
            """
        forked = 0
        try:
            while forked < 1000:
                if os.fork() == 0:
                    time.sleep(3)
                    os._exit(0)
                forked += 1
        except OSError:
            pass
        say({"forked": forked})
        return 0.0
    """,
            ["process", 16],
            sol_per_pop=16,
            num_generations=1,
        ),
        time_seconds=30,
        on_start=lambda process: uids.append(process.uid),
    )
    forked = sum(fact["forked"] for fact in facts(body["output"]) if "forked" in fact)
    assert 0 < forked < sandbox.Limits.from_caps(time_seconds=1, memory_mb=1).processes, (forked, body)
    assert pids_of_uids(uids[0], 1) == []


@pytest.mark.slow
@needs_root
def test_worker_processes_die_with_a_cancel(host, isolation):
    """A cancel while the workers are busy ends them all: nothing of the run's user is left."""
    requires(isolation, "user")
    uids: list[int] = []
    seen_before_the_kill: list[int] = []

    def cancel_when_busy(process: sandbox.SandboxedProcess) -> None:
        uids.append(process.uid)
        deadline = time.monotonic() + 20
        while (seen := len(pids_of_uids(process.uid, 1))) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen_before_the_kill.append(seen)
        process.kill("cancel")

    _, report = run_child(
        host, job("time.sleep(60)\nreturn 0.0\n", ["process", 4]), time_seconds=120, on_start=cancel_when_busy
    )
    assert seen_before_the_kill == [4], seen_before_the_kill  # the job and its 3 workers were there
    assert report.killed == "cancel"
    assert pids_of_uids(uids[0], 1) == []


@pytest.mark.slow
@needs_root
def test_worker_processes_die_with_the_run_at_its_time_cap(host, isolation):
    """A worker stuck in the fitness when the run reaches its hard time cap is killed with it."""
    requires(isolation, "user")
    uids: list[int] = []
    body, _ = run_child(
        host,
        job(
            """
        if idx == 11:
            time.sleep(600)
        return 0.0
    """,
            ["process", 2],
        ),
        time_seconds=2,
        on_start=lambda process: uids.append(process.uid),
    )
    assert body["status"] == "failed" and body["error"]["code"] == "time_limit_exceeded", body
    assert pids_of_uids(uids[0], 1) == []


@pytest.mark.slow
@needs_root
@pytest.mark.parametrize("parallel", [["thread", 16], ["process", 16], 16])
def test_the_widest_run_the_api_accepts_fits_its_sandbox(host, isolation, parallel):
    """16 workers, the most the API accepts (src/http/validation/submission.ts MAX_PARALLEL_WORKERS),
    start within the run's process limit in every form (24 threads would not)."""
    requires(isolation, "user")
    body = "return -float(numpy.sum(solution ** 2))\n"
    result, _ = run_child(host, job(body, parallel, sol_per_pop=64))
    assert result["status"] == "succeeded", result


@pytest.mark.slow
def test_an_exception_in_a_worker_names_the_users_line(host):
    body, _ = run_child(
        host,
        job(
            """
        if idx == 11:
            raise ValueError("no solution 11")
        return 0.0
    """,
            ["process", 2],
        ),
    )
    assert body["status"] == "failed" and body["error"]["code"] == "code_error", body
    assert body["error"]["message"] == "fitness_func line 8: ValueError: no solution 11"


@pytest.mark.slow
@pytest.mark.parametrize("selection", ["nsga2", "sss"])
@pytest.mark.parametrize("parallel", FORMS)
def test_multi_objective_runs_in_parallel(host, selection, parallel):
    """A multi-objective run honours ``parallel_processing`` in every form: ``nsga2`` is stock
    ``pygad.GA`` from the start (stock's executor), ``sss`` hands the run to stock's loop after its
    first evaluation (the engine's workers end there, stock's executor takes over). The result is the
    serial run's; the evaluations ran outside the run's own thread; never more processes at once than
    the run's own and its N workers."""
    body = """
        say({"at": [os.getpid(), threading.get_ident()],
             "procs": [int(p) for p in os.listdir("/proc") if p.isdigit()]})
        return [-float(numpy.sum(solution ** 2)), -float(numpy.sum((solution - 1) ** 2))]
    """
    runs = [
        run_child(
            host,
            job(
                "import threading\n" + textwrap.dedent(body),
                setting,
                num_generations=6,
                parent_selection_type=selection,
            ),
        )[0]
        for setting in (None, parallel)
    ]
    serial, parallel_run = runs
    assert serial["status"] == parallel_run["status"] == "succeeded", parallel_run
    assert parallel_run["result"] == serial["result"] and parallel_run["result"]["num_objectives"] == 2
    assert parallel_run["engine"] == serial["engine"]
    serial_at = {tuple(fact["at"]) for fact in facts(serial["output"])}
    seen = facts(parallel_run["output"])
    assert {tuple(fact["at"]) for fact in seen} - serial_at, seen
    for fact in seen:
        assert len(set(fact["procs"]) - {1}) <= 1 + 3, fact
