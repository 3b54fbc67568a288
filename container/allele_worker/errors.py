"""Exceptions of the Allele GA worker.

The tree, so callers catch at the level they need::

    WorkerError                     base of everything raised on purpose here
    ├── InvalidRequest              a POST /runs body does not match the protocol shape (HTTP 400)
    ├── UnknownRun                  no live run has this id (HTTP 404)
    ├── AtCapacity                  every place of this worker is taken (HTTP 503 at_capacity)
    └── RunFailure                  the run itself failed; ``code`` is the protocol's error.code
        ├── UserCodeError           code_error: does not compile, entry missing or wrong kind, raised
        ├── LimitExceeded
        │   ├── MemoryLimitExceeded     memory_limit_exceeded (time limits are folded from process facts)
        │   └── ResourceLimitExceeded   resource_limit_exceeded (processes, file size, open files, flood)
        └── InternalError           internal_error

``RunFailure`` subclasses are raised inside the child process (``child/jobs.py``) and turned into the
outcome message it sends to the parent; the parent folds process facts into the same codes in
``worker/completion.py``.  Messages must never contain worker-internal paths or frames.
"""

from __future__ import annotations

from .wire import ErrorCode, RunError

__all__ = [
    "AtCapacity",
    "InternalError",
    "InvalidRequest",
    "LimitExceeded",
    "MemoryLimitExceeded",
    "ResourceLimitExceeded",
    "RunFailure",
    "UnknownRun",
    "UserCodeError",
    "WorkerError",
]


class WorkerError(Exception):
    """Base class of the worker's own exceptions."""


class InvalidRequest(WorkerError):
    """The request body does not match the protocol."""


class UnknownRun(WorkerError):
    """No live run has this id."""


class AtCapacity(WorkerError):
    """Every place (WORKER_CONCURRENCY) is taken: the run is not started."""


class RunFailure(WorkerError):
    """A run ends ``failed``; ``code`` is the protocol's ``error.code``."""

    code: ErrorCode = "internal_error"
    engine: str | None = None  # the engine path that was running, when known
    compile_stage = False  # the user's code did not compile: none of it ran (``RunError.stage``)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def as_error(self) -> RunError:
        error: RunError = {"code": self.code, "message": self.message}
        if self.compile_stage:
            error["stage"] = "compile"
        return error

    def with_engine(self, engine: str) -> RunFailure:
        self.engine = engine
        return self


class UserCodeError(RunFailure):
    code: ErrorCode = "code_error"


class LimitExceeded(RunFailure):
    code: ErrorCode = "resource_limit_exceeded"


class MemoryLimitExceeded(LimitExceeded):
    code: ErrorCode = "memory_limit_exceeded"


class ResourceLimitExceeded(LimitExceeded):
    code: ErrorCode = "resource_limit_exceeded"


class InternalError(RunFailure):
    code: ErrorCode = "internal_error"
