"""One job: its spec (``JobSpec``) → one ``pygad.GA`` run → the outcome message (``wire.OutcomeMessage``).
Runs inside the sandboxed child; no process code here.

Everything the user sent reaches ``pygad.GA`` unchanged except:

- ``gene_type`` names (``"int"``, ``"float"``, numpy's ``"float32"``…, in ``[name, precision]`` pairs
  or per-gene lists) become the types;
- code fields (``fitness_func``, ``gene_constraint``, the callbacks, and the operators
  ``parent_selection_type``/``crossover_type``/``mutation_type`` when they carry an ``_entry``: custom
  operators) arrive as source plus ``<field>_entry`` and are compiled here, each under the file name
  ``<field>`` so a traceback names it;
- ``on_generation`` is wrapped: the wrapper calls the user's callback (if any), then sends progress and
  applies the soft caps (wall time, memory) at the generation boundary;
- each ``gene_constraint`` function is wrapped to remember its last answer (``ConstraintTrace``), so an
  answer PyGAD refuses is reported naming the gene and the user's line;
- Python warnings are counted and deduplicated (``WarningTally``) and reported with the outcome; the
  result is collected by ``ga_result.collect`` (multi-objective results, saved solutions,
  constraint violations of the best solution);
- the GA is built by ``engine.build_ga``: the accelerated ``pygad.GA`` subclass when the configuration
  is covered, stock ``pygad.GA`` otherwise (docs/engine.md); the outcome names the path that ran.
"""

from __future__ import annotations

import builtins
import errno
import functools
import logging
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import (
    InternalError,
    MemoryLimitExceeded,
    ResourceLimitExceeded,
    RunFailure,
    UserCodeError,
)
from ..wire import (
    CALLBACK_FIELDS,
    CODE_FIELDS,
    JSON,
    MAX_OBJECTIVES,
    OPERATOR_FIELDS,
    PLAIN_PARAMS,
    CheckpointMessage,
    ChildMessage,
    ChildSpec,
    FailedOutcome,
    GaParams,
    OutcomeMessage,
    ParetoSnapshot,
    Population,
    Progress,
    ProgressMessage,
    StoppedReason,
    SucceededOutcome,
    TrailPoint,
    size_param,
    to_json,
)
from ..wire import (
    ParetoHistory as ParetoHistoryFile,
)
from .ga_result import jsonable
from .warning_tally import WarningTally

if TYPE_CHECKING:
    from pygad import GA  # untyped: the GA's attributes are PyGAD's, and Any to the type checker

    from ..engine.resumable import LoopState

__all__ = [
    "CALLBACK_FIELDS",
    "CODE_FIELDS",
    "MAX_OBJECTIVES",
    "PLAIN_PARAMS",
    "JobSpec",
    "build_ga_kwargs",
    "compile_user_code",
    "describe_user_exception",
    "execute",
    "jsonable",
]

# The parameter names (CODE_FIELDS, PLAIN_PARAMS) are the wire's: wire.py.
# Allele's own defaults where they are not PyGAD's (PyGAD 3.9 has the same ones today; kept explicit).
DEFAULTS: dict[str, object] = {"init_range_low": -4, "init_range_high": 4}
GENE_TYPES = {"int": int, "float": float}
# numpy's fixed-size types by name (PyGAD's supported_int_float_types)
NUMPY_GENE_TYPES = (
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
)
MESSAGE_LIMIT = 2000

# What the job's code fields compile to: a function, or for gene_constraint a list of them (None: no
# constraint for that gene).  User code: anything may come back from a call.
UserFunction: TypeAlias = Callable[..., object]
Constraints: TypeAlias = list[UserFunction | None]
UserCode: TypeAlias = dict[str, UserFunction | Constraints]  # field name → compiled entry
Emit: TypeAlias = Callable[[ChildMessage], None]


CheckpointSink: TypeAlias = Callable[[bytes], object]


class Suspended(Exception):
    """The run stopped at a generation boundary after its checkpoint was written (a drain)."""

    def __init__(self, generation: int) -> None:
        super().__init__(f"suspended after generation {generation}")
        self.generation = generation


@dataclass
class CheckpointPlan:
    """When and where the job writes its checkpoints (docs/architecture.md, "Durable runs").

    ``sink`` takes each checkpoint file's bytes; one is taken at the first generation boundary
    ``interval`` seconds of run time after the last one (or the start), at each generation of
    ``at_generations`` (tests), and at once when ``drain`` is set, after which the run stops
    (``Suspended``).  A checkpoint past ``max_bytes`` is not written (the run goes on)."""

    sink: CheckpointSink
    interval: float = 30.0
    control_fd: int | None = None  # a byte the worker sets to b"1" to drain the run (read every CONTROL_EVERY s)
    max_bytes: int = 64 << 20
    at_generations: frozenset[int] = frozenset()
    drain: bool = False
    taken: int = 0
    last_bytes: int = 0
    refused: str | None = None


@dataclass(frozen=True)
class JobSpec:
    """What the child needs to run one GA: the parameters, an optional start population, the caps,
    and for a durable run its checkpoint plan and the checkpoint to resume from (the file's bytes)."""

    params: GaParams
    initial_population: Population | None = None
    time_seconds: float = 3600.0
    memory_mb: int = 2048
    # CLOCK_MONOTONIC value (system-wide) at which the parent started the run.
    started_at: float = field(default_factory=time.monotonic)
    checkpoints: CheckpointPlan | None = None
    resume_from: bytes | None = None

    @classmethod
    def from_dict(cls, data: ChildSpec, emit: Emit | None = None, slot_fds: tuple[int, ...] = ()) -> JobSpec:
        """The job of the child's spec; a durable run's checkpoints go into the first two of
        ``slot_fds`` in turn, each announced through ``emit``, its resume checkpoint is read from the
        first, and the third is its drain byte (set by the worker on SIGTERM)."""
        caps = data["caps"]
        plan: CheckpointPlan | None = None
        resume: bytes | None = None
        checkpoint = data.get("checkpoint")
        if checkpoint is not None and emit is not None and len(slot_fds) == 3:
            slots = SlotSink(slot_fds[:2], emit)
            plan = CheckpointPlan(
                sink=slots,
                interval=float(checkpoint["interval_seconds"]),
                max_bytes=int(checkpoint["max_bytes"]),
                control_fd=slot_fds[2],
            )
            slots.plan = plan
            size = checkpoint.get("resume_bytes")
            if isinstance(size, int) and 0 < size <= 4 * plan.max_bytes:
                resume = slots.read(0, size)
                slots.next = 1
        return cls(
            params=dict(data["params"]),
            initial_population=data["initial_population"],
            time_seconds=float(caps["time_seconds"]),
            memory_mb=int(caps["memory_mb"]),
            started_at=float(data["started_at"]),
            checkpoints=plan,
            resume_from=resume,
        )


class SlotSink:
    """A checkpoint's bytes into the next of the run's two slots (memfds the worker reads), then a
    ``checkpoint`` message saying which slot and how long: the worker streams the slot while the
    next checkpoint goes into the other one."""

    def __init__(self, fds: tuple[int, ...], emit: Emit) -> None:
        self.fds, self.emit = fds, emit
        self.next = 0
        self.plan: CheckpointPlan | None = None
        self.generation = 0

    def read(self, slot: int, size: int) -> bytes:
        chunks, offset = [], 0
        while offset < size:
            piece = os.pread(self.fds[slot], min(1 << 20, size - offset), offset)
            if not piece:
                break
            chunks.append(piece)
            offset += len(piece)
        return b"".join(chunks)

    def __call__(self, data: bytes) -> None:
        slot = self.next
        fd = self.fds[slot]
        os.ftruncate(fd, 0)
        view, offset = memoryview(data), 0
        while offset < len(data):
            offset += os.pwrite(fd, view[offset:], offset)
        self.next = 1 - slot
        message: CheckpointMessage = {
            "type": "checkpoint",
            "generation": self.generation,
            "slot": slot,
            "bytes": len(data),
        }
        self.emit(message)


# --------------------------------------------------------------------------- user code


def _filename(field_name: str) -> str:
    return f"<{field_name}>"


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def describe_user_exception(exc: BaseException) -> str:
    """``"<field> line N: Type: message"`` for the deepest frame in user code, without worker frames."""
    label = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, SyntaxError) and exc.filename and exc.filename.startswith("<"):
        name = exc.filename.strip("<>")
        return _clip(f"{name} line {exc.lineno}: SyntaxError: {exc.msg}")
    # An exception from a parallel fitness worker process carries its frames (engine/parallel.py).
    frames: list[traceback.FrameSummary] = getattr(exc, "remote_frames", None) or traceback.extract_tb(
        exc.__traceback__
    )
    user_frames = [f for f in frames if f.filename.startswith("<") and f.filename.strip("<>") in CODE_FIELDS]
    if user_frames:
        frame = user_frames[-1]
        return _clip(f"{frame.filename.strip('<>')} line {frame.lineno}: {label}")
    return _clip(label)


def compile_user_code(field_name: str, source: str, entry: str) -> UserFunction | Constraints:
    """Compile ``source`` as ``<field>``, run it in a fresh namespace, return the object named ``entry``."""
    try:
        code = compile(source, _filename(field_name), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: e.g. null bytes in the source
        said = describe_user_exception(exc) if isinstance(exc, SyntaxError) else f"{field_name}: {exc}"
        failure = UserCodeError(said)
        failure.compile_stage = True  # none of the user's code ran: the run is charged 0
        raise failure from None
    namespace: dict[str, object] = {"__name__": f"allele_{field_name}", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except MemoryError:
        raise
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        raise _user_failure(exc) from None
    if entry not in namespace:
        raise UserCodeError(f"{field_name}: entry '{entry}' is not defined by the code")
    obj = namespace[entry]
    if field_name == "gene_constraint":
        if not isinstance(obj, (list, tuple)):
            raise UserCodeError(
                f"gene_constraint: entry '{entry}' must be a list with one item per "
                f"gene (None or a function), not {type(obj).__name__}"
            )
        constraints: Constraints = []
        for index, item in enumerate(obj):
            if item is not None and not callable(item):
                raise UserCodeError(
                    f"gene_constraint: item {index} of '{entry}' must be None or a function, not {type(item).__name__}"
                )
            constraints.append(item)
        return constraints
    if not callable(obj):
        raise UserCodeError(f"{field_name}: entry '{entry}' is not callable (it is {type(obj).__name__})")
    return obj


def _user_failure(exc: BaseException) -> RunFailure:
    """Translate an exception that escaped user code or PyGAD into the run's failure."""
    if isinstance(exc, RunFailure):
        return exc
    message = describe_user_exception(exc)
    if isinstance(exc, MemoryError):
        return MemoryLimitExceeded(f"memory limit reached ({message})")
    if isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN:
        return ResourceLimitExceeded(f"process limit reached ({message})")
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return ResourceLimitExceeded(f"file size limit reached ({message})")
    if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
        return ResourceLimitExceeded(f"open file limit reached ({message})")
    return UserCodeError(message)


# --------------------------------------------------------------------------- GA construction


def scalar_fitness(value: Any) -> float | None:  # what the fitness function returned: anything
    """A fitness as progress shows it: one finite number (a one-value vector unwrapped), else None."""
    if getattr(value, "ndim", 0) > 0 or isinstance(value, (list, tuple)):
        values = list(value.tolist() if hasattr(value, "tolist") else value)
        if len(values) != 1:
            return None
        value = values[0]
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


class GenerationGuard:
    """The ``on_generation`` PyGAD sees: user callback, then progress, then the soft caps.

    It also keeps, for a multi-objective run, each objective's maximum over the population per
    generation (``objective_history``, the result's ``objective_maxima``: generation 0 from
    ``previous_generation_fitness`` at the first call).
    The run's memory is read at most every ``MEMORY_EVERY`` seconds (the parent's watchdog polls as
    often), so a fast generation does not pay a read of /proc for each of thousands of generations."""

    MEMORY_EVERY = 0.05
    PROGRESS_EVERY = 0.25  # between progress messages (the worker reports every 1.5 s)

    def __init__(
        self,
        *,
        user_callback: UserFunction | None,
        spec: JobSpec,
        emit: Emit,
        rss_mb: Callable[[], float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.user_callback = user_callback
        self.spec = spec
        self.emit = emit
        self.rss_mb = rss_mb
        self.clock = clock
        self.stop_reason: StoppedReason | None = None
        self.pid = os.getpid()
        self._last_emit = -math.inf
        self._last_memory = -math.inf
        self.objective_history: list[list[float]] | None = None
        self.population = PopulationHistory()
        self.population_history = self.population.rows
        self.fronts = ParetoHistory()
        self.time_before = 0.0  # a resumed run: its run time up to the checkpoint (the time cap counts it)
        self.sent_generation = -1  # the last generation a progress message's points carried

    def _record_objectives(self, ga: GA) -> None:
        fitness = ga.last_generation_fitness
        if getattr(fitness, "ndim", 0) != 2 or fitness.shape[1] < 2:
            return
        if self.objective_history is None:
            first = ga.previous_generation_fitness
            self.objective_history = (
                [first.max(axis=0).tolist()] if getattr(first, "shape", None) == fitness.shape else []
            )
        self.objective_history.append(fitness.max(axis=0).tolist())

    def __call__(self, ga: GA) -> str | None:
        if os.getpid() != self.pid:  # a process forked by user code must not carry on as the run
            os._exit(0)
        self._record_objectives(ga)
        self.population.record(ga)
        if self.objective_history is not None:
            self.fronts.record(ga)
        if self.user_callback is not None:
            answer = self.user_callback(ga)
            if isinstance(answer, str) and answer.lower() == "stop":
                self.stop_reason = "callback_stop"
        now = self.clock()
        if now - self._last_emit >= self.PROGRESS_EVERY:
            self._last_emit = now
            self.send_progress(ga)
        if self.stop_reason is None:
            if now - self.spec.started_at + self.time_before >= self.spec.time_seconds:
                self.stop_reason = "time_cap"
            elif now - self._last_memory >= self.MEMORY_EVERY:
                self._last_memory = now
                if self.rss_mb() >= self.spec.memory_mb:
                    self.stop_reason = "memory_cap"
        return "stop" if self.stop_reason is not None else None

    def send_progress(self, ga: GA) -> None:
        """A progress message: the latest generation, and the trail points of every generation since the
        previous message (``points``; downsampled past wire.TRAIL_POINTS_PER_MESSAGE and the message's
        bound, wire.MESSAGE_BYTES).  Also called once when the run ends, for the generations after the
        last message (nothing is sent when there are none)."""
        generation = int(ga.generations_completed)
        if generation <= self.sent_generation:
            return
        _, fitness, _ = ga.best_solution(pop_fitness=ga.last_generation_fitness)
        message: ProgressMessage = {
            "type": "progress",
            "generations_completed": generation,
            "best_solution_fitness": scalar_fitness(fitness),
        }
        objectives: list[float] | None = None
        if self.objective_history:  # several objectives: the two series' points (the live chart)
            values = fitness.tolist() if hasattr(fitness, "tolist") else list(fitness)
            objectives = [float(v) for v in values]
            message["best_solution_objectives"] = objectives
            message["best_objectives"] = self.objective_history[-1]
        elif self.population.rows and self.population.rows[-1].ndim == 1:
            message["population"] = [_finite_or_none(v) for v in self.population.rows[-1].tolist()]
        points = self.trail_points(generation, objectives)
        self.sent_generation = generation
        if points:
            message["points"] = fit_points(points, len(to_json(message)))
        self.emit(message)

    def trail_points(self, generation: int, objectives: list[float] | None) -> list[TrailPoint]:
        """The trail points of the generations after ``sent_generation`` up to ``generation`` (the
        histories' last row is ``generation``; the current one also with the best solution's objectives)."""
        from ..wire import TRAIL_OBJECTIVES

        points: list[TrailPoint] = []
        maxima = self.objective_history
        rows = self.population.rows
        for at in range(max(self.sent_generation + 1, 0), generation + 1):
            back = generation - at
            if maxima:
                if back >= len(maxima):
                    continue
                point: TrailPoint = [at, None, [_finite_or_none(v) for v in maxima[-1 - back][:TRAIL_OBJECTIVES]]]
                if back == 0 and objectives is not None:
                    point.append([_finite_or_none(v) for v in objectives[:TRAIL_OBJECTIVES]])
                points.append(point)
            elif back < len(rows) and rows[-1 - back].ndim == 1:
                stats = [_finite_or_none(v) for v in rows[-1 - back].tolist()]
                points.append([at, stats[0], None, None, stats])
        return points


def fit_points(points: list[TrailPoint], other_bytes: int) -> list[TrailPoint]:
    """``points`` downsampled to at most wire.TRAIL_POINTS_PER_MESSAGE and to what fits beside
    ``other_bytes`` of the message within wire.MESSAGE_BYTES (with room to spare)."""
    from ..wire import MESSAGE_BYTES, TRAIL_POINTS_PER_MESSAGE, downsample

    kept = downsample(points, TRAIL_POINTS_PER_MESSAGE)
    budget = MESSAGE_BYTES - 1024 - other_bytes
    size = len(to_json(kept))
    while size > budget and len(kept) > 4:
        kept = downsample(kept, max(4, int(len(kept) * budget / size) - 1))
        size = len(to_json(kept))
    return kept if size <= budget else kept[-1:]


class PopulationHistory:
    """Per generation (generation 0 first), the population's [best, mean, median, worst] fitness: an
    array of 4 values, or of 4 rows of one value per objective (``population_stats``).  ``record`` is
    called at each generation's end (the service's ``on_generation``; bench/engine.py measures it)."""

    def __init__(self) -> None:
        self.rows: list[Any] = []

    def record(self, ga: GA) -> None:
        fitness = ga.last_generation_fitness
        if fitness is None:
            return
        if not self.rows:  # generation 0: the population the first generation started from
            first = ga.previous_generation_fitness
            if first is not None and getattr(first, "shape", None) == getattr(fitness, "shape", ()):
                self.rows.append(population_stats(first))
        self.rows.append(population_stats(fitness))


class ParetoHistory:
    """A multi-objective run's bounded history of fronts (``pareto_history.json``, wire.PARETO_HISTORY_*):
    at generation 0 and every ``stride``-th generation after it, the population's objective vectors with
    a front flag (``objectives.snapshot_rows``); whenever that would be more than
    PARETO_HISTORY_SNAPSHOTS - 1 snapshots the stride doubles and the snapshots off it are dropped (so they
    stay evenly spread over the run); the last generation is added at the end (``snapshots``).  Part of a
    checkpoint (``state``/``restore``), so a resumed run's history is its twin's.  Nothing is drawn."""

    def __init__(self) -> None:
        self.stride = 1
        self.kept: list[tuple[int, int, Any]] = []  # (generation, population size, snapshot_rows)

    def record(self, ga: GA) -> None:
        fitness = ga.last_generation_fitness
        if getattr(fitness, "ndim", 0) != 2:
            return
        generation = int(ga.generations_completed)
        if not self.kept and generation == 1:  # generation 0: the population the first generation started from
            first = ga.previous_generation_fitness
            if getattr(first, "shape", None) == fitness.shape:
                self._add(0, first)
        if generation % self.stride == 0:
            self._add(generation, fitness)

    def _add(self, generation: int, fitness: Any) -> None:
        from ..wire import PARETO_HISTORY_SNAPSHOTS
        from .objectives import snapshot_rows

        self.kept.append((generation, len(fitness), snapshot_rows(fitness)))
        while len(self.kept) > PARETO_HISTORY_SNAPSHOTS - 1:
            self.stride *= 2
            self.kept = [entry for entry in self.kept if entry[0] % self.stride == 0]

    def snapshots(self, ga: GA, objectives: int) -> ParetoHistoryFile:
        """The history as ``pareto_history.json`` holds it, the GA's last generation last."""
        from .objectives import snapshot_rows

        entries = list(self.kept)
        generation = int(ga.generations_completed)
        fitness = ga.last_generation_fitness
        if (not entries or entries[-1][0] != generation) and getattr(fitness, "ndim", 0) == 2:
            entries.append((generation, len(fitness), snapshot_rows(fitness)))
        shown = entries[0][2].shape[1] - 1 if entries else 0
        snapshots: list[ParetoSnapshot] = []
        for at, size, rows in entries:
            values = [[_finite_or_none(v) for v in row] for row in rows[:, :-1].tolist()]
            count = int(rows[:, -1].sum())
            snapshots.append(
                {"generation": at, "population_size": size, "front": values[:count], "dominated": values[count:]}
            )
        return {"num_objectives": objectives, "objectives_shown": shown, "snapshots": snapshots}

    def state(self) -> dict[str, Any]:
        return {
            "stride": self.stride,
            "generations": [entry[0] for entry in self.kept],
            "sizes": [entry[1] for entry in self.kept],
            "rows": [entry[2] for entry in self.kept],
        }

    def restore(self, state: object) -> None:
        import numpy as np

        if not isinstance(state, dict):
            return
        stride, generations, sizes, rows = (state.get(k) for k in ("stride", "generations", "sizes", "rows"))
        if not (
            type(stride) is int
            and stride >= 1
            and isinstance(generations, list)
            and isinstance(sizes, list)
            and isinstance(rows, list)
            and len(generations) == len(sizes) == len(rows)
            and all(type(g) is int for g in generations)
            and all(type(n) is int for n in sizes)
            and all(isinstance(r, np.ndarray) and r.ndim == 2 for r in rows)
        ):
            raise ValueError("malformed front history")
        self.stride = stride
        self.kept = list(zip(generations, sizes, rows))


def population_stats(fitness: Any) -> Any:
    """The population's [best, mean, median, worst] fitness (one objective: 4 numbers; several: 4 rows of
    one value per objective): one sort and one mean per generation, the GA's state untouched (a copy is
    sorted; nothing is drawn)."""
    import numpy as np

    try:
        values = np.asarray(fitness, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # e.g. an int too large for a float: the result says so
        shape: tuple[int, ...] = tuple(getattr(fitness, "shape", ()))
        return np.full((4, *shape[1:2]), np.nan)
    ordered = np.sort(values, axis=0)
    n = ordered.shape[0]
    if ordered.ndim == 1 and n <= 512:  # the common case, in plain floats: a third of numpy's calls' cost
        sorted_values = ordered.tolist()
        middle = (sorted_values[(n - 1) // 2] + sorted_values[n // 2]) / 2
        return np.array((sorted_values[-1], sum(sorted_values) / n, middle, sorted_values[0]))
    return np.stack((ordered[-1], values.mean(axis=0), (ordered[(n - 1) // 2] + ordered[n // 2]) / 2, ordered[0]))


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def progress_of(ga: GA) -> Progress:
    """How far a run got (for a run that failed): generations completed and the best fitness it
    reached (None for several objectives or no finite value)."""
    reached = [f for f in (scalar_fitness(v) for v in getattr(ga, "best_solutions_fitness", []) or []) if f is not None]
    return {
        "generations_completed": int(getattr(ga, "generations_completed", 0) or 0),
        "best_solution_fitness": max(reached) if reached else None,
    }


def _gene_type(value: JSON) -> object:
    """``gene_type`` as sent (names, ``[name, precision]`` pairs, per-gene lists) → PyGAD's types."""
    if isinstance(value, str):
        if value in GENE_TYPES:
            return GENE_TYPES[value]
        import numpy

        return getattr(numpy, value) if value in NUMPY_GENE_TYPES else value
    if isinstance(value, list):
        return [_gene_type(v) for v in value]
    return value


def _values(value: object) -> int:
    """How many values a fitness answer holds (1 for a scalar)."""
    if isinstance(value, (list, tuple)):
        return len(value)
    size = getattr(value, "size", None)
    return int(size) if isinstance(size, int) and getattr(value, "ndim", 0) > 0 else 1


def bounded_fitness(fitness: UserFunction, batch_size: object) -> UserFunction:
    """``fitness`` with a bound on the size of each answer, checked on every call (a length check),
    so a fitness returning a million values fails at its first call, not after the whole run."""
    batched = isinstance(batch_size, int) and not isinstance(batch_size, bool) and batch_size > 1

    @functools.wraps(fitness)
    def fitness_func(ga: GA, solution: object, index: object) -> object:
        value = fitness(ga, solution, index)
        if type(value) is float or type(value) is int:  # one value: nothing to count
            return value
        counts: Iterable[int]
        if not batched:
            counts = (_values(value),)
        elif isinstance(value, (list, tuple)):
            counts = map(_values, value)
        else:  # an array: one row per solution of the batch
            shape = getattr(value, "shape", ())
            counts = (math.prod(shape[1:]) if len(shape) > 1 else 1,)
        for count in counts:
            if count > MAX_OBJECTIVES:
                raise UserCodeError(
                    f"fitness_func returned {count} values for one solution; a fitness "
                    f"is a number or at most {MAX_OBJECTIVES} objective values"
                )
        return value

    return fitness_func


def build_ga_kwargs(
    spec: JobSpec,
    code: UserCode,
    on_generation: UserFunction,
    logger: logging.Logger | None = None,
    trace: ConstraintTrace | None = None,
) -> dict[str, object]:
    """The keyword arguments of ``pygad.GA`` for this job (``code`` holds the compiled code fields)."""
    params = spec.params
    kwargs: dict[str, object] = dict(DEFAULTS)
    for name in PLAIN_PARAMS:
        if name in params and params[name] is not None:
            kwargs[name] = params[name]
        elif name in params and name in (
            "crossover_type",
            "mutation_type",
            "gene_space",
            "mutation_probability",
            "crossover_probability",
            "keep_parents",
            "mutation_num_genes",
            "random_seed",
            "fitness_batch_size",
            "stop_criteria",
        ):
            kwargs[name] = None  # an explicit null is meaningful to PyGAD for these
    if "gene_type" in params and params["gene_type"] is not None:
        kwargs["gene_type"] = _gene_type(params["gene_type"])
    fitness = function_of(code, "fitness_func")
    if fitness is None:
        raise UserCodeError("fitness_func: no fitness function was given")
    kwargs["fitness_func"] = bounded_fitness(fitness, kwargs.get("fitness_batch_size"))
    constraints = constraints_of(code)
    if constraints is not None:
        kwargs["gene_constraint"] = trace.wrap(constraints) if trace is not None else constraints
    for name in CALLBACK_FIELDS:
        if name in code and name != "on_generation":
            kwargs[name] = code[name]
    for name in OPERATOR_FIELDS:  # a custom operator: the compiled function in place of a name
        operator = function_of(code, name)
        if operator is not None:
            kwargs[name] = operator
    kwargs["on_generation"] = on_generation
    if spec.initial_population is not None:
        kwargs["initial_population"] = spec.initial_population
    if logger is not None:
        kwargs["logger"] = logger
    return kwargs


def compile_all(params: GaParams) -> UserCode:
    """Every code field of the job compiled (``compile_user_code``), by field name."""
    code: UserCode = {}
    for name in CODE_FIELDS:
        source = params.get(name)
        entry = params.get(f"{name}_entry")
        if source is None or (name in OPERATOR_FIELDS and entry is None):
            continue  # an operator without an entry names one of PyGAD's (a plain parameter)
        if not isinstance(source, str) or not isinstance(entry, str) or not entry:
            raise UserCodeError(f"{name}: source and {name}_entry must both be given as text")
        code[name] = compile_user_code(name, source, entry)
    if "fitness_func" not in code:
        raise UserCodeError("fitness_func: no fitness function was given")
    return code


def function_of(code: UserCode, name: str) -> UserFunction | None:
    """The compiled function of the code field ``name`` (any but ``gene_constraint``), if given."""
    value = code.get(name)
    return value if callable(value) else None


def constraints_of(code: UserCode) -> Constraints | None:
    """The compiled ``gene_constraint`` (one function or None per gene), if given."""
    value = code.get("gene_constraint")
    return value if isinstance(value, list) else None


class _UserFacingFilter(logging.Filter):
    """PyGAD logs every exception with its traceback; we report errors ourselves, so drop those."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None and record.levelno < logging.ERROR


def pygad_logger() -> logging.Logger:
    """PyGAD's messages (warnings) go to the run's output as plain lines, never with tracebacks."""
    logger = logging.Logger("allele.pygad", level=logging.INFO)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(_UserFacingFilter())
    logger.addHandler(handler)
    return logger


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def execute(spec: JobSpec, emit: Emit, rss_mb: Callable[[], float] = _rss_mb) -> OutcomeMessage:
    """Run the job; return the outcome message (``type: outcome``) for the parent: with the run's
    warnings (``WarningTally.entries()``), and for a failed run how far it got (``progress``)."""
    import warnings

    tally = WarningTally(CODE_FIELDS)
    built: list[GA] = []  # the GA, once it is built
    outcome: OutcomeMessage
    with warnings.catch_warnings():
        tally.install()
        try:
            try:
                outcome = _execute(spec, emit, rss_mb, tally, built)
            except MemoryError as exc:
                raise _user_failure(exc) from None
        except RunFailure as failure:
            failed: FailedOutcome = {
                "type": "outcome",
                "status": "failed",
                "error": failure.as_error(),
                "hit_memory_cap": isinstance(failure, MemoryLimitExceeded),
                "hit_time_cap": False,
            }
            if failure.engine is not None:
                failed["engine"] = failure.engine
            if built:
                try:
                    failed["progress"] = progress_of(built[0])
                except Exception:  # noqa: BLE001 - a GA left in a broken state: no progress then
                    pass
            outcome = failed
    outcome["warnings"] = tally.entries()
    return outcome


def params_digest(params: GaParams) -> str:
    """The job's parameters as one digest: a checkpoint is only ever resumed by the same job."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


CONTROL_EVERY = 0.05


class _Checkpointing:
    """The loop's checkpoint hook (``engine.resumable``): writes the GA's state, the loop's, and the
    job's own (the objective maxima so far, the warnings tally, the run time) at the boundaries
    ``CheckpointPlan`` asks for."""

    def __init__(self, spec: JobSpec, guard: GenerationGuard, tally: WarningTally) -> None:
        assert spec.checkpoints is not None
        self.plan = spec.checkpoints
        self.spec = spec
        self.guard = guard
        self.tally = tally
        self.digest = params_digest(spec.params)
        self.last = time.monotonic()
        self.control_read = -math.inf

    def __call__(self, ga: GA, state: LoopState) -> None:
        plan = self.plan
        now = time.monotonic()
        if plan.control_fd is not None and not plan.drain and now - self.control_read >= CONTROL_EVERY:
            self.control_read = now
            try:
                plan.drain = os.pread(plan.control_fd, 1, 0) == b"1"
            except OSError:
                pass
        if not (plan.drain or now - self.last >= plan.interval or state.next_generation in plan.at_generations):
            return
        from ..engine import checkpoint

        extra = {
            "digest": self.digest,
            "loop": state.to_dict(),
            "generation": state.next_generation,
            "objective_history": self.guard.objective_history,
            "population_history": self.guard.population.rows,
            "pareto_history": self.guard.fronts.state(),
            "warnings": self.tally.state(),
            "elapsed": now - self.spec.started_at + self.guard.time_before,
        }
        sink = plan.sink
        if isinstance(sink, SlotSink):
            sink.generation = state.next_generation
        try:
            document, arrays = checkpoint.capture(ga, extra)
            plan.last_bytes = checkpoint.write(sink, document, arrays, plan.max_bytes)
            plan.taken += 1
        except checkpoint.CheckpointError as exc:
            plan.refused = str(exc)  # the run goes on without this checkpoint
        self.last = time.monotonic()
        if plan.drain:
            raise Suspended(state.next_generation)


def _resume(ga: GA, spec: JobSpec, guard: GenerationGuard, tally: WarningTally) -> LoopState:
    """Restore the checkpoint ``spec.resume_from`` into the GA just built (the job's module loaded
    again, ``on_start`` not called again); the loop state to go on from."""
    import numpy as np

    from ..engine import checkpoint
    from ..engine.resumable import LoopState

    assert spec.resume_from is not None
    limit = spec.checkpoints.max_bytes if spec.checkpoints is not None else len(spec.resume_from)
    try:
        document, arrays = checkpoint.read(spec.resume_from, limit * 4)
        extra = document.get("extra")
        digest = checkpoint.decode(extra, arrays).get("digest") if isinstance(extra, dict) else None
        if digest != params_digest(spec.params):
            raise checkpoint.CheckpointError("the checkpoint is not this job's")
        extra = checkpoint.restore(ga, document, arrays)
        state = LoopState.from_dict(extra["loop"])
        history = extra.get("objective_history")
        guard.objective_history = history if isinstance(history, list) else None
        statistics = extra.get("population_history")
        if isinstance(statistics, list):  # the same list the result reads (guard.population_history)
            guard.population.rows[:] = [row for row in statistics if isinstance(row, np.ndarray)]
        if extra.get("pareto_history") is not None:
            guard.fronts.restore(extra["pareto_history"])
        guard.sent_generation = len(guard.population.rows) - 1  # the trail had these before the checkpoint
        tally.restore(extra.get("warnings"))
        elapsed = extra.get("elapsed")
        guard.time_before = float(elapsed) if type(elapsed) is float and 0 <= elapsed < 1e7 else 0.0
    except (checkpoint.CheckpointError, KeyError, TypeError, ValueError) as exc:
        raise InternalError(f"the run's checkpoint could not be resumed: {exc}") from None
    return state


class ConstraintTrace:
    """The gene constraint called last and its answer, to name it when PyGAD refuses the answer."""

    gene: int | None = None
    function: UserFunction | None = None
    output: object = None

    def wrap(self, constraints: Constraints) -> Constraints:
        """Each function of ``constraints`` recording its calls here (same signature, same answer)."""
        import inspect

        def traced(gene: int, function: UserFunction | None) -> UserFunction | None:
            if (
                function is None
                or inspect.isclass(function)
                or not callable(function)
                or inspect.iscoroutinefunction(function)
            ):
                return function  # PyGAD refuses these itself

            @functools.wraps(function)
            def constraint(solution: object, values: object) -> object:
                self.gene, self.function = gene, function
                self.output = answer = function(solution, values)
                return answer

            return constraint

        return [traced(gene, function) for gene, function in enumerate(constraints)]

    def failure(self, exc: BaseException) -> UserCodeError | None:
        """PyGAD's refusal of a constraint's answer, as the user's error naming the function."""
        if self.gene is None or "output from the gene_constraint" not in str(exc):
            return None
        code = getattr(self.function, "__code__", None)
        where = (
            f"gene_constraint line {code.co_firstlineno}"
            if code is not None and code.co_filename == _filename("gene_constraint")
            else "gene_constraint"
        )
        shown = repr(self.output)
        shown = shown if len(shown) <= 80 else shown[:79] + "…"
        return UserCodeError(
            _clip(
                f"{where}: the function for gene {self.gene} returned {shown} "
                f"({type(self.output).__name__}); it must return a list or array "
                f"of some of the values it was given (its second argument)"
            )
        )


def _execute(
    spec: JobSpec,
    emit: Emit,
    rss_mb: Callable[[], float],
    tally: WarningTally,
    built: list[GA],
) -> SucceededOutcome:
    from .. import engine  # imports numpy/pygad: here, so the sandbox is in place before numpy loads
    from .ga_result import collect

    code = compile_all(spec.params)
    guard = GenerationGuard(user_callback=function_of(code, "on_generation"), spec=spec, emit=emit, rss_mb=rss_mb)
    trace = ConstraintTrace()
    kwargs = build_ga_kwargs(spec, code, guard, logger=pygad_logger(), trace=trace)
    try:
        ga = engine.build_ga(kwargs)  # AcceleratedGA when covered, else stock pygad.GA
    except MemoryError:
        raise MemoryLimitExceeded("memory limit reached while creating the population") from None
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        failure = trace.failure(exc) or _user_failure(exc)
        if type(failure) is UserCodeError and "line" not in failure.message.split(":")[0]:
            failure = UserCodeError(_clip(f"parameters rejected by PyGAD: {failure.message}"))
        raise failure from None
    built.append(ga)
    resume = None
    if spec.resume_from is not None:
        resume = _resume(ga, spec, guard, tally)
    hook = _Checkpointing(spec, guard, tally) if spec.checkpoints is not None else None
    try:
        engine.run_ga(ga, hook, resume)
    except Suspended:
        raise
    except MemoryError as exc:
        raise _user_failure(exc).with_engine(engine.engine_label(ga)) from None
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, SystemExit included
        failure = trace.failure(exc) or _user_failure(exc)
        raise failure.with_engine(engine.engine_label(ga)) from None
    if os.getpid() != guard.pid:
        os._exit(0)
    guard.send_progress(ga)  # the generations after the last progress message (the live trail's end)
    stop_reason = guard.stop_reason
    if stop_reason is None:
        planned = size_param(spec.params, "num_generations")
        stop_reason = "stop_criteria" if ga.generations_completed < planned else "completed"
    try:
        result = collect(
            ga,
            stopped_reason=stop_reason,
            objective_history=guard.objective_history,
            population_history=guard.population_history,
            fronts=guard.fronts.snapshots,
            constraints=constraints_of(code),
            note=tally.add,
        )
    except UserCodeError as exc:  # numbers a report cannot carry
        raise exc.with_engine(engine.engine_label(ga)) from None
    except MemoryError:
        raise MemoryLimitExceeded("memory limit reached while collecting the result") from None
    except Exception as exc:  # noqa: BLE001 - whatever fails here is the worker's: internal_error
        raise InternalError(f"could not collect the result: {type(exc).__name__}") from None
    return {
        "type": "outcome",
        "status": "succeeded",
        "result": result,
        "engine": engine.engine_label(ga),
        "hit_time_cap": stop_reason == "time_cap",
        "hit_memory_cap": stop_reason == "memory_cap",
    }
