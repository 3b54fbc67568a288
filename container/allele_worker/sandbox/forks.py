"""The worker's side of the warm fork server (allele_worker/child/forkserver.py): start it, ask it for a
run's child, learn when that child exits and what it used. Thread-safe: runs start from many threads.

It lives in the sandbox, below both sides: ``SandboxedProcess`` spawns through it as it would through a
fresh interpreter, and ``Host`` starts it once per worker.  Its messages are ``wire.ForkRequest`` and
``ForkReady`` / ``ForkStarted`` / ``ForkExited``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..wire import ForkExited, ForkReady, ForkRequest, ForkStarted, to_json
from .plan import child_environment


@dataclass(frozen=True)
class Exit:
    status: int  # the wait status, as os.wait4 gives it
    cpu_seconds: float
    maxrss_kb: int


class ForkServerGone(RuntimeError):
    """The fork server died: runs cannot start until the worker restarts it."""


class ForkServer:
    def __init__(self, *, timeout: float = 60.0) -> None:
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        home = "/tmp"
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-u", "-m", "allele_worker.child.forkserver", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=child_environment(home),
            cwd="/",
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        theirs.close()
        self._control.settimeout(timeout)
        ready: ForkReady = json.loads(self._control.recv(1 << 16) or b"{}")
        self._control.settimeout(None)
        if not ready.get("ready"):
            raise ForkServerGone("the fork server did not start")
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._started: dict[int, int] = {}
        self._exits: dict[int, Exit] = {}
        self._next_id = 0
        self._gone = False
        threading.Thread(target=self._read, daemon=True, name="forkserver-reader").start()

    def _read(self) -> None:
        while True:
            try:
                data = self._control.recv(1 << 16)
            except OSError:
                data = b""
            with self._cond:
                if not data:
                    self._gone = True
                    self._cond.notify_all()
                    return
                message: ForkStarted | ForkExited = json.loads(data)
                if "started" in message:
                    self._started[message["started"]] = message["pid"]
                else:
                    self._exits[message["exited"]] = Exit(message["status"], message["cpu"], message["maxrss_kb"])
                self._cond.notify_all()

    def spawn(self, fds: Sequence[int]) -> int:
        """A new child for a run: ``fds`` are its output, channel, spec and store (the request carries
        nothing else of the run); returns its pid (its own session)."""
        with self._lock:
            self._next_id += 1
            request = self._next_id
            fork: ForkRequest = {"id": request}
            socket.send_fds(self._control, [to_json(fork)], list(fds))
        with self._cond:
            self._await(lambda: request in self._started)
            return self._started.pop(request)

    def wait(self, pid: int) -> Exit:
        """Blocks until the child ``pid`` has exited and was reaped by the fork server."""
        with self._cond:
            self._await(lambda: pid in self._exits)
            return self._exits.pop(pid)

    def _await(self, arrived: Callable[[], bool]) -> None:
        """Wait (holding ``_cond``) until ``arrived()``; ``ForkServerGone`` if the server died first."""
        while not arrived():
            if self._gone:
                raise ForkServerGone("the fork server died")
            self._cond.wait()

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> None:
        try:
            self._control.close()
        finally:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(5)
