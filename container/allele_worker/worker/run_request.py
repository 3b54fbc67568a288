"""A ``POST /runs`` body (``wire.RunRequestBody``, docs/runner-protocol.md) checked into the worker's
``RunRequest``, and the check of an inline start population (a fetched one is checked by the job)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from ..errors import InvalidRequest
from ..wire import (
    MAX_DATA_FILES,
    ChildJob,
    DataFileRef,
    GaParams,
    Population,
    RunCheckpoint,
    RunRequestBody,
    is_count,
    is_finite_number,
    population_problem,
)

__all__ = [
    "RunRequest",
    "check_data_files",
    "check_population",
    "check_run_request",
    "data_file_name_ok",
    "parse_run_request",
]

ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_NAME_BYTES = 128


def data_file_name_ok(name: object) -> bool:
    """Whether ``name`` may be /data/<name> (the Worker's rule, src/domain/data-files.ts, checked again
    here: a name never leaves /data): 1..128 bytes of UTF-8, no ``/`` or ``\\``, no control character,
    not ``.`` or ``..``."""
    if not isinstance(name, str) or name in (".", "..") or "/" in name or "\\" in name or CONTROL.search(name):
        return False
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return 0 < size <= MAX_NAME_BYTES


def check_data_files(files: object, scope: object) -> list[DataFileRef]:
    """A run's ``data_files`` (and its ``data_scope`` when it has any): at most MAX_DATA_FILES, each a
    name for /data, a sha256, a size and an http(s) url; names distinct."""
    if files is None:
        return []
    if not isinstance(files, list) or len(files) > MAX_DATA_FILES:
        raise InvalidRequest(f"data_files must be a list of at most {MAX_DATA_FILES} files")
    checked: list[DataFileRef] = []
    for index, item in enumerate(files):
        if (
            not isinstance(item, dict)
            or not data_file_name_ok(item.get("name"))
            or not isinstance(item.get("sha256"), str)
            or not SHA256.match(item["sha256"])
            or not is_count(item.get("size_bytes"))
            or not _http_url(item.get("url"))
        ):
            raise InvalidRequest(
                f"data_files[{index}] must hold a name for /data, a sha256, a size_bytes and an http(s) url"
            )
        checked.append(
            {"name": item["name"], "sha256": item["sha256"], "size_bytes": item["size_bytes"], "url": item["url"]}
        )
    if len({f["name"] for f in checked}) != len(checked):
        raise InvalidRequest("data_files must have distinct names")
    if checked and (not isinstance(scope, str) or not ID.match(scope)):
        raise InvalidRequest("data_scope must be an id of letters and digits")
    return checked


def check_population(population: object, name: str = "initial_population") -> Population:
    """An inline start population (``wire.population_problem``), else ``InvalidRequest``."""
    problem = population_problem(population, name)
    if problem is not None:
        raise InvalidRequest(problem)
    return cast(Population, population)


def _http_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def check_run_request(body: object) -> RunRequestBody:
    """``body`` as a ``RunRequestBody`` once it has the protocol's shape; ``InvalidRequest`` names the
    first problem.  ``params`` are checked only as far as the worker reads them (the Worker validated
    them; the child compiles and PyGAD checks the rest)."""
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object")
    for key in ("run_id", "submission_id"):
        if not isinstance(body.get(key), str) or not ID.match(body[key]):
            raise InvalidRequest(f"{key} must be an id of letters and digits")
    params = body.get("params")
    if not isinstance(params, dict):
        raise InvalidRequest("params must be an object")
    for key in ("num_generations", "sol_per_pop", "num_genes", "num_parents_mating"):
        if not is_count(params.get(key), 1):
            raise InvalidRequest(f"params.{key} must be a positive integer")
    if not isinstance(params.get("fitness_func"), str) or not isinstance(params.get("fitness_func_entry"), str):
        raise InvalidRequest("params.fitness_func and params.fitness_func_entry must be strings")
    population = body.get("initial_population")
    if population is not None:
        check_population(population)
    population_url = body.get("initial_population_url")
    if population_url is not None and not _http_url(population_url):
        raise InvalidRequest("initial_population_url must be null or an http(s) url")
    caps = body.get("caps")
    if (
        not isinstance(caps, dict)
        or not is_finite_number(caps.get("time_seconds"))
        or caps["time_seconds"] <= 0
        or not is_finite_number(caps.get("memory_mb"))
        or caps["memory_mb"] <= 0
    ):
        raise InvalidRequest("caps must hold positive time_seconds and memory_mb")
    data_files = check_data_files(body.get("data_files"), body.get("data_scope"))
    checkpoint = body.get("checkpoint")
    if checkpoint is not None and (
        not isinstance(checkpoint, dict)
        or not is_finite_number(checkpoint.get("interval_seconds"))
        or checkpoint["interval_seconds"] <= 0
        or not is_count(checkpoint.get("max_bytes"), 1)
    ):
        raise InvalidRequest("checkpoint must be null or hold a positive interval_seconds and max_bytes")
    checkpoint_url = body.get("checkpoint_url")
    if checkpoint_url is not None and (not _http_url(checkpoint_url) or checkpoint is None):
        raise InvalidRequest("checkpoint_url must be null or an http(s) url (with checkpoint)")
    report = body.get("report")
    if (
        not isinstance(report, dict)
        or not _http_url(report.get("url"))
        or not isinstance(report.get("token"), str)
        or not report["token"]
    ):
        raise InvalidRequest("report must hold an http(s) url and a token")
    return {
        "run_id": body["run_id"],
        "submission_id": body["submission_id"],
        "params": params,
        "initial_population": population,
        "initial_population_url": population_url,
        "data_files": data_files,
        "data_scope": body.get("data_scope") or "",
        "caps": {"time_seconds": caps["time_seconds"], "memory_mb": caps["memory_mb"]},
        "report": {"url": report["url"], "token": report["token"]},
        "checkpoint": (
            {"interval_seconds": float(checkpoint["interval_seconds"]), "max_bytes": checkpoint["max_bytes"]}
            if checkpoint is not None
            else None
        ),
        "checkpoint_url": checkpoint_url,
    }


@dataclass(frozen=True)
class RunRequest:
    """A checked ``POST /runs`` body, as the worker keeps it."""

    run_id: str
    submission_id: str
    params: GaParams
    initial_population: Population | None
    time_seconds: float
    memory_mb: int
    report_url: str
    report_token: str
    initial_population_url: str | None = None  # fetched by the parent when no inline population
    data_files: tuple[DataFileRef, ...] = ()  # fetched (or found cached) by the parent, bound at /data/<name>
    data_scope: str = ""  # the account whose bytes they are (the cache keeps accounts apart)
    checkpoint: RunCheckpoint | None = None  # a durable run's checkpoint interval and cap
    checkpoint_url: str | None = None  # the checkpoint to resume from, fetched by the parent

    @classmethod
    def from_body(cls, body: RunRequestBody) -> RunRequest:
        return cls(
            run_id=body["run_id"],
            submission_id=body["submission_id"],
            params=body["params"],
            initial_population=body.get("initial_population"),
            time_seconds=float(body["caps"]["time_seconds"]),
            memory_mb=int(body["caps"]["memory_mb"]),
            report_url=body["report"]["url"],
            report_token=body["report"]["token"],
            initial_population_url=body.get("initial_population_url"),
            data_files=tuple(body.get("data_files") or ()),
            data_scope=body.get("data_scope") or "",
            checkpoint=body.get("checkpoint"),
            checkpoint_url=body.get("checkpoint_url"),
        )

    @property
    def workers(self) -> int:
        """Fitness evaluations at once (``parallel_processing``: ``N``, ``[mode, N]``; else 1): the
        places (CPUs) the run takes, docs/runner-protocol.md#places."""
        value = self.params.get("parallel_processing")
        count = value[1] if isinstance(value, list) and len(value) == 2 else value
        return count if is_count(count, 2) else 1

    def child_job(self, population_bytes: int | None = None, resume_bytes: int | None = None) -> ChildJob:
        """What the child receives: no report URL, no token (a fetched start population,
        ``population_bytes`` long, follows its spec unread; the checkpoint to resume from is
        ``resume_bytes`` long in the child's first checkpoint slot: both fetched already)."""
        job: ChildJob = {
            "run_id": self.run_id,
            "params": self.params,
            "initial_population": self.initial_population,
            "caps": {"time_seconds": self.time_seconds, "memory_mb": self.memory_mb},
        }
        if population_bytes is not None:
            job["initial_population_bytes"] = population_bytes
        if self.checkpoint is not None:
            job["checkpoint"] = {**self.checkpoint, "resume_bytes": resume_bytes}
        return job


def parse_run_request(body: object) -> RunRequest:
    """A ``POST /runs`` body → ``RunRequest``; ``InvalidRequest`` names the first problem."""
    return RunRequest.from_body(check_run_request(body))
