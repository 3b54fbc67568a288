"""The warm fork server (allele_worker/child/forkserver.py): runs are forks of one parent that imported
numpy, PyGAD and the engine; that parent holds nothing of the worker's, and no run leaves anything behind for
the next. (Every sandbox and hostile-code test also runs against these forked children.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import IS_ROOT, run_child
from test_hostile import hostile

from allele_worker.sandbox.plan import child_environment


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


@pytest.mark.slow
def test_runs_are_forked_from_the_warm_parent(host):
    assert host.forks is not None
    parents: list[int] = []
    body, _ = run_child(host, hostile("pass"), on_start=lambda process: parents.append(_parent_of(process.pid)))
    assert body["status"] == "succeeded", body
    assert parents == [host.forks.pid]


@pytest.mark.slow
def test_the_fork_server_holds_nothing_of_the_workers(host, monkeypatch):
    monkeypatch.setenv("ADMIN_TOKEN", "worker-secret")  # whatever the worker holds, started after it
    pid = host.forks.pid
    raw = Path(f"/proc/{pid}/environ").read_text()
    environ = dict(line.split("=", 1) for line in raw.split("\0") if "=" in line)
    assert set(environ) <= set(child_environment("/tmp")), environ
    fds = os.listdir(f"/proc/{pid}/fd")
    assert len(fds) <= 5, fds  # stdin, stdout, stderr, its control socket (and select's epoll at most)


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="runs need their own uid to be told apart")
def test_no_run_leaves_anything_behind_for_the_next(host):
    first, _ = run_child(
        host,
        hostile("""
        import numpy, pygad, sys, builtins
        numpy.LEFT_BEHIND = "from the first run"
        pygad.LEFT_BEHIND = "from the first run"
        builtins.LEFT_BEHIND = "from the first run"
        sys.modules["left_behind"] = sys
        os.environ["LEFT_BEHIND"] = "from the first run"
        open("/tmp/left-behind", "w").write("from the first run")
    """),
    )
    assert first["status"] == "succeeded", first
    second, _ = run_child(
        host,
        hostile("""
        import numpy, pygad, sys, builtins
        print("SEEN", [getattr(numpy, "LEFT_BEHIND", None), getattr(pygad, "LEFT_BEHIND", None),
                       getattr(builtins, "LEFT_BEHIND", None), "left_behind" in sys.modules,
                       os.environ.get("LEFT_BEHIND"), os.path.exists("/tmp/left-behind")])
    """),
    )
    assert second["status"] == "succeeded", second
    assert "SEEN [None, None, None, False, None, False]" in second["output"], second["output"]


def _pidfds(pid: int) -> int:
    return sum(os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[pidfd]" for fd in os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.slow
def test_a_childs_exit_is_watched_by_its_pidfd_and_nothing_is_left_after_it(host):
    """The fork server learns of a child's exit from a pidfd of that child (the exit wakes it; no
    poll), held while the child lives and closed once it is reaped."""
    held: list[int] = []
    body, _ = run_child(host, hostile("time.sleep(0.3)"), on_start=lambda process: held.append(_pidfds(host.forks.pid)))
    assert body["status"] == "succeeded", body
    assert held == [1]
    assert _pidfds(host.forks.pid) == 0


@pytest.mark.slow
def test_each_run_draws_its_own_unseeded_random_numbers(host):
    """Forks of one parent share its generators' states (Python's ``random`` reseeds itself after a
    fork, numpy's global generator does not): each run starts both afresh."""
    drawn: dict[str, set[str]] = {"random": set(), "numpy": set()}
    for _ in range(3):
        body, _ = run_child(
            host,
            hostile("""
            import random, numpy
            print("DRAWN", random.random(), numpy.random.random())
        """),
        )
        assert body["status"] == "succeeded", body
        line = next(line for line in body["output"].splitlines() if line.startswith("DRAWN"))
        drawn["random"].add(line.split()[1])
        drawn["numpy"].add(line.split()[2])
    assert len(drawn["random"]) == 3 and len(drawn["numpy"]) == 3, drawn


def test_the_fork_server_warmed_up_with_its_own_jobs_only():
    """The warm-up runs the service's own code (no job's): every code field is a constant of the
    package, and the jobs warm() runs succeed."""
    from allele_worker.child import forkserver, jobs

    own_code = {forkserver._FITNESS, forkserver._BATCH, forkserver._CONSTRAINT}
    assert forkserver.WARM_UP_PARAMS
    for params in forkserver.WARM_UP_PARAMS:
        assert set(params) - set(jobs.PLAIN_PARAMS) <= {
            "fitness_func",
            "fitness_func_entry",
            "fitness_batch_size",
            "gene_constraint",
            "gene_constraint_entry",
            "random_seed",
        }
        assert {params[field] for field in jobs.CODE_FIELDS if field in params} <= own_code
        outcome = jobs.execute(jobs.JobSpec(params=dict(params)), lambda message: None)
        assert outcome["status"] == "succeeded", outcome
