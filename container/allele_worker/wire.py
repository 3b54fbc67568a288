"""The wire: every payload that crosses a process or HTTP boundary of the GA worker, typed once here and
imported by both sides, with the facts of the contract (codes, reasons, bounds, parameter names).

JSON-shaped payloads are ``TypedDict``s; what a process keeps for itself are frozen dataclasses in the
modules that own them (``worker.run_request.RunRequest``, ``child.jobs.JobSpec``, ``sandbox.Limits``).
The boundaries, and the types that cross them::

    Worker ─ POST /runs: RunRequestBody ───────────────────────▶ worker side (worker/app.py)
           ◀ RunStateBody · Cancelled · Health · Environment · HttpError
    worker side ─ spec fd: ChildSpec (its sandbox: SandboxPlan) ─▶ child side (child/entry.py)
                ─ --probe: SandboxPlan ─▶ child; ◀ stdout: ProbeAnswer
                ◀ channel: RelayMessage (ProgressMessage, LimitMessage, CollectedMessage) ─ the relay
                ◀ store (a memfd): CollectedOutcome and its parts (the result, the population, files)
                ⇄ fork server (child/forkserver.py): ForkRequest ▶, ◀ ForkReady | ForkStarted | ForkExited
    child side: the job ─ ChildMessage lines (ProgressMessage, PopulationMessage, OutcomeMessage) ─▶ its relay
    Worker ◀ POST {report.url}/progress: Progress, /complete: CompleteReport ─ worker side

The HTTP ones are docs/runner-protocol.md.  What the job sends is hostile (user code shares its
message channel): the run's relay — a process of the run, in its control group, that never runs user
code — reads it within ``ChannelLimits``, forwards checked progress, and validates the outcome
(``child.validation``) into the store's parts; the worker reads only the relay's small messages and
streams the parts unparsed.  The child's own ``OutcomeResult`` types what it means to send.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Literal, NotRequired, TypeAlias, TypedDict, TypeGuard, final, get_args

__all__ = [
    "CALLBACK_FIELDS",
    "CHANNEL_LINE_BYTES",
    "CODE_FIELDS",
    "ERROR_CODES",
    "JSON",
    "MAX_DATA_FILES",
    "MAX_OBJECTIVES",
    "MESSAGE_BYTES",
    "OPERATOR_FIELDS",
    "OUTCOME_PREFIX",
    "PLAIN_PARAMS",
    "POPULATION_PREFIX",
    "STAGED_FILES",
    "STOPPED_REASONS",
    "SUMMARY_BYTES",
    "TRAIL_OBJECTIVES",
    "TRAIL_POINTS_PER_MESSAGE",
    "TRAIL_POINTS_PER_REPORT",
    "WARNING_MESSAGE_LIMIT",
    "WARNING_TEMPLATES",
    "Cancelled",
    "Caps",
    "ChannelLimits",
    "CheckpointMessage",
    "CheckpointSpec",
    "ChildCaps",
    "ChildJob",
    "ChildMessage",
    "ChildSpec",
    "CollectedMessage",
    "CollectedOutcome",
    "CompleteReport",
    "DataCacheHealth",
    "DataFileRef",
    "DataMount",
    "Environment",
    "EnvironmentDataFiles",
    "EnvironmentMemory",
    "EnvironmentPackage",
    "EnvironmentThreads",
    "ErrorCode",
    "FailedOutcome",
    "Fitness",
    "ForkExited",
    "ForkReady",
    "ForkRequest",
    "ForkStarted",
    "GaParams",
    "Genes",
    "Health",
    "HttpError",
    "IsolationHealth",
    "JSONObject",
    "LimitMessage",
    "LimitReason",
    "Metrics",
    "OutcomeMessage",
    "OutcomeResult",
    "ParetoFront",
    "ParetoHistory",
    "ParetoSnapshot",
    "Population",
    "PopulationMessage",
    "PopulationPoint",
    "ProbeAnswer",
    "Progress",
    "ProgressMessage",
    "RelayMessage",
    "ReportTarget",
    "ResultBody",
    "ResultFacts",
    "RunCheckpoint",
    "RunError",
    "RunRequestBody",
    "RunState",
    "RunStateBody",
    "RunStatus",
    "SandboxPlan",
    "SavedBest",
    "SavedGeneration",
    "StoppedReason",
    "SucceededOutcome",
    "TrailPoint",
    "Violation",
    "WarningEntry",
    "checked_checkpoint",
    "checked_progress",
    "downsample",
    "is_count",
    "is_finite_number",
    "is_number",
    "size_param",
    "to_json",
    "trail_point",
]

# JSON as read (a list or an object, narrowed by isinstance) and as written (any sequence or mapping).
JSON: TypeAlias = "bool | int | float | str | Sequence[JSON] | Mapping[str, JSON] | None"
JSONObject: TypeAlias = dict[str, JSON]

# --------------------------------------------------------------------------- facts of the contract

ErrorCode = Literal[
    "code_error", "time_limit_exceeded", "memory_limit_exceeded", "resource_limit_exceeded", "internal_error"
]
ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)
StoppedReason = Literal["completed", "stop_criteria", "callback_stop", "time_cap", "memory_cap"]
STOPPED_REASONS: tuple[StoppedReason, ...] = get_args(StoppedReason)
RunStatus = Literal["succeeded", "failed"]
MAX_OBJECTIVES = 1000  # values one solution's fitness may have (a progress message's best_objectives too)
WARNING_TEMPLATES = 50  # distinct warnings a run reports; later new ones are counted in one more entry
WARNING_MESSAGE_LIMIT = 500  # characters of a warning's message
# The message channel (container/README.md, "Caps").  A job's message other than its outcome — progress,
# at most MAX_OBJECTIVES numbers of at most 24 characters, ≈ 25 KB — may carry this much; only the
# outcome may be larger (up to ``ChannelLimits.outcome_bytes``), and it is the line that starts with
# OUTCOME_PREFIX (how ``to_json`` writes an ``OutcomeMessage``: "type" first).
MESSAGE_BYTES = 32 * 1024
OUTCOME_PREFIX = b'{"type":"outcome",'
# A succeeded run's final population goes just before its outcome, on a line of its own
# (``PopulationMessage``, "population" its only other key): the relay validates it and stores the
# job's own bytes, without encoding them again.  It is as large as an outcome may be.
POPULATION_PREFIX = b'{"type":"population","population":'
CHANNEL_LINE_BYTES = 64 * 1024  # a line of the relay's channel to the worker (a re-encoded progress fits)
SUMMARY_BYTES = 1024 * 1024  # the CollectedOutcome in the store (warnings, error: bounded, ≈ 350 KB at most)
# A run's data files (docs/runner-protocol.md#data-files): at most this many, each read-only at
# /data/<name> in the run (the Worker's MAX_DATA_FILES, src/model/parameters.ts).
MAX_DATA_FILES = 100
# The data too large for a report, uploaded as files before it (worker.runs, child.staged_files).
STAGED_FILES = ("pareto_front.json", "pareto_front.csv", "pareto_history.json", "solutions.json", "best_solutions.json")

# The GA parameter names of ``params`` (docs/api.md#creation-parameters; the Worker's own list,
# src/http/validation/submission.ts, is held to these by test/workers/parameters.test.ts).
CALLBACK_FIELDS = ("on_start", "on_fitness", "on_parents", "on_crossover", "on_mutation", "on_generation", "on_stop")
# Operators: one of PyGAD's names (a plain parameter), or Python source with ``<field>_entry``, a custom
# operator PyGAD calls with its own arguments (a code field): the ``_entry`` decides.
OPERATOR_FIELDS = ("parent_selection_type", "crossover_type", "mutation_type")
# Code fields: Python source, each with ``<field>_entry`` naming the object to use.
CODE_FIELDS = ("fitness_func", "gene_constraint", *CALLBACK_FIELDS, *OPERATOR_FIELDS)
# Parameters passed through to pygad.GA as they are (after gene_type conversion); the operators among
# them only when they name one of PyGAD's.  Every parameter of pygad.GA 3.9.2 is here or a code field,
# except ``initial_population`` (the run's start population, beside ``params``: ``RunRequestBody``)
# and ``logger`` (refused by the Worker: a run's log is its captured output, docs/decisions.md).
PLAIN_PARAMS = (
    "num_generations",
    "num_parents_mating",
    "sol_per_pop",
    "num_genes",
    "init_range_low",
    "init_range_high",
    "mutation_type",
    "mutation_probability",
    "mutation_percent_genes",
    "mutation_num_genes",
    "mutation_by_replacement",
    "random_mutation_min_val",
    "random_mutation_max_val",
    "crossover_type",
    "crossover_probability",
    "parent_selection_type",
    "K_tournament",
    "keep_parents",
    "keep_elitism",
    "gene_type",
    "gene_space",
    "allow_duplicate_genes",
    "stop_criteria",
    "random_seed",
    "fitness_batch_size",
    "sample_size",
    "parallel_processing",
    "save_solutions",
    "save_best_solutions",
    "nsga3_num_divisions",
    "sbx_crossover_eta",
    "polynomial_mutation_eta",
    "gene_categorical",
    "suppress_warnings",
)

# --------------------------------------------------------------------------- values on the wire

GaParams: TypeAlias = JSONObject  # PLAIN_PARAMS, CODE_FIELDS and their ``<field>_entry``, as JSON
Population: TypeAlias = list[list[float]]  # a start population: rows of finite numbers
Genes: TypeAlias = list[float | None]  # a solution as reported: a non-finite gene is null
# A solution's fitness as reported: one objective a number, "inf"/"-inf", or null (not finite); several
# objectives one number per objective.
Fitness: TypeAlias = "float | str | list[float | None] | None"


def is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: an int or a float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """A JSON number that is finite (JSON itself has no infinity; Python's parser accepts one)."""
    return is_number(value) and math.isfinite(value)


def population_problem(population: object, name: str = "initial_population") -> str | None:
    """What is wrong with a start population (a non-empty list of equally long, non-empty lists of
    finite numbers), or None: the worker checks an inline one, the job one it fetched."""
    if (
        not isinstance(population, list)
        or not population
        or not all(isinstance(row, list) and row and all(is_finite_number(v) for v in row) for row in population)
    ):
        return f"{name} must be null or a non-empty list of number lists"
    if len({len(row) for row in population}) != 1:
        return f"{name} rows must all have the same length"
    return None


# A start population fetched for a continue (or a submission's own) that is not one: the run fails
# with internal_error and this message (the worker when it cannot fetch it, the job when it cannot
# parse it).
POPULATION_NOT_LOADED = "the start population could not be loaded"


def is_count(value: object, low: int = 0) -> TypeGuard[int]:
    """An int (not a bool) of at least ``low``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def checked_progress(message: Mapping[str, object]) -> Progress | None:
    """A progress message as the progress report it becomes, if it has that shape (user code can write
    to the channel too): each list of objectives (the best solution's, each objective's maximum) kept
    only when it is 1..MAX_OBJECTIVES finite numbers."""
    generations = message.get("generations_completed")
    fitness = message.get("best_solution_fitness")
    if not is_count(generations) or not (fitness is None or is_number(fitness)):
        return None
    progress: Progress = {"generations_completed": generations, "best_solution_fitness": fitness}
    population = message.get("population")
    if isinstance(population, list) and len(population) == 4 and all(v is None or is_number(v) for v in population):
        progress["population"] = [v if is_finite_number(v) else None for v in population]
    for key in ("best_solution_objectives", "best_objectives"):
        objectives = message.get(key)
        if isinstance(objectives, list) and 0 < len(objectives) <= MAX_OBJECTIVES:
            finite = [v for v in objectives if is_finite_number(v)]
            if len(finite) == len(objectives):
                progress[key] = finite
    points = message.get("points")
    if isinstance(points, list) and 0 < len(points) <= TRAIL_POINTS_PER_MESSAGE:
        checked = [trail_point(p) for p in points]
        if all(p is not None for p in checked):
            progress["points"] = [p for p in checked if p is not None]
    return progress


def _values(value: object, size: int | None) -> list[float | None] | bool | None:
    """A trail point's list: numbers (non-finite as null), at most TRAIL_OBJECTIVES (or exactly
    ``size``); None for null; False for anything else."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or len(value) > (size or TRAIL_OBJECTIVES):
        return False
    if size is not None and len(value) != size:
        return False
    if not all(v is None or is_number(v) for v in value):
        return False
    return [v if is_finite_number(v) else None for v in value]


def _extremes_first(points: list[TrailPoint]) -> list[int]:
    """The indices every downsampling keeps: the first, the last, and the best's extremes."""

    def key(point: TrailPoint) -> float | None:
        value = point[1] if point[1] is not None else (point[2][0] if isinstance(point[2], list) else None)
        return value if isinstance(value, float | int) else None

    valued = [(key(p), i) for i, p in enumerate(points) if key(p) is not None]
    kept = {0, len(points) - 1}
    if valued:
        kept.add(max(valued)[1])
        kept.add(min(valued)[1])
    return sorted(kept)


def downsample(points: list[TrailPoint], limit: int) -> list[TrailPoint]:
    """At most ``limit`` (≥ 4) of ``points`` in order: the first, the last and the best's extremes, the
    rest evenly spread over them."""
    if len(points) <= limit:
        return points
    kept = set(_extremes_first(points))
    room = limit - len(kept)
    if room > 0:
        step = len(points) / room
        kept.update(min(len(points) - 1, int(i * step)) for i in range(room))
    while len(kept) > limit:  # evenly spread ones that met an extreme: drop from the middle out
        extra = sorted(kept - set(_extremes_first(points)))
        kept.discard(extra[len(extra) // 2])
    return [points[i] for i in sorted(kept)]


def trail_point(value: object) -> TrailPoint | None:
    """One trail point as the job may send it (``Progress.points``), checked and made finite; None if it
    is not one."""
    if not isinstance(value, list) or not 2 <= len(value) <= 5 or not is_count(value[0]):
        return None
    best = value[1]
    if not (best is None or is_number(best)):
        return None
    point: TrailPoint = [value[0], best if is_finite_number(best) else None]
    for index, size in ((2, None), (3, None), (4, 4)):
        if len(value) > index:
            item = _values(value[index], size)
            if item is False:
                return None
            point.append(item)
    return point


def size_param(params: GaParams, name: str) -> int:
    """A size parameter of the job (``num_generations``, ``sol_per_pop``, ``num_genes``: positive
    integers, ``worker.run_request`` checks), 0 when it is not given."""
    value = params.get(name)
    return int(value) if isinstance(value, (int, float)) and value else 0


def to_json(value: object) -> bytes:
    """The compact JSON every payload of this worker travels as; ``ValueError`` for a non-finite float
    (JSON has no infinity or NaN: the senders replace them first)."""
    return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- Worker ⇄ worker (HTTP)


class Caps(TypedDict):
    time_seconds: float
    memory_mb: float


class ReportTarget(TypedDict):
    url: str  # {report.url}: /progress, /complete, /population, /files/{name} below it
    token: str  # the run's bearer token (never reaches the child)


class DataFileRef(TypedDict):
    """A data file of a run: fetched from ``url`` with the run's token, cached by ``sha256``."""

    name: str  # the run reads it at /data/<name>
    sha256: str  # 64 lowercase hex digits: checked after the download
    size_bytes: int
    url: str  # {report.url}/data-files/{sha256}


class RunRequestBody(TypedDict):
    """``POST /runs``."""

    run_id: str
    submission_id: str
    params: GaParams
    initial_population: NotRequired[Population | None]
    initial_population_url: NotRequired[str | None]
    data_files: NotRequired[list[DataFileRef]]
    data_scope: NotRequired[str]  # whose bytes they are: one account's cached files are kept apart from another's
    caps: Caps
    report: ReportTarget
    # A durable run: checkpoint every interval_seconds (at most max_bytes each); checkpoint_url: the
    # run's last checkpoint, to resume from (docs/runner-protocol.md).
    checkpoint: NotRequired[RunCheckpoint | None]
    checkpoint_url: NotRequired[str | None]


class RunCheckpoint(TypedDict):
    interval_seconds: float
    max_bytes: int


RunState = Literal["running", "finished"]


class RunStateBody(TypedDict):
    """``POST /runs`` (202, or 200 for a run id already known) and ``GET /runs/{run_id}``."""

    run_id: str
    state: RunState


class Metrics(TypedDict):
    cpu_seconds_used: float
    peak_memory_mb: int
    execution_duration_ms: int
    hit_time_cap: bool
    hit_memory_cap: bool


class Cancelled(TypedDict):
    """``POST /runs/{run_id}/cancel``."""

    run_id: str
    metrics: Metrics


class IsolationHealth(TypedDict):
    user: bool
    network: bool
    pid_namespace: bool
    minimal_root: bool
    syscall_filter: bool
    cgroup: str | None
    memory_tree: bool
    cpu_tree: bool
    pids: bool
    rlimits: list[str]
    notes: list[str]


class DataCacheHealth(TypedDict):
    """The data file cache (``worker.data_cache``): what it holds and how it was used since the start."""

    files: int
    bytes: int
    max_bytes: int
    downloads: int  # files fetched from the Worker
    hits: int  # files a run found cached (or being fetched for another run)
    evictions: int


class Health(TypedDict):
    """``GET /health``."""

    status: Literal["ok"]
    version: str
    isolation: IsolationHealth
    capacity: int
    in_use: int
    active_runs: int
    data_cache: DataCacheHealth
    draining: NotRequired[bool]  # SIGTERM: taking no runs, handing its runs back


class EnvironmentPackage(TypedDict):
    name: str  # the distribution's normalized name (PEP 503): "scikit-learn", "tensorflow-cpu"
    version: str
    modules: list[str]  # the top-level modules it provides: what a run imports ("sklearn", "tensorflow")
    featured: bool  # one of the libraries the environment is curated for (worker/environment.py FEATURED)


class EnvironmentThreads(TypedDict):
    variables: list[str]  # sandbox/plan.py THREAD_VARIABLES
    description: str


class EnvironmentMemory(TypedDict):
    tensorflow_min_memory_mb: int  # sandbox/plan.py NN_MIN_MEMORY_MB
    description: str


class EnvironmentDataFiles(TypedDict):
    mount: str
    read_only: bool
    available: bool
    description: str


class Environment(TypedDict):
    """``GET /environment``: what a run's code can import (worker/environment.py)."""

    python: str
    packages: list[EnvironmentPackage]
    threads: EnvironmentThreads
    memory: EnvironmentMemory
    data_files: EnvironmentDataFiles


class HttpErrorDetail(TypedDict):
    code: str  # invalid_request, at_capacity, unknown_run, not_found, internal_error
    message: str


class HttpError(TypedDict):
    """Every 4xx/5xx answer of the worker."""

    error: HttpErrorDetail


# --------------------------------------------------------------------------- worker → Worker (reports)


# A result's population statistics (docs/api.md#results, ``population_history``): at most this many
# generations (every one up to it; past it, this many spread evenly over the run, the first and the last
# included), and at most POPULATION_HISTORY_VALUES numbers in all (fewer generations with many objectives).
POPULATION_HISTORY_POINTS = 2000
POPULATION_HISTORY_VALUES = 200_000
# A multi-objective run's history of fronts (``pareto_history.json``, docs/api.md#result-files;
# docs/decisions.md says why these numbers): at most PARETO_HISTORY_SNAPSHOTS snapshots of the population
# (every generation while few, then every 2nd, 4th, … — the stride doubles whenever they would be more —
# generation 0 and the last always among them), each of the first PARETO_HISTORY_OBJECTIVES objectives of
# at most PARETO_HISTORY_POINTS solutions (front first, the rest evenly spread over the population), and at
# most PARETO_HISTORY_VALUES objective values in all (fewer solutions per snapshot with more objectives).
PARETO_HISTORY_SNAPSHOTS = 50
PARETO_HISTORY_OBJECTIVES = 6
PARETO_HISTORY_POINTS = 500
PARETO_HISTORY_VALUES = 60_000


class PopulationPoint(TypedDict):
    """One generation of ``population_history``: the population's best (maximum), mean, median and worst
    (minimum) fitness; with several objectives each is a list, one value per objective.  A value that is
    not finite is null."""

    generation: int
    best: list[float | None] | float | None
    mean: list[float | None] | float | None
    median: list[float | None] | float | None
    worst: list[float | None] | float | None


# Live progress of every generation (docs/runner-protocol.md, ``points``): a progress message carries the
# trail points of the generations since the job's previous one, at most TRAIL_POINTS_PER_MESSAGE (past it
# downsampled: first, last, the best's extremes, the rest evenly spread) of the first TRAIL_OBJECTIVES
# objectives; the worker sends those since its previous report, at most TRAIL_POINTS_PER_REPORT.
TRAIL_POINTS_PER_MESSAGE = 100
TRAIL_POINTS_PER_REPORT = 2000
TRAIL_OBJECTIVES = 6
# One trail point: [generation, best fitness (one objective) or null, each objective's population maximum
# or null, the best solution's objective values or null, the population's [best, mean, median, worst]
# (one objective) or null]; non-finite values null.
TrailPoint: TypeAlias = list[object]


class Progress(TypedDict):
    """``POST {report.url}/progress``, and how far a failed run got (the completion report's
    ``progress``)."""

    generations_completed: int
    best_solution_fitness: float | None  # one objective; null for several (then the two lists below)
    # Several objectives (≤ MAX_OBJECTIVES values each): the objective values of PyGAD's best solution
    # (the point of ``best_solutions_fitness`` at this generation), and each objective's maximum over
    # the population (the point of ``objective_maxima``).
    best_solution_objectives: NotRequired[list[float]]
    best_objectives: NotRequired[list[float]]
    # One objective: the population's [best, mean, median, worst] fitness at this generation (null where
    # not finite); the live chart's band and lines (docs/runner-protocol.md).
    population: NotRequired[list[float | None]]
    # The generations since the previous progress (the last one this report's own generation), as trail
    # points (TRAIL_POINTS_PER_MESSAGE in a message, TRAIL_POINTS_PER_REPORT in a report).
    points: NotRequired[list[TrailPoint]]


class ParetoSnapshot(TypedDict):
    """One generation of ``pareto_history``: the objective vectors (the first PARETO_HISTORY_OBJECTIVES
    objectives; a value not finite is null) of its population's non-dominated solutions (``front``, judged
    on every objective) and of the others (``dominated``); ``population_size`` solutions in all, of which
    these are all or, past PARETO_HISTORY_POINTS, a sample (the front first)."""

    generation: int
    population_size: int
    front: list[list[float | None]]
    dominated: list[list[float | None]]


class ParetoHistory(TypedDict):
    """``pareto_history.json``: the population's fronts over the run, generation 0 first."""

    num_objectives: int
    objectives_shown: int  # min(num_objectives, PARETO_HISTORY_OBJECTIVES)
    snapshots: list[ParetoSnapshot]


class RunError(TypedDict):
    code: ErrorCode
    message: str
    # "compile": the user's code did not compile (Python's compile() refused a code field), so none of it
    # ran; set by the job, kept by the relay only when compiling the job's sources fails there too
    # (``validation.compile_refused``), and the Worker charges such a run 0 (docs/api.md#credits).
    stage: NotRequired[Literal["compile"]]


class WarningEntry(TypedDict):
    message: str  # the first text of its template, ≤ WARNING_MESSAGE_LIMIT characters
    count: int


class Violation(TypedDict):
    gene: int
    value: JSON  # the gene's value in the best solution (a number; null if not finite)


class ParetoFront(TypedDict):
    """The final population's front: its objective vectors; its ``solutions`` in the child's outcome
    (the worker moves them to ``pareto_front.json``), its ``size`` in the report."""

    objectives: list[Fitness]
    solutions: NotRequired[list[Genes]]
    size: NotRequired[int]


class SavedGeneration(TypedDict):
    """One generation of ``save_solutions`` (``solutions.json``)."""

    generation: int | None
    solutions: list[Genes]
    fitness: list[Fitness]


class SavedBest(TypedDict):
    """One generation of ``save_best_solutions`` (``best_solutions.json``)."""

    generation: int | None
    solution: Genes
    fitness: Fitness


class ResultFacts(TypedDict):
    """The keys a run's result has alike in the child's outcome (``OutcomeResult``) and, validated, in
    the completion report (``ResultBody``)."""

    # PyGAD's best_solution() fitness: a number for one objective, the list of objective values for several.
    best_solution_fitness: Fitness
    best_solution_objectives: Fitness  # several objectives: the same list; null for one
    best_solutions_fitness: list[Fitness]  # PyGAD's history: per generation, its best solution's fitness
    # Several objectives: per generation, each objective's maximum over the population (the values may
    # come from different solutions); null for one.
    objective_maxima: list[list[float | None]] | None
    # The population's best, mean, median and worst fitness per generation, generation 0 first (bounded:
    # POPULATION_HISTORY_POINTS, POPULATION_HISTORY_VALUES).
    population_history: list[PopulationPoint]
    generations_completed: int
    stopped_reason: StoppedReason
    num_objectives: int
    constraint_violations: list[Violation] | None


class ResultBody(ResultFacts):
    """A succeeded run's ``result``, as the worker validated it from the child's outcome.  The bulky
    parts leave it before the completion report (``worker.staged_files``): ``solutions`` and
    ``best_solutions`` always, ``population`` when too large to ride inline."""

    best_solution: Genes
    best_solution_generation: int
    population: NotRequired[list[Genes]]
    pareto_front: NotRequired[ParetoFront]
    pareto_history: NotRequired[ParetoHistory]  # several objectives (``pareto_history.json``)
    solutions: NotRequired[list[SavedGeneration]]
    best_solutions: NotRequired[list[SavedBest]]


class CompleteReport(TypedDict):
    """``POST {report.url}/complete``."""

    status: RunStatus
    result: ResultBody | None
    error: RunError | None
    metrics: Metrics
    output: str  # stdout + stderr, truncated
    engine: str  # the engine path that ran (docs/engine.md)
    warnings: list[WarningEntry]
    progress: Progress | None  # a failed run: how far it got


# --------------------------------------------------------------------------- worker → child


class DataMount(TypedDict):
    """A data file in a run's minimal root: the cached file ``path`` bound read-only at /data/<name>."""

    name: str
    path: str


class SandboxPlan(TypedDict):
    """What ``sandbox.confine`` applies in the child (``sandbox.make_plan``)."""

    workdir: str
    uid: int | None  # the run's own uid; None: the worker is not root, the run keeps its user
    network: bool
    pid_namespace: bool
    minimal_root: bool
    syscall_filter: bool
    cgroup_procs: list[str]  # the run's cgroup.procs file(s) to join
    require: bool  # a measure that fails ends the run (False only for the startup probe)
    rlimits: dict[str, list[int]]  # name (sandbox.plan.RLIMITS) → [soft, hard]
    tmpfs_mb: int  # the size of the run's writable /tmp
    data_files: NotRequired[list[DataMount]]  # bound read-only at /data/<name> in the minimal root
    probe_hidden: NotRequired[list[str]]  # the probe only: host paths the run must not see


class ProbeAnswer(TypedDict):
    """What ``python -m allele_worker.child --probe PLAN`` prints: measure → why it failed."""

    failed: dict[str, str]


class ChildCaps(TypedDict):
    time_seconds: float
    memory_mb: int


class CheckpointSpec(TypedDict):
    """A durable run's checkpoints (docs/architecture.md, "Durable runs"): every ``interval_seconds``
    of run time at a generation boundary, at most ``max_bytes`` each; ``resume_bytes``: the child's
    first checkpoint slot holds the checkpoint to resume from, that long (None: from the start)."""

    interval_seconds: float
    max_bytes: int
    resume_bytes: NotRequired[int | None]


class ChildJob(TypedDict):
    """What the worker runs in a child: no report URL, no token (the start population is fetched).
    ``initial_population_bytes``: a fetched start population's JSON follows the spec in the child's
    spec file, after its newline, this long, unread by the worker: the job parses and checks it under
    the run's caps (``initial_population`` is then null)."""

    run_id: NotRequired[str]
    params: GaParams
    initial_population: Population | None
    initial_population_bytes: NotRequired[int]
    caps: ChildCaps
    checkpoint: NotRequired[CheckpointSpec | None]


class CheckpointMessage(TypedDict):
    """Job → relay → worker: a checkpoint of ``bytes`` bytes is in slot ``slot`` (0 or 1), taken at
    the boundary before generation ``generation``; the worker streams it to the Worker unread."""

    type: Literal["checkpoint"]
    generation: int
    slot: int
    bytes: int


def checked_checkpoint(message: Mapping[str, object], max_bytes: int) -> CheckpointMessage | None:
    """A checkpoint message with that shape (user code can write to the channel too), else None."""
    generation, slot, size = message.get("generation"), message.get("slot"), message.get("bytes")
    if not is_count(generation, 1) or slot not in (0, 1) or type(slot) is not int:
        return None
    if not is_count(size, 1) or size > max_bytes:
        return None
    return {"type": "checkpoint", "generation": generation, "slot": slot, "bytes": size}


class ChannelLimits(TypedDict):
    """What the job may write to its message channel (``sandbox.Limits``), enforced by its relay."""

    message_bytes: int  # a message other than the outcome (MESSAGE_BYTES)
    outcome_bytes: int  # the outcome
    messages_per_second: float  # messages of any kind, after …
    message_burst: int  # … this many over the whole run
    checkpoint_bytes: NotRequired[int]  # a durable run's checkpoint cap (0 or absent: no checkpoints)


class ChildSpec(ChildJob):
    """The child's job, read by the child from a file descriptor of its own (a memfd the worker wrote)
    before it confines itself: the fork server never sees it."""

    started_at: float  # CLOCK_MONOTONIC (system-wide) when the worker started the child
    places: int  # the CPUs the run takes: the size of its thread pools (child/libraries.py)
    sandbox: SandboxPlan
    channel: ChannelLimits


# --------------------------------------------------------------------------- child → worker (messages)


class ProgressMessage(Progress):
    """Sent at a generation boundary, at most 4 a second."""

    type: Literal["progress"]


class OutcomeResult(ResultFacts):
    """The ``result`` the child collected from its finished GA (``child.ga_result.collect``).  Genes,
    populations and saved data are as ``jsonable`` made them: the worker checks every value."""

    best_solution: JSON
    best_solution_generation: JSON
    population: JSON
    pareto_front: NotRequired[JSONObject]
    pareto_history: NotRequired[ParetoHistory]
    solutions: NotRequired[list[JSONObject]]
    best_solutions: NotRequired[list[JSONObject]]


class SucceededOutcome(TypedDict):
    type: Literal["outcome"]
    status: Literal["succeeded"]
    result: OutcomeResult
    engine: str
    hit_time_cap: bool
    hit_memory_cap: bool
    warnings: NotRequired[list[WarningEntry]]


class FailedOutcome(TypedDict):
    type: Literal["outcome"]
    status: Literal["failed"]
    error: RunError
    hit_time_cap: NotRequired[bool]
    hit_memory_cap: NotRequired[bool]
    engine: NotRequired[str]  # the engine path that was running, when the GA was built
    progress: NotRequired[Progress]  # how far the GA got, when it was built
    warnings: NotRequired[list[WarningEntry]]


OutcomeMessage: TypeAlias = SucceededOutcome | FailedOutcome  # the child's last message


class PopulationMessage(TypedDict):
    """A succeeded outcome's ``result.population``, sent on its own line just before the outcome
    (which then has none): written as ``POPULATION_PREFIX`` + the rows + ``}``."""

    type: Literal["population"]
    population: JSON


# the job → its relay
ChildMessage: TypeAlias = ProgressMessage | PopulationMessage | OutcomeMessage | CheckpointMessage

# --------------------------------------------------------------------------- relay → worker

LimitReason = Literal["message", "outcome", "messages"]  # too large a message, too large an outcome, too many


class LimitMessage(TypedDict):
    """The relay stopped the run: its job wrote past ``ChannelLimits``."""

    type: Literal["limit"]
    reason: LimitReason


class CollectedMessage(TypedDict):
    """The relay's last message: where its ``CollectedOutcome`` is in the store (``[offset, length]``),
    or None when the job's outcome was not valid."""

    type: Literal["outcome"]
    at: list[int] | None


RelayMessage: TypeAlias = ProgressMessage | LimitMessage | CollectedMessage | CheckpointMessage


class CollectedOutcome(TypedDict):
    """The job's outcome as its relay validated it (``child.validation.validate_outcome``), in the store
    without its result: the result's JSON (a ``ResultBody`` without ``population``, ``solutions`` and
    ``best_solutions``, its front without solutions), the population's and the staged files' are parts
    of the store, each ``[offset, length]`` under its name ("result", "population", STAGED_FILES)."""

    status: RunStatus
    error: RunError | None
    hit_time_cap: bool
    hit_memory_cap: bool
    engine: str
    warnings: list[WarningEntry]
    progress: Progress | None
    population_finite: bool  # no null in the population (it may then ride inside the report)
    parts: dict[str, list[int]]


# --------------------------------------------------------------------------- worker ⇄ fork server


class ForkRequest(TypedDict):
    """Worker → fork server, with four file descriptors: the run's output pipe, its channel (the relay's
    messages), its spec (a memfd holding its ``ChildSpec``) and its store (a memfd).  Nothing of the run
    itself: the fork server never holds a run's data, so no later fork inherits it."""

    id: int


class ForkReady(TypedDict):
    ready: Literal[True]


@final  # final: a message of ForkStarted | ForkExited is told apart by its keys
class ForkStarted(TypedDict):
    started: int  # the request's id
    pid: int


@final
class ForkExited(TypedDict):
    exited: int  # the child's pid
    status: int  # its wait status
    cpu: float  # seconds of CPU it and every process it reaped used
    maxrss_kb: int
