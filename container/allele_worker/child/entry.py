"""Entry of the sandboxed child process (started by ``sandbox.SandboxedProcess``, never by hand).

``python -I -m allele_worker.child --spec-fd N --msg-fd M --store-fd S`` (``child/__main__.py``), or
``run()`` in a fork of the warm fork server: read the job (``wire.ChildSpec``) from fd N, confine this
process — which becomes the run's relay, collecting what the job sends (``collector.Collector``: checked
progress to fd M, the validated outcome into the store S) — and in the job run the GA, sending progress
and then the outcome as JSON lines to the relay (``wire.ChildMessage``).  ``... --probe PLAN``: apply
the confinement plan (``wire.SandboxPlan``) and print which measures failed (``wire.ProbeAnswer``; used
once at worker start).
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from typing import cast

from ..sandbox.confine import CLONE_NEWUSER, confine, load_libc
from ..wire import (
    MESSAGE_BYTES,
    POPULATION_NOT_LOADED,
    ChannelLimits,
    ChildMessage,
    ChildSpec,
    FailedOutcome,
    Population,
    ProbeAnswer,
    SandboxPlan,
    population_problem,
    to_json,
)
from . import libraries
from .collector import Collector, outcome_lines

INTERNAL_EXIT = 70
SUSPENDED_EXIT = 75  # a drained run: checkpointed at a generation boundary and stopped (no outcome)
# The limits of a collector that reads no job (a failure before there is one).
_NO_JOB: ChannelLimits = {
    "message_bytes": MESSAGE_BYTES,
    "outcome_bytes": 0,
    "messages_per_second": 0,
    "message_burst": 0,
}


def _writer(fd: int) -> Callable[[ChildMessage], None]:
    def emit(message: ChildMessage) -> None:
        data = to_json(message)
        for piece in (data + b"\n",) if len(data) < MESSAGE_BYTES else (data, b"\n"):  # no copy of an outcome
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view) :]

    return emit


def probe(plan_text: str) -> int:
    """Confine this process as a run would be, then try what a hostile run would; print what failed."""
    plan: SandboxPlan = json.loads(plan_text)
    failed = confine(plan)
    if plan["network"] and "network" not in failed:
        import socket

        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1).close()
            failed["network"] = "a connection still went out"
        except OSError:
            pass
    if plan["pid_namespace"] and "pid_namespace" not in failed:
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
        if others:
            failed["pid_namespace"] = f"the run still sees {len(others)} other process(es)"
    if plan["minimal_root"] and "minimal_root" not in failed:
        visible = [p for p in plan.get("probe_hidden", []) if os.path.exists(p)]
        if visible:
            failed["minimal_root"] = f"the run still sees {', '.join(visible)}"
    if plan["uid"] is not None and "user" not in failed:
        try:
            import math  # noqa: F401 - an extension module of the standard library

            import numpy  # noqa: F401
            import pygad  # noqa: F401
        except ImportError as exc:
            failed["user"] = f"the Python installation is not readable by the run's user ({exc})"
        try:
            with open("/proc/1/environ", "rb"):
                pass
            failed.setdefault("user", "could still read /proc/1/environ")
        except OSError:
            pass
    # Last: where the filter is missing, this leaves the probe in a user namespace of its own.
    if plan["syscall_filter"] and "syscall_filter" not in failed:
        libc = load_libc()
        if libc.unshare(CLONE_NEWUSER) == 0:
            failed["syscall_filter"] = "the run could still create a user namespace"
    answer: ProbeAnswer = {"failed": failed}
    print(json.dumps(answer))
    return 0


def run(spec_fd: int, channel_fd: int, store_fd: int, slot_fds: tuple[int, ...] = ()) -> int:
    """The run's child: read the spec, confine (this process stays the relay, collecting; ``confine``
    returns in the job), run the job.  Before the relay exists, a failure is collected here.
    ``slot_fds``: a durable run's two checkpoint slots (memfds), which only the job keeps."""
    relay = os.getpid()
    # The spec is its file's first line; a fetched start population follows it, read by the job.
    spec_file = os.fdopen(spec_fd, "rb")
    try:
        spec: ChildSpec = json.loads(spec_file.readline())
    except Exception as exc:  # noqa: BLE001 - nothing of the user's has run yet
        spec_file.close()
        Collector(-1, channel_fd, store_fd, _NO_JOB).collect_own(_internal_error(f"the job could not be read: {exc}"))
        return INTERNAL_EXIT
    if "initial_population_bytes" not in spec:
        spec_file.close()
    job_r, job_w = os.pipe()
    collector = Collector(job_r, channel_fd, store_fd, spec["channel"], sources=spec["params"])
    emit = _writer(job_w)
    try:
        confine(spec["sandbox"], relay=collector)
    except Exception as exc:  # noqa: BLE001 - nothing of the user's has run yet
        failure = _internal_error(f"sandbox setup failed: {exc}")
        if os.getpid() == relay:
            collector.collect_own(failure)  # no job was forked: this process collects
        else:
            emit(failure)  # the run's init or job: the relay collects it
        return INTERNAL_EXIT
    for fd in collector.keep_fds:  # the job holds nothing of the relay's: not the channel, not the store
        os.close(fd)
    main_pid = os.getpid()  # the job's (confine forks): a process forked by user code never reports
    libraries.prepare(places=spec["places"], memory_mb=int(spec["caps"]["memory_mb"]))
    if "initial_population_bytes" in spec:
        population = _start_population(spec_file, spec["initial_population_bytes"])
        if population is None:
            emit(_internal_error(POPULATION_NOT_LOADED))
            return INTERNAL_EXIT
        spec["initial_population"] = population
    from . import jobs

    job = jobs.JobSpec.from_dict(spec, emit, slot_fds)
    try:
        outcome = jobs.execute(job, emit)
    except jobs.Suspended:
        # Drained: its last checkpoint is written and announced; no outcome (the worker hands it back).
        sys.stdout.flush()
        os._exit(SUSPENDED_EXIT)
    del spec
    if os.getpid() != main_pid:
        os._exit(0)  # a process forked by user code never reports
    try:
        for line in outcome_lines(outcome):  # a succeeded run's population first, on a line of its own
            emit(line)
    except (ValueError, TypeError):
        emit(_internal_error("the result could not be encoded"))
    sys.stdout.flush()
    return 0


def _start_population(spec_file: io.BufferedReader, size: int) -> Population | None:
    """The start population after the spec (``size`` bytes of JSON), parsed and checked here, in the
    job, under the run's caps (a population too large for its memory cap fails as that); None when
    it is not one (the worker fetched it unread)."""
    with spec_file:
        raw = spec_file.read(size)
    if len(raw) != size:
        return None
    try:
        population: object = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    del raw
    return cast(Population, population) if population_problem(population) is None else None


def _internal_error(message: str) -> FailedOutcome:
    return {"type": "outcome", "status": "failed", "error": {"code": "internal_error", "message": message}}


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--probe":
        return probe(argv[2])
    if len(argv) == 7 and argv[1::2] == ["--spec-fd", "--msg-fd", "--store-fd"]:
        return run(int(argv[2]), int(argv[4]), int(argv[6]))
    if len(argv) == 9 and argv[1::2] == ["--spec-fd", "--msg-fd", "--store-fd", "--checkpoint-fds"]:
        slots = tuple(int(fd) for fd in argv[8].split(","))
        return run(int(argv[2]), int(argv[4]), int(argv[6]), slots)
    print("allele_worker.child is started by the worker, not by hand", file=sys.stderr)
    return 2
