"""The warm fork server: one process that has imported numpy, PyGAD and the engine (and, started with
``--import``, the modules it names: the scientific stack's, ``sandbox.forks.STACK_MODULES``), and forks
one child per run on the worker's request; the child then confines itself exactly as a freshly started
one does (``entry.run``: namespaces, minimal root, cgroup, its own uid, rlimits) before any user code
runs.  ``python -I -u -m allele_worker.child.forkserver FD [--import a.b,c]``, started by
``sandbox.forks.ForkServer``.

It is child-side by nature: it imports the job's code path and the engine (what its children run)
and nothing of the worker's, and it runs with the children's environment.

It is started by the worker with the children's empty environment and holds no secret, no report
token and no socket but its control socket to the worker, which every child closes first (with the
pidfds by which it learns at once that a live child exited: one per child, closed once reaped). It never
runs user code itself, so no run can leave anything behind for the next: each child is a fresh fork of
the same clean parent. It dies with the worker (death signal), and its children with it (theirs).

It never holds a run's data either: a request carries nothing of the run, only four file descriptors
(the child reads its own job from one of them after the fork), so no buffer of one run's request —
its id, its directory — is left in the memory every later run is forked from.

Protocol on the control socket (``SOCK_SEQPACKET``, one JSON message per packet): server → worker
``{"ready": true}`` once warm (``wire.ForkReady``); worker → server ``{"id": n}`` with four file
descriptors — the run's output, its channel, its spec and its store (``ForkRequest``); server → worker
``{"started": n, "pid": pid}`` (``ForkStarted``), and later ``{"exited": pid, "status": s, "cpu":
seconds, "maxrss_kb": k}`` (``ForkExited``) as soon as the child has exited and is reaped.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from collections.abc import Sequence

from ..sandbox.confine import PR_SET_PDEATHSIG, load_libc
from ..wire import (
    MESSAGE_BYTES,
    ChannelLimits,
    ChildMessage,
    ForkExited,
    ForkReady,
    ForkRequest,
    ForkStarted,
    GaParams,
    to_json,
)

_FITNESS = "import numpy\ndef fitness(ga, solution, index):\n    return -float(numpy.sum(solution ** 2))\n"
_BATCH = "import numpy\ndef fitness(ga, rows, indices):\n    return -numpy.sum(rows ** 2, axis=1)\n"
_CONSTRAINT = (
    "def positive(solution, values):\n    return [v for v in values if v > 0]\nCONSTRAINTS = [positive] * 10\n"
)
_WARM_UP_RUN: GaParams = {
    "num_generations": 4,
    "sol_per_pop": 20,
    "num_parents_mating": 4,
    "num_genes": 10,
    "random_seed": 0,
    "fitness_func_entry": "fitness",
}
# The warm-up jobs' parameters: the service's own code through the paths most runs take (per-solution
# and batch fitness in the lean loop, a gene constraint), so a forked child finds the interpreter's
# specialised bytecode and the engine's caches ready instead of paying their first use.  Never a
# job's code.
_WARM_UP_EXTRAS: tuple[GaParams, ...] = (
    {"fitness_func": _FITNESS},
    {"fitness_func": _BATCH, "fitness_batch_size": 20},
    {"fitness_func": _FITNESS, "gene_constraint": _CONSTRAINT, "gene_constraint_entry": "CONSTRAINTS"},
)
WARM_UP_PARAMS: tuple[GaParams, ...] = tuple({**_WARM_UP_RUN, **extra} for extra in _WARM_UP_EXTRAS)
WARM_UP_CHANNEL: ChannelLimits = {
    "message_bytes": MESSAGE_BYTES,
    "outcome_bytes": 1 << 20,
    "messages_per_second": 20,
    "message_burst": 200,
}


def warm(modules: Sequence[str] = ()) -> None:
    """Import what every run imports (and ``modules``) and run the warm-up jobs — each one's progress and
    outcome through a relay's collector too, as a run's relay collects them — so a forked child starts
    with all of it loaded and used once; then freeze what is left, so a child's garbage collections
    never walk (and so never copy, page by page) the objects it shares with this parent.  None of it
    may start a thread: this process forks (tests/test_forkserver.py holds it to one)."""
    import gc
    import importlib

    import numpy  # noqa: F401
    import pygad  # noqa: F401

    for name in modules:
        importlib.import_module(name)

    from ..engine import accelerated  # noqa: F401
    from . import entry, jobs  # noqa: F401
    from .collector import outcome_lines

    for params in WARM_UP_PARAMS:
        sent: list[ChildMessage] = []
        sent.extend(outcome_lines(jobs.execute(jobs.JobSpec(params=dict(params)), sent.append)))
        _collect(sent)
    gc.collect()
    gc.freeze()


def _collect(messages: list[ChildMessage]) -> None:
    """A warm-up job's messages through a collector, as a run's relay reads and stores them (into a
    pipe, a throw-away store and /dev/null), so its code is specialised here, once, not in every run."""
    from ..sandbox.store import memory_file
    from .collector import Collector

    job_r, job_w = os.pipe()
    channel = os.open(os.devnull, os.O_WRONLY)
    store = memory_file("allele-warm-up")
    try:
        os.write(job_w, b"".join(to_json(message) + b"\n" for message in messages[-3:]))  # < a pipe's 64 KiB
        os.close(job_w)
        Collector(job_r, channel, store, WARM_UP_CHANNEL)(0)
    finally:
        for fd in (job_r, channel, store):
            os.close(fd)


def _fresh_randomness() -> None:
    """Every run's own unseeded random numbers: a fork inherits the parent's generator states, so
    without this every run would draw the same ``numpy.random`` numbers (Python's ``random`` reseeds
    itself after a fork; reseeded here too, explicitly)."""
    import random

    import numpy

    random.seed()
    numpy.random.seed()


def _child(control: socket.socket, fds: list[int], exits: dict[int, int]) -> None:
    """In the forked child: become the run's process, then run it as ``python -m allele_worker.child``
    would (``entry.run``).  It never returns: whatever happens, this process ends here."""
    code = 70
    try:
        control.close()
        for exit_fd in exits:  # the other runs' exit notices: nothing of theirs stays in this one
            os.close(exit_fd)
        os.setsid()
        output, channel, spec, store, *slots = fds
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        _fresh_randomness()
        from . import entry

        code = entry.run(spec, channel, store, tuple(slots))
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve(control: socket.socket, modules: Sequence[str] = ()) -> None:
    libc = load_libc()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    warm(modules)
    ready: ForkReady = {"ready": True}
    control.send(to_json(ready))
    children: set[int] = set()
    exits: dict[int, int] = {}  # a pidfd per child (readable once it exited) → its pid
    while True:
        # A child's exit wakes the loop at once (its pidfd); a kernel without pidfds is polled.
        polled = len(exits) < len(children)
        watched: list[socket.socket | int] = [control, *exits]
        readable, _, _ = select.select(watched, [], [], 0.02 if polled else None)
        if control in readable:
            message, fds, _, _ = socket.recv_fds(control, 256, 7)
            if not message:
                os._exit(0)  # the worker is gone
            request: ForkRequest = json.loads(message)
            pid = os.fork()
            if pid == 0:
                _child(control, fds, exits)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            exit_fd = _exit_notice(pid)
            if exit_fd is not None:
                exits[exit_fd] = pid
            started: ForkStarted = {"started": request["id"], "pid": pid}
            control.send(to_json(started))
        while children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            for exit_fd in [fd for fd, child in exits.items() if child == pid]:
                os.close(exit_fd)
                del exits[exit_fd]
            exited: ForkExited = {
                "exited": pid,
                "status": status,
                "cpu": usage.ru_utime + usage.ru_stime,
                "maxrss_kb": usage.ru_maxrss,
            }
            control.send(to_json(exited))


def _exit_notice(pid: int) -> int | None:
    """A pidfd of the child (Linux ≥ 5.3): readable once the child has exited. None without them."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def main(argv: Sequence[str]) -> None:
    modules = argv[argv.index("--import") + 1].split(",") if "--import" in argv else []
    serve(socket.socket(fileno=int(argv[1])), modules)


if __name__ == "__main__":
    main(sys.argv)
