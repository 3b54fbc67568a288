"""The worker's side of the warm fork server (allele_worker/child/forkserver.py): start it, ask it for a
run's child, learn when that child exits and what it used, and re-execute it from time to time.
Thread-safe: runs start from many threads.

It lives in the sandbox, below both sides: ``SandboxedProcess`` spawns through it as it would through a
fresh interpreter, and ``Host`` starts it once per worker.  Its messages are ``wire.ForkRequest`` and
``ForkReady`` / ``ForkStarted`` / ``ForkExited``.

**Rotation.**  Every run forked from one server process shares its string-hash seed and its memory
layout (the addresses of the interpreter, the libraries and the heap).  ``ForkServer`` starts a fresh
server process — a new interpreter: a new random hash seed (``-I`` ignores ``PYTHONHASHSEED``), new
address-space randomization — once the current one has forked ``rotate_runs`` children or is
``rotate_seconds`` old (``ALLELE_FORK_SERVER_RUNS``, ``ALLELE_FORK_SERVER_SECONDS``; checked at each
fork, so an idle worker does nothing).  The new one warms up in the background while the current one
keeps serving, so no run waits for it; once it is ready it takes every new run, and the old one is
closed when its last child has exited (its children's death signals are tied to it).  Every server is
started from one thread that lives as long as ``ForkServer`` (a server's death signal fires when the
thread that started it ends, not only its process)."""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from ..wire import CODE_FIELDS, ForkExited, ForkReady, ForkRequest, ForkStarted, GaParams, to_json
from .plan import child_environment

log = logging.getLogger("allele.sandbox")

# A fresh fork server after this many forks or this many seconds, whichever comes first
# (docs/performance.md, "The fork server's re-execution": its start costs 0.2–0.3 CPU-seconds).
ROTATE_RUNS = 100
ROTATE_SECONDS = 600.0

# What the stack's fork server imports besides numpy, PyGAD and the engine (``Host.stack_forks``): the
# modules of the scientific stack a fitness function is likely to import (docs/environment.md), so that a
# run's ``import sklearn.ensemble`` finds them loaded. Measured (docs/performance.md, "The scientific
# stack's imports"): seconds of imports per run saved, ≈ 100 MB more in the server, which every run
# forked from it shares — and counts in its resident memory, which is why runs that do not name the stack
# are forked from the plain server. Not TensorFlow: ≈ 600 MB and seconds to import, a minority of runs,
# and refused below its memory floor (sandbox/plan.py NN_MIN_MEMORY_MB); a run imports it itself. None of
# these starts a thread on import (tests/test_forkserver.py).
STACK_MODULES = (
    "scipy.optimize",
    "scipy.stats",
    "scipy.spatial",
    "scipy.integrate",
    "scipy.interpolate",
    "pandas",
    "sklearn.datasets",
    "sklearn.metrics",
    "sklearn.model_selection",
    "sklearn.preprocessing",
    "sklearn.pipeline",
    "sklearn.linear_model",
    "sklearn.tree",
    "sklearn.ensemble",
    "sklearn.svm",
    "sklearn.neighbors",
    "sklearn.naive_bayes",
    "sklearn.cluster",
    "sklearn.decomposition",
    "sklearn.neural_network",
    "sklearn.feature_selection",
)
# A run whose code names one of these packages is forked from the stack's server (``names_the_stack``).
_STACK_NAMES = re.compile(r"\b(?:" + "|".join(sorted({module.partition(".")[0] for module in STACK_MODULES})) + r")\b")


def names_the_stack(params: GaParams) -> bool:
    """Whether a code field of ``params`` names a package of ``STACK_MODULES`` (as a word, anywhere: an
    import, or a comment — a fork of the stack's server costs such a run nothing it would not pay)."""
    for name in CODE_FIELDS:
        code = params.get(name)
        if isinstance(code, str) and _STACK_NAMES.search(code):
            return True
    return False


@dataclass(frozen=True)
class Exit:
    status: int  # the wait status, as os.wait4 gives it
    cpu_seconds: float
    maxrss_kb: int


class ForkServerGone(RuntimeError):
    """The fork server died: runs cannot start until a fresh one is ready."""


class _Server:
    """One fork server process: its control socket, the children it forked and their exits."""

    def __init__(self, *, timeout: float = 60.0, modules: Sequence[str] = ()) -> None:
        self._control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        home = "/tmp"
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-u",
                "-m",
                "allele_worker.child.forkserver",
                str(theirs.fileno()),
                *(("--import", ",".join(modules)) if modules else ()),
            ],
            pass_fds=(theirs.fileno(),),
            env=child_environment(home),
            cwd="/",
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        theirs.close()
        try:
            self._control.settimeout(timeout)
            ready: ForkReady = json.loads(self._control.recv(1 << 16) or b"{}")
            self._control.settimeout(None)
            if not ready.get("ready"):
                raise ForkServerGone("the fork server did not start")
        except BaseException:
            self.close()
            raise
        self.users = 0  # runs forked (or being forked) by it whose exit has not been waited for yet
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
        """A new child for a run: ``fds`` are its output, channel, spec and store, then a durable
        run's two checkpoint slots and its drain byte (the request carries nothing else of the run);
        returns its pid (its own session)."""
        with self._lock:
            self._next_id += 1
            request = self._next_id
            fork: ForkRequest = {"id": request}
            try:
                socket.send_fds(self._control, [to_json(fork)], list(fds))
            except OSError as exc:
                raise ForkServerGone(f"the fork server is gone ({exc})") from None
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

    @property
    def gone(self) -> bool:
        return self._gone

    def close(self) -> None:
        try:
            self._control.close()
        finally:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(5)


class ForkServer:
    """The warm fork server, re-executed after ``rotate_runs`` forks or ``rotate_seconds`` (module
    docstring).  ``spawn`` and ``wait`` as one server's; ``pid`` is the current server's."""

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        rotate_runs: int | None = None,
        rotate_seconds: float | None = None,
        modules: Sequence[str] = (),
    ) -> None:
        self.timeout = timeout
        self.modules = tuple(modules)  # imported by each of its servers besides numpy, PyGAD and the engine
        self.rotate_runs = rotate_runs or int(os.environ.get("ALLELE_FORK_SERVER_RUNS") or ROTATE_RUNS)
        self.rotate_seconds = rotate_seconds or float(os.environ.get("ALLELE_FORK_SERVER_SECONDS") or ROTATE_SECONDS)
        self._tasks: queue.SimpleQueue[tuple[Callable[[], object], Future[object]] | None] = queue.SimpleQueue()
        threading.Thread(target=self._launcher, daemon=True, name="forkserver-launcher").start()
        try:
            started = self._in_launcher(lambda: _Server(timeout=timeout, modules=self.modules)).result()
        except BaseException:
            self._tasks.put(None)
            raise
        assert isinstance(started, _Server)
        self._current = started
        self._born, self._forks = time.monotonic(), 0
        self._owners: dict[int, _Server] = {}  # a child's pid → the server that forked it
        self._replacing = False
        self._closed = False
        self._lock = threading.Lock()
        self.rotations = 0  # fresh servers that took over so far

    def spawn(self, fds: Sequence[int]) -> int:
        """A new child for a run, forked by the current server (see ``_Server.spawn``)."""
        with self._lock:
            server = self._current
            server.users += 1
            self._forks += 1
            due = not self._replacing and (
                self._forks >= self.rotate_runs or time.monotonic() - self._born >= self.rotate_seconds or server.gone
            )
            self._replacing = self._replacing or due
        if due:  # the fresh one warms up aside: this run (and the next ones until it is ready) go on
            self._in_launcher(self._replace)
        try:
            pid = server.spawn(fds)
        except BaseException:
            self._release(server)
            raise
        with self._lock:
            self._owners[pid] = server
        return pid

    def wait(self, pid: int) -> Exit:
        """Blocks until the child ``pid`` has exited and was reaped by the server that forked it."""
        with self._lock:
            server = self._owners[pid]
        try:
            return server.wait(pid)
        finally:
            with self._lock:
                del self._owners[pid]
            self._release(server)

    def _release(self, server: _Server) -> None:
        """One run less on ``server``: a retired server goes once it has none."""
        with self._lock:
            server.users -= 1
            retire = server is not self._current and server.users == 0
        if retire:
            server.close()

    def _launcher(self) -> None:
        """The one thread every server is started from (and so tied to by its death signal)."""
        while (task := self._tasks.get()) is not None:
            work, future = task
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for it
                future.set_exception(exc)

    def _in_launcher(self, work: Callable[[], object]) -> Future[object]:
        future: Future[object] = Future()
        self._tasks.put((work, future))
        return future

    def _replace(self) -> None:
        """Start a fresh server; once it is ready, it takes every new run and the current one retires."""
        started = time.monotonic()
        try:
            fresh = _Server(timeout=self.timeout, modules=self.modules)
        except (OSError, ForkServerGone) as exc:
            log.warning("fork server: a fresh one did not start (%s); the current one goes on", exc)
            with self._lock:
                self._replacing = False
                self._born, self._forks = time.monotonic(), 0  # tried again after another period
            return
        with self._lock:
            if self._closed:
                retired = fresh
            else:
                retired, self._current = self._current, fresh
                self._born, self._forks = time.monotonic(), 0
                self.rotations += 1
            self._replacing = False
            close = retired is fresh or retired.users == 0
        log.info("fork server re-executed in %.2f s (pid %d)", time.monotonic() - started, fresh.pid)
        if close:
            retired.close()

    @property
    def pid(self) -> int:
        return self._current.pid

    def close(self) -> None:
        with self._lock:
            self._closed = True
            servers = {self._current, *self._owners.values()}
        self._tasks.put(None)
        for server in servers:
            server.close()
