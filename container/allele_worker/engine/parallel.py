"""Parallel fitness evaluation (PyGAD's ``utils/parallel.py`` seam): ``parallel_processing`` as
``N``, ``["thread", N]`` or ``["process", N]``, with workers kept for the whole run.

Stock PyGAD opens an executor for the run and, every generation, sends the whole GA (cloudpickled,
with the fitness function) along with each of ``4 × N`` chunks of solutions.  Here:

- ``N`` is the number of evaluations running at once, the run's own process included: ``N - 1``
  workers are started when the run's first evaluation needs them and stay until the run ends, and
  the run's process evaluates the first share itself while they evaluate theirs.
- The solutions still to evaluate (after stock's cache rule) are split into ``N`` contiguous shares in
  population order, one message per worker per generation.
- Process workers are forked from the run's process, so they start with the fitness function and the
  GA as they are (no pickling of code, and code defined by the job needs no importable module).  Each
  generation they receive the GA's data attributes as one pickle, written once and read by every
  worker — functions, callbacks and the logger are sent as references to the worker's own copies —
  so the fitness function sees the same ``ga`` a serial run would show it (stock's process mode
  sends a snapshot too).  Thread workers share the live GA, as stock's thread mode does.

The values come back in population order and go through the same validation as a serial run's, so a
run's results do not depend on ``N``.  An exception of the fitness function is raised for the first
failing solution in population order, as in a serial run (its user frames travel with it from a
process worker: ``remote_frames``).  Worker processes are children of the run's process: inside the
sandbox they share its control group, PID namespace, user and limits, are billed with it and end
with it (death signal, end of the run's namespace).
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import queue
import signal
import struct
import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .base import EngineBase, FitnessValue

if TYPE_CHECKING:
    from pygad import GA  # untyped: what a fitness function may read of it is PyGAD's

__all__ = ["FitnessError", "FitnessPool", "ParallelFitness", "WorkerLost", "pool_shape"]

_HEADER = struct.Struct("<Q")
# Attributes never sent to process workers: live pool resources (ours and stock's, as stock's
# __getstate__ leaves them out) and the engine's own generator, which only the run's process uses.
_LOCAL = frozenset(
    (
        "_warm_pool",
        "_fitness_executor",
        "_fitness_executor_config",
        "_fitness_run_active",
        "_saved_fitness_indexes",
        "_rng",
        "_nsga_cache",  # the engine's sort of the last fitness (engine.nsga): a worker keeps its own
    )
)
_DATA = (type(None), bool, int, float, complex, str, bytes, np.ndarray, np.generic, list, tuple, dict, set, frozenset)
# One evaluation: a solution's index (``batched`` False) or a batch's indices (True), as stock calls
# the fitness function with them.
Task: TypeAlias = tuple[int | list[int], bool]
References: TypeAlias = dict[int, object]  # the GA's objects that are not data, by id


class WorkerLost(RuntimeError):
    """A worker process ended while the run needed it (killed, or ``os._exit`` in user code)."""


class FitnessError(Exception):
    """An exception of the fitness function in a worker process that could not travel as itself
    (its class is not picklable, e.g. defined by the job's code): its type name and message.  The
    run's process raises it as a subclass of this one named like the original."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(kind, message)
        self.kind, self.message = kind, message

    def named(self) -> FitnessError:
        named: FitnessError = type(self.kind, (FitnessError,), {"__str__": lambda error: error.message})(
            self.kind, self.message
        )
        return named


def pool_shape(parallel_processing: Any) -> tuple[str, int] | None:  # PyGAD's attribute, untyped
    """``(mode, workers)`` for PyGAD's normalised ``parallel_processing`` (``None`` or
    ``[mode, count]``), or None when it means one evaluation at a time."""
    if parallel_processing is None:
        return None
    mode, workers = parallel_processing
    if workers is None:
        workers = os.cpu_count() or 1
    return (mode, int(workers)) if int(workers) > 1 else None


def _evaluate(ga: GA, tasks: list[Task]) -> tuple[list[FitnessValue], BaseException | None]:
    """Call the fitness function for ``tasks`` — ``(index or group, batched)`` — in order; stop at the
    first exception (as a serial run does) and return it with the values before it."""
    fitness_func = ga.fitness_func
    population = ga.population
    values: list[FitnessValue] = []
    for key, batched in tasks:
        try:
            rows = population[key, :] if batched else population[key]
            values.append(fitness_func(ga, rows, key))
        except BaseException as exc:  # noqa: BLE001 - user code may raise anything
            return values, exc
    return values, None


class _Share:
    """One worker's part of a generation: its tasks, then its values and exception."""

    __slots__ = ("error", "tasks", "values")

    def __init__(self, tasks: list[Task]) -> None:
        self.tasks = tasks
        self.values: list[FitnessValue] = []
        self.error: BaseException | None = None


class FitnessPool:
    """``workers`` evaluators besides the calling process, threads or forked processes."""

    def __init__(self, ga: GA, mode: str, workers: int) -> None:
        self.mode = mode
        self.size = workers
        self._threads: list[tuple[threading.Thread, queue.SimpleQueue[_Share | None]]] = []
        self._done: queue.SimpleQueue[_Share] = queue.SimpleQueue()
        self._processes: list[tuple[int, int, int]] = []  # (pid, task fd, result fd)
        self._references: References = {}
        if mode == "thread":
            for number in range(workers):
                inbox: queue.SimpleQueue[_Share | None] = queue.SimpleQueue()
                thread = threading.Thread(
                    target=self._thread_main, args=(ga, inbox), daemon=True, name=f"fitness-{number + 1}"
                )
                thread.start()
                self._threads.append((thread, inbox))
        else:
            self._references = _references(ga)
            sys.stdout.flush()
            sys.stderr.flush()
            for _ in range(workers):
                self._processes.append(self._fork(ga))

    # -- one generation

    def evaluate(self, ga: GA, tasks: list[Task]) -> tuple[list[FitnessValue], BaseException | None]:
        """Values of ``tasks`` in order, up to the first exception (returned, not raised)."""
        shares = _split(tasks, self.size + 1)
        if self.mode == "thread":
            for (_, inbox), share in zip(self._threads, shares[1:]):
                inbox.put(share)
        else:
            self._send(ga, shares[1:])
        own = shares[0]
        own.values, own.error = _evaluate(ga, own.tasks)
        if self.mode == "thread":
            for _ in shares[1:]:
                self._done.get()
        else:
            self._receive(shares[1:])
        values: list[FitnessValue] = []
        for share in (own, *shares[1:]):
            values.extend(share.values)
            if share.error is not None:
                return values, share.error
        return values, None

    # -- threads

    def _thread_main(self, ga: GA, inbox: queue.SimpleQueue[_Share | None]) -> None:
        while (share := inbox.get()) is not None:
            share.values, share.error = _evaluate(ga, share.tasks)
            self._done.put(share)

    # -- processes

    def _fork(self, ga: GA) -> tuple[int, int, int]:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            code = 0
            try:
                os.close(task_w)
                os.close(result_r)
                for _, other_task_w, other_result_r in self._processes:
                    os.close(other_task_w)
                    os.close(other_result_r)
                _die_with_parent()
                self._process_main(ga, task_r, result_w)
            except BaseException:  # noqa: BLE001 - a worker never unwinds into the run's code
                code = 70
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        return pid, task_w, result_r

    def _process_main(self, ga: GA, task_r: int, result_w: int) -> None:
        references = self._references
        with os.fdopen(task_r, "rb") as tasks, os.fdopen(result_w, "wb") as results:
            while (state := _read(tasks)) is not None and (message := _read(tasks)) is not None:
                ga.__dict__.update(_Unpickler(io.BytesIO(state), references).load())
                values, error = _evaluate(ga, pickle.loads(message))
                _write(results, _reply(values, error))

    def _send(self, ga: GA, shares: list[_Share]) -> None:
        state = _state_pickle(ga, self._references)
        for (_, task_w, _), share in zip(self._processes, shares):
            body = pickle.dumps(share.tasks, protocol=5)
            _write_all(task_w, _HEADER.pack(len(state)) + state)
            _write_all(task_w, _HEADER.pack(len(body)) + body)

    def _receive(self, shares: list[_Share]) -> None:
        for (pid, _, result_r), share in zip(self._processes, shares):
            message = _read_fd(result_r)
            if message is None:
                raise WorkerLost(f"a fitness worker process ended during the run ({_how_ended(pid)})")
            values, error, frames = pickle.loads(message)
            share.values = values
            if error is not None:
                if isinstance(error, FitnessError):
                    error = error.named()
                error.remote_frames = frames
                share.error = error

    # -- the end of the run

    def close(self) -> None:
        for _, inbox in self._threads:
            inbox.put(None)
        for thread, _ in self._threads:
            thread.join(timeout=5)
        self._threads = []
        for pid, task_w, result_r in self._processes:
            for fd in (task_w, result_r):
                os.close(fd)
            try:  # idle, or still busy with a share nobody will read (a run ending in an error)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self._processes = []


class ParallelFitness(EngineBase):
    """Mixin: the run's pool, opened by the first parallel evaluation and closed with the run
    (stock's ``_shutdown_fitness_executor``, which stock's ``run()`` and ours call at the end).

    Stock's evaluation may still run in the same GA (a multi-objective run after its first
    evaluation, a population holding NaN or inf): it uses its own executor through its
    ``_fitness_pool()`` method, which this pool's name must not shadow.  The two are never open at
    once: opening stock's executor calls ``_shutdown_fitness_executor`` first, which ends this pool,
    and this pool ends stock's executor before it starts (so stock never pickles the GA with it)."""

    _warm_pool: FitnessPool | None = None

    def _pool(self) -> FitnessPool | None:
        """The run's pool, or None for one evaluation at a time (no ``parallel_processing``, one
        worker, or outside ``run()``)."""
        shape = pool_shape(getattr(self, "parallel_processing", None))
        pool = self._warm_pool
        if pool is not None and (shape is None or (pool.mode, pool.size + 1) != shape):
            self._close_pool()
            pool = None
        if pool is None and shape is not None and getattr(self, "_fitness_run_active", False):
            super()._shutdown_fitness_executor()  # stock's, if one of its evaluations opened it
            pool = self._warm_pool = FitnessPool(self, shape[0], shape[1] - 1)
        return pool

    def _close_pool(self) -> None:
        pool, self._warm_pool = self._warm_pool, None
        if pool is not None:
            pool.close()

    def _shutdown_fitness_executor(self) -> None:
        self._close_pool()
        super()._shutdown_fitness_executor()


# --------------------------------------------------------------------------- helpers


def _split(tasks: list[Task], parts: int) -> list[_Share]:
    """``parts`` contiguous shares of ``tasks`` in order, sizes differing by one at most."""
    size, extra = divmod(len(tasks), parts)
    shares, start = [], 0
    for part in range(parts):
        end = start + size + (1 if part < extra else 0)
        shares.append(_Share(tasks[start:end]))
        start = end
    return shares


def _references(ga: GA) -> References:
    """The GA's objects that are not data (functions, callbacks, the logger, …) by ``id``: sent to a
    forked worker as references to its own copies, which it has since the fork."""
    found: References = {}
    for value in ga.__dict__.values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if not isinstance(item, _DATA):
                found[id(item)] = item
    return found


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, references: References) -> None:
        super().__init__(file, protocol=5)
        self.references = references

    def persistent_id(self, obj: object) -> int | None:
        return id(obj) if id(obj) in self.references else None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, references: References) -> None:
        super().__init__(file)
        self.references = references

    def persistent_load(self, pid: int) -> object:
        return self.references[pid]


def _state_pickle(ga: GA, references: References) -> bytes:
    """The GA's data attributes as one pickle (what a fitness function may read of ``ga``); an
    attribute that cannot be pickled (e.g. a generator a callback stored) stays as the worker has
    it."""
    state = {name: value for name, value in ga.__dict__.items() if name not in _LOCAL}
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, references).dump(state)
    except Exception:  # noqa: BLE001 - user-set attributes may be anything
        kept = {}
        for name, value in state.items():
            try:
                _Pickler(io.BytesIO(), references).dump(value)
            except Exception:  # noqa: BLE001
                continue
            kept[name] = value
        buffer = io.BytesIO()
        _Pickler(buffer, references).dump(kept)
    return buffer.getvalue()


def _reply(values: list[FitnessValue], error: BaseException | None) -> bytes:
    frames = traceback.extract_tb(error.__traceback__) if error is not None else None
    if error is not None:
        error.__traceback__ = None
    try:
        return pickle.dumps((values, error, frames), protocol=5)
    except Exception:  # noqa: BLE001 - an unpicklable value or exception class
        pass
    if error is not None:
        try:
            pickle.dumps(error)
        except Exception:  # noqa: BLE001
            error = FitnessError(type(error).__name__, str(error))
    try:
        pickle.dumps(values, protocol=5)
    except Exception:  # noqa: BLE001 - a value serial evaluation would refuse anyway
        values = [object.__repr__(value) for value in values]
    return pickle.dumps((values, error, frames), protocol=5)


def _write(stream: io.BufferedWriter, body: bytes) -> None:
    stream.write(_HEADER.pack(len(body)))
    stream.write(body)
    stream.flush()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read(stream: io.BufferedReader) -> bytes | None:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (length,) = _HEADER.unpack(header)
    body = stream.read(length)
    return body if len(body) == length else None


def _read_fd(fd: int) -> bytes | None:
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    return _read_exactly(fd, _HEADER.unpack(header)[0])


def _read_exactly(fd: int, length: int) -> bytes | None:
    chunks, left = [], length
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _how_ended(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "already reaped"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _die_with_parent() -> None:
    """SIGKILL this worker when the run's process dies (Linux; elsewhere the closed pipe ends it)."""
    parent = os.getppid()
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)
