"""The warm fork server (allele_worker/child/forkserver.py): runs are forks of one parent that imported
numpy, PyGAD and the engine; that parent holds nothing of the worker's, and no run leaves anything behind for
the next. (Every sandbox and hostile-code test also runs against these forked children.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import IS_ROOT, run_child
from starlette.testclient import TestClient
from test_hostile import hostile

from allele_worker import sandbox
from allele_worker.sandbox.forks import ForkServer
from allele_worker.sandbox.plan import child_environment
from allele_worker.worker.app import create_app
from allele_worker.worker.runs import RunManager


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


# The id of an earlier run, in two halves: the scanning run's own code must not hold it whole.
EARLIER_HEAD, EARLIER_TAIL = "runEARLIERscan", "Xq7Zk"
SCAN_MEMORY = f"""
import ctypes
HEAD, TAIL = {EARLIER_HEAD.encode()!r}, {EARLIER_TAIL.encode()!r}
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
buffer = ctypes.create_string_buffer(1 << 24)
def read(address, size):
    here, there = iovec(ctypes.addressof(buffer), size), iovec(address, size)
    done = libc.process_vm_readv(os.getpid(), ctypes.byref(here), 1, ctypes.byref(there), 1, 0)
    return buffer.raw[:done] if done > 0 else b''
hits, regions, read_bytes = 0, 0, 0
with open('/proc/self/maps') as maps:
    lines = maps.read().splitlines()
for line in lines:
    fields = line.split()
    if 'r' not in fields[1] or fields[-1] in ('[vvar]', '[vvar_vclock]', '[vsyscall]'):
        continue
    start, end = (int(value, 16) for value in fields[0].split('-'))
    regions += 1
    while start < end:
        data = read(start, min(end - start, 1 << 24))
        if not data:
            break
        read_bytes += len(data)
        at = data.find(HEAD)
        while at >= 0:
            hits += data[at + len(HEAD):at + len(HEAD) + len(TAIL)] == TAIL
            at = data.find(HEAD, at + 1)
        start += len(data)
print('SCANNED', regions, 'FOUND', hits, 'BYTES', read_bytes)
"""


@pytest.mark.slow
def test_a_run_finds_no_earlier_runs_id_anywhere_in_its_memory(host, tmp_path, fake_worker):
    """The fork server never holds a run's data: it forks on a request that carries nothing of the run
    (the child receives its job through a file descriptor of its own), so no buffer of an earlier
    request — run ids, directory names — is left in the memory every later run is forked from.  A
    run reads its whole memory (every readable region of /proc/self/maps, through
    ``process_vm_readv`` on itself: its /proc/self/mem is root's, the job being non-dumpable) for an
    earlier run's id."""
    manager = RunManager(host=host, run_root=str(tmp_path))
    earlier = EARLIER_HEAD + EARLIER_TAIL

    def run(run_id: str, job: dict) -> dict:
        body = {
            "run_id": run_id,
            "submission_id": "sub123456789",
            "params": job,
            "initial_population": None,
            "caps": {"time_seconds": 60, "memory_mb": 512},
            "report": {"url": f"{fake_worker.url}/internal/v1/runs/{run_id}", "token": "ab" * 32},
        }
        assert client.post("/runs", json=body).status_code == 202
        return fake_worker.wait_for(f"/{run_id}/complete", 60)["body"]

    with TestClient(create_app(manager)) as client:
        first = run(earlier, hostile("pass"))
        assert first["status"] == "succeeded", first
        scan = run("runLATERscan0001", hostile(SCAN_MEMORY))
    assert manager.wait_idle(10)
    assert scan["status"] == "succeeded", scan
    line = next(line for line in scan["output"].splitlines() if line.startswith("SCANNED"))
    regions, found, scanned = int(line.split()[1]), int(line.split()[3]), int(line.split()[5])
    assert regions > 20 and scanned > 20 * 2**20 and found == 0, line


IDENTITY = """
import ctypes, sys
print('IDENTITY', hash('allele'), id(sys), ctypes.cast(ctypes.CDLL(None).printf, ctypes.c_void_p).value)
"""


@pytest.mark.slow
def test_the_fork_server_is_re_executed_and_no_run_waits_for_it(host):
    """Every fork of one server shares its string-hash seed and its memory layout; after
    ``rotate_runs`` forks a fresh server (a new interpreter: a new hash seed, new addresses) takes
    over.  It warms up aside: the run that started the rotation is forked by the current server at
    once, the fresh one takes the runs after it, and the old one is closed once its runs are over."""
    forks = ForkServer(rotate_runs=2)
    rotating = sandbox.Host(isolation=host.isolation, uids=host.uids, cgroups=host.cgroups, forks=forks)
    first = forks.pid
    seen: list[tuple[int, int]] = []  # (parent, rotations so far) as each run starts

    def run() -> str:
        body, _ = run_child(
            rotating,
            hostile(IDENTITY),
            on_start=lambda process: seen.append((_parent_of(process.pid), forks.rotations)),
        )
        assert body["status"] == "succeeded", body
        return next(line for line in body["output"].splitlines() if line.startswith("IDENTITY"))

    try:
        before = [run(), run()]  # the second fork is the rotation's start
        deadline = time.monotonic() + 60
        while forks.rotations == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert forks.rotations == 1 and forks.pid != first
        after = run()
        assert _gone(first)
    finally:
        forks.close()
    assert seen == [(first, 0), (first, 0), (forks.pid, 1)], (seen, first, forks.pid)
    assert before[0] == before[1], before  # one server: the same seed and layout
    hashes, heaps, libraries = (set(values) for values in zip(*(line.split()[1:] for line in [before[0], after])))
    assert len(hashes) == 2 and len(heaps) == 2 and len(libraries) == 2, (before, after)


def _gone(pid: int, timeout: float = 10.0) -> bool:
    """``pid`` is gone (or a zombie: exited, not yet reaped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        if stat[stat.rindex(")") + 2] == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_a_fork_server_that_died_is_replaced(host):
    """A fork server killed under the worker: the run that finds it gone cannot start (and fails as
    the worker's error), and a fresh server takes the runs after it — before, every later run failed
    until the worker restarted."""
    import signal

    from allele_worker.sandbox.forks import ForkServerGone

    forks = ForkServer()
    replaced = sandbox.Host(isolation=host.isolation, uids=host.uids, cgroups=host.cgroups, forks=forks)
    dead = forks.pid
    try:
        os.kill(dead, signal.SIGKILL)
        assert _gone(dead)
        with pytest.raises(ForkServerGone):
            run_child(replaced, hostile("pass"))
        deadline = time.monotonic() + 60
        while forks.rotations == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        body, _ = run_child(replaced, hostile("pass"))
    finally:
        forks.close()
    assert forks.pid != dead and body["status"] == "succeeded", body
