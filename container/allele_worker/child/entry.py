"""Entry of the sandboxed child process (started by ``sandbox.SandboxedProcess``, never by hand).

``python -I -m allele_worker.child --spec PATH --msg-fd N``: read the job, confine this process, run
the GA, send the outcome as the last JSON line on fd N.  ``... --probe PLAN``: apply the confinement plan and
print which measures failed (used once at worker start).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..sandbox.confine import CLONE_NEWUSER, confine, load_libc

INTERNAL_EXIT = 70


def _writer(fd: int) -> Callable[[dict[str, Any]], None]:
    def emit(message: dict[str, Any]) -> None:
        data = (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]

    return emit


def probe(plan_text: str) -> int:
    """Confine this process as a run would be, then try what a hostile run would; print what failed."""
    plan = json.loads(plan_text)
    failed = confine(plan)
    if plan.get("network") and "network" not in failed:
        import socket

        try:
            socket.create_connection(("1.1.1.1", 53), timeout=1).close()
            failed["network"] = "a connection still went out"
        except OSError:
            pass
    if plan.get("pid_namespace") and "pid_namespace" not in failed:
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
        if others:
            failed["pid_namespace"] = f"the run still sees {len(others)} other process(es)"
    if plan.get("minimal_root") and "minimal_root" not in failed:
        visible = [p for p in plan.get("probe_hidden", []) if os.path.exists(p)]
        if visible:
            failed["minimal_root"] = f"the run still sees {', '.join(visible)}"
    if plan.get("uid") is not None and "user" not in failed:
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
    if plan.get("syscall_filter") and "syscall_filter" not in failed:
        libc = load_libc()
        if libc.unshare(CLONE_NEWUSER) == 0:
            failed["syscall_filter"] = "the run could still create a user namespace"
    print(json.dumps({"failed": failed}))
    return 0


def run(spec_path: str, msg_fd: int) -> int:
    emit = _writer(msg_fd)
    try:
        with open(spec_path, "rb") as handle:
            spec_data = json.load(handle)
        os.unlink(spec_path)
        confine(spec_data["sandbox"])
    except Exception as exc:  # noqa: BLE001 - nothing of the user's has run yet
        emit(
            {
                "type": "outcome",
                "status": "failed",
                "error": {"code": "internal_error", "message": f"sandbox setup failed: {exc}"},
            }
        )
        return INTERNAL_EXIT
    main_pid = os.getpid()  # the job's (confine forks): a process forked by user code never reports
    from . import jobs

    outcome = jobs.execute(jobs.JobSpec.from_dict(spec_data), emit)
    if os.getpid() != main_pid:
        os._exit(0)  # a process forked by user code never reports
    try:
        emit(outcome)
    except (ValueError, TypeError):
        emit(
            {
                "type": "outcome",
                "status": "failed",
                "error": {"code": "internal_error", "message": "the result could not be encoded"},
            }
        )
    sys.stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--probe":
        return probe(argv[2])
    if len(argv) == 5 and argv[1] == "--spec" and argv[3] == "--msg-fd":
        return run(argv[2], int(argv[4]))
    print("allele_worker.child is started by the worker, not by hand", file=sys.stderr)
    return 2
