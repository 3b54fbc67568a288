"""The runs this worker knows: start each in its own sandboxed child, report, cancel, forget.

One supervisor thread per run: (fetch the start population of a continue; fetch its data files or find
them in the data cache; a resumed run's checkpoint) → spawn → (progress every ≤ 1.5 s; each checkpoint
the job announces streamed to the Worker) → reap → fold → upload the final population (when too large to
ride in the report) and the staged files → complete report.  The population, the files and the result
go from the run's store (``sandbox.store``, where the run's relay wrote them) to the Worker a piece at a
time, unparsed.
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
from collections.abc import Callable, Mapping

from ..errors import AtCapacity, UnknownRun
from ..sandbox import Host, Limits, SandboxedProcess
from ..sandbox.plan import MIB
from ..sandbox.store import Part, Store
from ..wire import (
    POPULATION_NOT_LOADED,
    TRAIL_POINTS_PER_REPORT,
    CheckpointMessage,
    DataMount,
    Metrics,
    Progress,
    RunState,
    TrailPoint,
    downsample,
    size_param,
)
from . import completion
from .completion import Completion
from .data_cache import DataCache, DataFileRefused, DataFileUnavailable
from .reporter import Reporter, tls_context
from .run_request import RunRequest

__all__ = ["DATA_CACHE_BYTES", "RunManager"]

log = logging.getLogger("allele.runs")

SUSPENDED_EXIT = 75  # child/entry.py: a drained run, checkpointed and stopped without an outcome
CHECKPOINT_NOT_LOADED = "the run's checkpoint could not be loaded"
# A final population up to this much JSON (and all finite) rides inside the completion report: one
# request fewer for most runs; a larger one is PUT before the report (it may be hundreds of MB, more
# than the Worker may hold: docs/runner-protocol.md).
INLINE_POPULATION_BYTES = 256 * 1024
# The data cache's bound by default (ALLELE_DATA_CACHE_BYTES): files live runs hold may pass it.
DATA_CACHE_BYTES = 2 * 1024 * 1024 * 1024


def _count(fd: int, byte: bytes, size: int) -> int:
    """How many times ``byte`` occurs in the first ``size`` bytes of ``fd``, read a MiB at a time."""
    found = 0
    for at in range(0, size, MIB):
        found += os.pread(fd, min(MIB, size - at), at).count(byte)
    return found


class _Cancelled(Exception):
    """Cancelled before the child was started."""


class _CheckpointNotLoaded(Exception):
    """A resumed run's checkpoint could not be fetched."""


class _PopulationNotLoaded(Exception):
    """The continue's start population could not be fetched (the job checks what it is)."""


class _DataFilesNotLoaded(Exception):
    """A data file of the run could not be had (the message says which and why, in the run's words)."""


class _Run:
    def __init__(self, manager: RunManager, request: RunRequest, places: int) -> None:
        self.manager, self.request, self.places = manager, request, places
        population = request.initial_population
        self.limits = self._limits(len(population) * len(population[0]) if population else 0)
        self.reporter = manager.reporter_factory(request.report_url, request.report_token)
        self._cancel = threading.Event()  # set by a cancel, read from the supervisor thread
        self._disowned = False  # stopped because the Worker no longer had it live (a 409 to its progress)
        self.process: SandboxedProcess | None = None
        self.final_metrics: Metrics | None = None
        self.process_done = threading.Event()
        self._progress: Progress | None = None
        # Trail points of the generations since the last progress report (wire.TRAIL_POINTS_PER_REPORT)
        self._points: list[TrailPoint] = []
        self._points_lock = threading.Lock()  # the heartbeat thread and the supervisor's last report
        self._reported = False  # a progress report was sent (a run that ends before its first sends none)
        self._held: list[str] = []  # sha256 of the data files this run holds in the cache
        # A durable run: its two checkpoint slots, and the latest checkpoint waiting to be uploaded.
        # (the third: its drain byte, set to b"1" by drain())
        self.slots: tuple[Store, Store, Store] | None = (
            (Store(), Store(), Store()) if request.checkpoint is not None else None
        )
        self.draining = False  # drain(): checkpoint at the next generation boundary, then hand back
        self.handed_back = False
        self._drain_uploaded = False  # a checkpoint taken after the drain began is stored
        self._uploader: threading.Thread | None = None
        self._checkpoint: tuple[CheckpointMessage, dict[str, float]] | None = None
        self._checkpoint_ready = threading.Condition()
        self.thread = threading.Thread(target=self._supervise, name=f"run-{request.run_id}", daemon=True)

    def _limits(self, start_values: int) -> Limits:
        """The run's caps; ``start_values``: the numbers in its start population (0: none), which may
        hold more solutions than ``sol_per_pop`` says."""
        request = self.request
        size = start_values
        params = request.params
        genes = size_param(params, "num_genes")
        size = max(size, size_param(params, "sol_per_pop") * genes)
        # The outcome may also carry a Pareto front (at most the population again) and the saved
        # solutions of every generation (bounded at creation, docs/api.md#creation-parameters).
        snapshots = size_param(params, "num_generations") + 1
        reported = (
            2 * size
            + (snapshots * size if params.get("save_solutions") else 0)
            + (snapshots * genes if params.get("save_best_solutions") else 0)
        )
        return Limits.from_caps(
            time_seconds=request.time_seconds,
            memory_mb=request.memory_mb,
            population_size=reported,
            places=self.places,
            **self.manager.limit_overrides,
        )

    # -- supervisor thread

    def _start_population(self) -> Store | None:
        """The population at ``initial_population_url``, when the request has no inline one: fetched
        here, in the parent, with the run's token (the child never sees the token nor has a network),
        into a memfd, unread — the job parses and checks it under the run's caps.  At most the run's
        memory cap of JSON (it could not be parsed within it)."""
        request = self.request
        if request.initial_population is not None or request.initial_population_url is None:
            return None
        fetched = Store()
        try:
            size = self.reporter.fetch_population(request.initial_population_url, fetched.fd, request.memory_mb * MIB)
        except LookupError as exc:
            fetched.close()
            log.warning("run %s: start population not loaded: %s", request.run_id, exc)
            raise _PopulationNotLoaded from None
        if self._cancel.is_set() or self.reporter.stopped.is_set():
            fetched.close()
            raise _Cancelled
        # Its values for the caps, unparsed: a list of number lists has one comma fewer than numbers,
        # whatever else it holds (what is not one fails in the job).
        self.limits = self._limits(_count(fetched.fd, b",", size) + 1)
        return fetched

    def _data_files(self) -> list[DataMount]:
        """The run's data files, each from the cache or fetched into it now (with the run's token, in the
        parent: the child has no network), held until the run ends; bound at /data/<name> in its root."""
        request = self.request
        if not request.data_files:
            return []
        if not self.manager.isolation.minimal_root:
            raise _DataFilesNotLoaded("data files need the sandbox's minimal root, which this GA worker cannot make")
        cache = self.manager.data_cache
        mounts: list[DataMount] = []
        for ref in request.data_files:
            try:
                path = cache.acquire(request.data_scope, ref, self.reporter.fetch_file)
            except DataFileUnavailable as exc:
                if self._cancel.is_set():
                    raise _Cancelled from None
                log.warning("run %s: data file %s not loaded: %s", request.run_id, ref["sha256"], exc)
                problem = "did not match its sha256" if isinstance(exc, DataFileRefused) else "could not be loaded"
                raise _DataFilesNotLoaded(f"the data file {ref['name']} {problem}") from None
            self._held.append(ref["sha256"])
            mounts.append({"name": ref["name"], "path": path})
        return mounts

    def _release_data_files(self) -> None:
        for sha256 in self._held:
            self.manager.data_cache.release(self.request.data_scope, sha256)
        self._held.clear()

    def _resume_checkpoint(self) -> int | None:
        """A resumed run's checkpoint (``checkpoint_url``), streamed into the first slot unread; its
        length (None: no checkpoint to resume from)."""
        request = self.request
        if request.checkpoint_url is None or self.slots is None or request.checkpoint is None:
            return None
        try:
            size = self.reporter.fetch_checkpoint(
                request.checkpoint_url, self.slots[0].fd, 4 * request.checkpoint["max_bytes"]
            )
        except LookupError as exc:
            log.warning("run %s: checkpoint not loaded: %s", request.run_id, exc)
            raise _CheckpointNotLoaded from None
        if self._cancel.is_set():
            raise _Cancelled
        return size or None

    def _on_checkpoint(self, message: CheckpointMessage) -> None:
        """A checkpoint the job announced, with what its run had used by then (billed once: the
        Worker keeps it for the run's end should this worker be lost; docs/architecture.md)."""
        process = self.process
        usage: dict[str, float] = {}
        if process is not None:
            cpu = process.group.cpu_seconds() if process.group is not None else None
            usage = {
                "cpu_seconds": cpu or 0.0,
                "wall_ms": (time.monotonic() - process.started_at) * 1000,
                "peak_mb": process.peak_rss_mb,
            }
        with self._checkpoint_ready:
            self._checkpoint = (message, usage)
            self._checkpoint_ready.notify()

    def _upload_checkpoints(self) -> None:
        """Streams each checkpoint the job announces to the Worker, the latest first: one still
        uploading when a newer one comes is followed by the newer one (the Worker keeps the last)."""
        assert self.slots is not None
        while True:
            with self._checkpoint_ready:
                while self._checkpoint is None and not self.process_done.is_set():
                    self._checkpoint_ready.wait(0.5)
                pending, self._checkpoint = self._checkpoint, None
            if pending is None or self._cancel.is_set():
                return
            message, usage = pending
            slot = self.slots[message["slot"]]
            part = slot.part([0, message["bytes"]])
            if part is None:
                continue
            drained = self.draining
            status = self.reporter.upload_checkpoint(part, message["generation"], usage)
            if status is not None and 200 <= status < 300 and drained:
                self._drain_uploaded = True
            if status is None or not 200 <= status < 300:
                self._log_upload(f"checkpoint at generation {message['generation']}", status)

    def _supervise(self) -> None:
        host = self.manager.host
        uid = host.take_uid()
        workdir = tempfile.mkdtemp(prefix=f"run-{self.request.run_id}-", dir=self.manager.run_root)
        done: Completion | None = None
        store: Store | None = None
        population: Store | None = None
        try:
            # the heartbeat runs from the start, a long population fetch included
            threading.Thread(target=self._send_progress, args=(self.manager.progress_seconds,), daemon=True).start()
            population = self._start_population()
            data_files = self._data_files()
            resume_bytes = self._resume_checkpoint()
            if self.slots is not None:
                self._uploader = threading.Thread(target=self._upload_checkpoints, daemon=True)
                self._uploader.start()
            job = self.request.child_job(population.size() if population is not None else None, resume_bytes)
            self.process = SandboxedProcess(
                job=job,
                slots=self.slots,
                on_checkpoint=self._on_checkpoint,
                limits=self.limits,
                isolation=host.isolation,
                workdir=workdir,
                uid=uid,
                cgroups=host.cgroups,
                forks=host.forks_for(job),
                group_name=host.group_name(uid, self.request.run_id),
                on_progress=self._on_progress,
                data_files=data_files,
                places=self.places,
                start_population=population,
            )
            if self._cancel.is_set():
                raise _Cancelled
            self.process.start()
            if self._cancel.is_set():
                self.process.kill("cancel")
            report = self.process.wait()
            store = report.store
            self.final_metrics = completion.metrics(report)
            # Drained (stopped at a boundary after its checkpoint, or at the deadline): handed back. A run
            # that ended by itself meanwhile completes as usual.
            self.handed_back = (
                self.draining
                and not self._cancel.is_set()
                and report.outcome is None
                and (report.exit_code == SUSPENDED_EXIT or report.killed == "drain")
            )
            if self.handed_back:
                self._hand_back()
            if not self._cancel.is_set() and not self.handed_back:
                done = completion.fold(report, self.limits)
                body = done.body
                if body["status"] == "failed" and body.get("progress") is None and self._progress:
                    body["progress"] = self._progress.copy()  # killed: how far its last report got
                self.final_metrics = body["metrics"]
        except _Cancelled:
            pass
        except _PopulationNotLoaded:
            done = Completion(completion.failure("internal_error", POPULATION_NOT_LOADED))
            self.final_metrics = done.body["metrics"]
        except _DataFilesNotLoaded as exc:
            done = Completion(completion.failure("internal_error", str(exc)))
        except _CheckpointNotLoaded:
            done = Completion(completion.failure("internal_error", CHECKPOINT_NOT_LOADED))
            self.final_metrics = done.body["metrics"]
        except Exception as exc:
            log.exception("run %s: worker failure", self.request.run_id)
            done = Completion(
                completion.failure("internal_error", f"the worker could not run the job ({type(exc).__name__})")
            )
            self.final_metrics = done.body["metrics"]
        finally:
            self.process_done.set()
            if population is not None:
                population.close()  # copied into the child's spec when it started
            self._release_data_files()
            shutil.rmtree(workdir, ignore_errors=True)
            host.give_uid(uid)
            if store is None and self.process is not None and self.process.store is not None:
                store = self.process.store  # started, then failed before its report
        try:
            if done is not None and not self._cancel.is_set() and not self.handed_back:
                body = done.body
                log.info(
                    "run %s ended: %s%s",
                    self.request.run_id,
                    body["status"],
                    f" ({body['error']['code']})" if body["error"] else "",
                )
                if body["status"] == "succeeded":
                    self._report_progress(final=True)  # the trail's last generations (docs/runner-protocol.md)
                result = self._upload_files(done)
                self.reporter.complete(body, result)
        finally:
            if store is not None:
                store.close()
            with self._checkpoint_ready:
                self._checkpoint_ready.notify()
            for slot in self.slots or ():
                slot.close()
            self.reporter.close()
            self.manager.finish(self.request.run_id, remember=not self._disowned)

    def _upload_files(self, done: Completion) -> list[bytes | Part] | None:
        """``PUT`` the staged files and a final population too large to ride inline
        (``INLINE_POPULATION_BYTES``, or holding a null) first, straight from the run's store; return
        the result's JSON for the report, with the population spliced in when it rides inline.  The
        report goes whatever the uploads' fate (no population: the result cannot be continued; another
        file missing: the result lacks it)."""
        if done.result is None:
            return None
        result: list[bytes | Part] = [done.result]
        population = done.population
        if population is not None:
            end = done.result.length - 1
            if (
                population.length <= INLINE_POPULATION_BYTES
                and done.population_finite
                and done.result.slice(end, end + 1).read() == b"}"
            ):
                # {...} → {...,"population":[...]}: the Worker writes it as population.json
                result = [done.result.slice(0, end), b',"population":', population, b"}"]
            else:
                self._log_upload("final population", self.reporter.upload_population(population))
        for name, part in done.files.items():
            self._log_upload(name, self.reporter.upload_file(name, part))
        return result

    def _log_upload(self, what: str, status: int | None) -> None:
        if status is None or not 200 <= status < 300:
            log.warning(
                "run %s: %s not stored (%s)",
                self.request.run_id,
                what,
                "cancelled" if self.reporter.stopped.is_set() else status or "gave up",
            )

    def _on_progress(self, message: Progress) -> None:
        points = message.pop("points", None)
        self._progress = message
        if points:
            with self._points_lock:
                self._points.extend(points)
                if len(self._points) > TRAIL_POINTS_PER_REPORT:
                    self._points = downsample(self._points, TRAIL_POINTS_PER_REPORT)

    def _report_progress(self, *, final: bool = False) -> int | None:
        """One progress report: the latest progress with the trail points since the last report (kept
        for the next one when the report got no answer).  ``final``: only when points are left (the
        generations after the last heartbeat, sent just before the completion report of a run that sent
        progress before)."""
        with self._points_lock:
            points, self._points = self._points, []
            if final and not (points and self._reported):
                return None
            self._reported = True
            progress: Progress = dict(self._progress or {"generations_completed": 0, "best_solution_fitness": None})  # type: ignore[assignment]
            if points:
                progress["points"] = points
            status = self.reporter.progress(progress)
            if status is None and not final:
                self._points = downsample(points + self._points, TRAIL_POINTS_PER_REPORT)
            return status

    def _send_progress(self, interval: float) -> None:
        """Progress is also the run's heartbeat: sent every ``interval`` while the run lives (generation
        0 until the first one ends), so a slow first generation does not look like a lost worker. The
        first goes one interval after the start: the Worker's claim stamped the heartbeat as it started
        the run, and a run that ends sooner sends none (no request racing its start for the CPU)."""
        while not self.process_done.wait(interval) and not self._cancel.is_set():
            if self._report_progress() == 409:
                # The Worker ended the run (cancelled or deleted while its start was on the way, or its
                # cancel never reached this worker), or put it back in line (a start it saw fail): stopped
                # as by a cancel, its place freed, and not remembered, so a later start of it runs.
                log.warning("run %s is not live at the Worker any more: stopped", self.request.run_id)
                self._disowned = True
                self._stop()

    # -- drain

    def drain(self) -> None:
        """Checkpoint at the next generation boundary, then stop: the run is handed back to the Worker
        (``POST {report.url}/suspend``) to go on elsewhere from that checkpoint."""
        self.draining = True
        if self.slots is not None:
            os.pwrite(self.slots[2].fd, b"1", 0)
        else:  # not durable: nothing to checkpoint, hand it back as it is
            self.stop_for_drain()

    def stop_for_drain(self) -> None:
        """The drain's deadline passed (or the run has no checkpoints): stop the child now."""
        self.draining = True
        if self.process is not None:
            self.process.kill("drain")

    def _hand_back(self) -> None:
        """After a drain: the last checkpoint uploaded, the run given back with the usage so far
        (checkpointed: the whole segment is billed; else only up to its last periodic checkpoint)."""
        self.process_done.set()  # the child is gone: the uploader sends what is left, then ends
        with self._checkpoint_ready:
            self._checkpoint_ready.notify()
        if self._uploader is not None:
            self._uploader.join(60)
        metrics = self.final_metrics or completion.metrics(None)
        status = self.reporter.suspend(metrics, checkpointed=self._drain_uploaded)
        log.info(
            "run %s handed back (%s, checkpointed: %s)",
            self.request.run_id,
            status,
            self._drain_uploaded,
        )

    # -- cancel

    def _stop(self) -> None:
        self._cancel.set()
        self.reporter.stopped.set()
        if self.process is not None:
            self.process.kill("cancel")

    def cancel(self, timeout: float = 15.0) -> Metrics:
        self._stop()
        self.process_done.wait(timeout)
        return self.final_metrics or completion.metrics(None)


class RunManager:
    def __init__(
        self,
        *,
        host: Host,
        run_root: str | None = None,
        reporter_factory: Callable[[str, str], Reporter] = Reporter,
        remember_finished: int = 10000,
        remember_seconds: float = 24 * 3600,
        limit_overrides: Mapping[str, int] | None = None,
        concurrency: int | None = None,
        progress_seconds: float = 1.5,
        data_cache: DataCache | None = None,
    ) -> None:
        self.host = host
        # Runs whose child may exist at once (WORKER_CONCURRENCY; default: one per CPU). A start past it
        # is refused (503 at_capacity), so a run never waits for a CPU with its wall-time cap running.
        self.concurrency = concurrency or os.cpu_count() or 1
        self.isolation = host.isolation
        self.run_root = run_root or tempfile.mkdtemp(prefix="allele-runs-")
        os.chmod(self.run_root, 0o711)
        # Runs' data files by account and sha256 (docs/runner-protocol.md#data-files); the worker's own (0700).
        self.data_cache = data_cache or DataCache(os.path.join(self.run_root, "data-cache"), DATA_CACHE_BYTES)
        self.reporter_factory = reporter_factory
        self.progress_seconds = progress_seconds  # between a run's progress reports (its heartbeat)
        tls_context()  # the reports' TLS context, built once now rather than by the first run
        self.limit_overrides = limit_overrides or {}
        self._live: dict[str, _Run] = {}
        self.draining = False  # SIGTERM: no new runs (drain())
        self._finished: OrderedDict[str, float] = OrderedDict()
        self._remember = (remember_finished, remember_seconds)
        self._lock = threading.Lock()

    # -- runs

    def start(self, request: RunRequest) -> tuple[bool, RunState]:
        """(started, state): started is False when the run id was already known."""
        with self._lock:
            self._forget_old()
            if request.run_id in self._live:
                return False, "running"
            if request.run_id in self._finished:
                return False, "finished"
            if self.draining:
                raise AtCapacity("this worker is draining (shutting down): the run goes to another")
            places = min(request.workers, self.concurrency)  # a wider run takes every place
            if self._in_use() + places > self.concurrency:
                raise AtCapacity(
                    f"{self._in_use()} of the {self.concurrency} places of this worker are in "
                    f"use; the run needs {places}"
                )
            run = _Run(self, request, places)
            self._live[request.run_id] = run
        run.thread.start()
        return True, "running"

    def drain(self, seconds: float) -> None:
        """SIGTERM: take no more runs; ask every run to checkpoint at its next generation boundary and
        hand itself back; after ``seconds`` stop what is left (handed back from its last checkpoint);
        return when every run is gone (docs/architecture.md, "Durable runs")."""
        with self._lock:
            self.draining = True
            runs = list(self._live.values())
        if runs:
            log.info("draining %d run(s)", len(runs))
        for run in runs:
            run.drain()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.active_runs:
            time.sleep(0.05)
        with self._lock:
            left = list(self._live.values())
        for run in left:
            run.stop_for_drain()
        self.wait_idle(30.0)

    def state(self, run_id: str) -> RunState | None:
        """ "running", "finished" (recently), or None for an unknown run id."""
        with self._lock:
            if run_id in self._live:
                return "running"
            return "finished" if run_id in self._finished else None

    def cancel(self, run_id: str) -> Metrics:
        with self._lock:
            run = self._live.get(run_id)
        if run is None:
            raise UnknownRun(run_id)
        return run.cancel()

    def finish(self, run_id: str, remember: bool = True) -> None:
        with self._lock:
            self._live.pop(run_id, None)
            if remember:
                self._finished[run_id] = time.monotonic()
            self._forget_old()

    def _forget_old(self) -> None:
        count, seconds = self._remember
        now = time.monotonic()
        while self._finished and (len(self._finished) > count or now - next(iter(self._finished.values())) > seconds):
            self._finished.popitem(last=False)

    def _in_use(self) -> int:
        """Places taken by runs whose child may still exist (they free when the child is gone)."""
        return sum(run.places for run in self._live.values() if not run.process_done.is_set())

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._in_use()

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
