"""The runs this worker knows: start each in its own sandboxed child, report, cancel, forget.

One supervisor thread per run: spawn → (progress every ≤ 1.5 s) → reap → fold → complete report.
Finished run ids are remembered (bounded, by age and count) so a queue message delivered twice
starts nothing new.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import results
from errors import UnknownRun
from reports import Reporter
from sandbox import Isolation, Limits, SandboxedProcess

__all__ = ["RunManager", "RunRequest"]

log = logging.getLogger("allele.runs")


@dataclass(frozen=True)
class RunRequest:
    """A validated ``POST /runs`` body."""

    run_id: str
    submission_id: str
    params: dict[str, Any]
    initial_population: list[list[float]] | None
    time_seconds: float
    memory_mb: int
    report_url: str
    report_token: str

    def child_spec(self) -> dict[str, Any]:
        """What the child receives: no report URL, no token."""
        return {"run_id": self.run_id, "params": self.params,
                "initial_population": self.initial_population,
                "caps": {"time_seconds": self.time_seconds, "memory_mb": self.memory_mb}}


class _Cancelled(Exception):
    """Cancelled before the child was started."""


class _Run:
    def __init__(self, manager: RunManager, request: RunRequest) -> None:
        self.manager, self.request = manager, request
        size = len(request.initial_population or []) * max(1, len(
            (request.initial_population or [[0]])[0]))
        size = max(size, int(request.params.get("sol_per_pop", 0) or 0)
                   * int(request.params.get("num_genes", 0) or 0))
        self.limits = Limits.from_caps(time_seconds=request.time_seconds,
                                       memory_mb=request.memory_mb, population_size=size,
                                       **manager.limit_overrides)
        self.reporter = manager.reporter_factory(request.report_url, request.report_token)
        self.cancelled = False
        self.process: SandboxedProcess | None = None
        self.final_metrics: dict[str, Any] | None = None
        self.process_done = threading.Event()
        self._progress: dict[str, Any] | None = None
        self.thread = threading.Thread(target=self._supervise, name=f"run-{request.run_id}",
                                       daemon=True)

    # -- supervisor thread

    def _supervise(self) -> None:
        uid = self.manager.take_uid()
        workdir = tempfile.mkdtemp(prefix=f"run-{self.request.run_id}-", dir=self.manager.run_root)
        body: dict[str, Any] | None = None
        try:
            self.process = SandboxedProcess(
                spec=self.request.child_spec(), limits=self.limits,
                isolation=self.manager.isolation, workdir=workdir, uid=uid,
                on_progress=self._on_progress)
            if self.cancelled:
                raise _Cancelled
            self.process.start()
            if self.cancelled:
                self.process.kill("cancel")
            progress_thread = threading.Thread(target=self._send_progress, daemon=True)
            progress_thread.start()
            report = self.process.wait()
            self.final_metrics = results.metrics(report)
            if not self.cancelled:
                body = results.fold(report, self.limits)
                self.final_metrics = body["metrics"]
        except _Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001 - the run must still end in a recorded state
            log.exception("run %s: worker failure", self.request.run_id)
            body = {"status": "failed", "result": None,
                    "error": {"code": "internal_error",
                              "message": f"the worker could not run the job ({type(exc).__name__})"},
                    "metrics": results.metrics(None), "output": "", "engine": results.ENGINE}
            self.final_metrics = body["metrics"]
        finally:
            self.process_done.set()
            shutil.rmtree(workdir, ignore_errors=True)
            self.manager.give_uid(uid)
        try:
            if body is not None and not self.cancelled:
                log.info("run %s ended: %s%s", self.request.run_id, body["status"],
                         f" ({body['error']['code']})" if body["error"] else "")
                self.reporter.complete(body)
        finally:
            self.reporter.close()
            self.manager.finish(self.request.run_id)

    def _on_progress(self, message: dict[str, Any]) -> None:
        self._progress = message

    def _send_progress(self, interval: float = 1.5) -> None:
        """Progress is also the run's heartbeat: sent from the start (generation 0 until the first one
        ends), so a slow first generation does not look like a lost worker."""
        while not self.process_done.is_set() and not self.cancelled:
            self.reporter.progress(self._progress or {"generations_completed": 0, "best_solution_fitness": None})
            if self.process_done.wait(interval):
                break

    # -- cancel

    def cancel(self, timeout: float = 15.0) -> dict[str, Any]:
        self.cancelled = True
        self.reporter.stopped.set()
        if self.process is not None:
            self.process.kill("cancel")
        self.process_done.wait(timeout)
        return self.final_metrics or results.metrics(None)


class RunManager:
    def __init__(self, *, isolation: Isolation, run_root: str | None = None,
                 uid_base: int | None = None, uid_slots: int = 1000,
                 reporter_factory: Callable[[str, str], Reporter] = Reporter,
                 remember_finished: int = 10000, remember_seconds: float = 24 * 3600,
                 limit_overrides: dict[str, Any] | None = None) -> None:
        self.isolation = isolation
        self.run_root = run_root or tempfile.mkdtemp(prefix="allele-runs-")
        os.chmod(self.run_root, 0o711)
        self.reporter_factory = reporter_factory
        self.limit_overrides = limit_overrides or {}
        self._uids = list(range(uid_base, uid_base + uid_slots)) if uid_base is not None else None
        self._live: dict[str, _Run] = {}
        self._finished: OrderedDict[str, float] = OrderedDict()
        self._remember = (remember_finished, remember_seconds)
        self._lock = threading.Lock()

    # -- uids: each live run has a user of its own (process limit and cleanup are per run)

    def take_uid(self) -> int | None:
        if self._uids is None:
            return None
        with self._lock:
            if not self._uids:
                raise RuntimeError("no free sandbox uid")
            return self._uids.pop(0)

    def give_uid(self, uid: int | None) -> None:
        if uid is not None and self._uids is not None:
            with self._lock:
                self._uids.append(uid)

    # -- runs

    def start(self, request: RunRequest) -> tuple[bool, str]:
        """(started, state): started is False when the run id was already known."""
        with self._lock:
            self._forget_old()
            if request.run_id in self._live:
                return False, "running"
            if request.run_id in self._finished:
                return False, "finished"
            run = _Run(self, request)
            self._live[request.run_id] = run
        run.thread.start()
        return True, "running"

    def cancel(self, run_id: str) -> dict[str, Any]:
        with self._lock:
            run = self._live.get(run_id)
        if run is None:
            raise UnknownRun(run_id)
        return run.cancel()

    def finish(self, run_id: str) -> None:
        with self._lock:
            self._live.pop(run_id, None)
            self._finished[run_id] = time.monotonic()
            self._forget_old()

    def _forget_old(self) -> None:
        count, seconds = self._remember
        now = time.monotonic()
        while self._finished and (len(self._finished) > count
                                  or now - next(iter(self._finished.values())) > seconds):
            self._finished.popitem(last=False)

    @property
    def active_runs(self) -> int:
        with self._lock:
            return len(self._live)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.active_runs == 0:
                return True
            time.sleep(0.05)
        return False
