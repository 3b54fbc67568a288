"""HTTP surface of the GA worker (docs/runner-protocol.md): read the body, call the run manager, map
errors to answers (every body a ``wire`` type).

GET /health · GET /environment · POST /runs · GET /runs/{run_id} · POST /runs/{run_id}/cancel
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..errors import AtCapacity, InvalidRequest, UnknownRun
from ..wire import Cancelled, Health, HttpError, RunStateBody
from .environment import describe
from .run_request import parse_run_request
from .runs import RunManager

__all__ = ["VERSION", "create_app"]

VERSION = "0.1.0"
MAX_BODY = 512 * 1024 * 1024  # an inline initial_population may be large


def _error(status: int, code: str, message: str) -> JSONResponse:
    body: HttpError = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status)


def create_app(manager: RunManager, on_shutdown: list[Callable[[], object]] | None = None) -> Starlette:
    async def health(request: Request) -> JSONResponse:
        body: Health = {
            "status": "ok",
            "version": VERSION,
            "isolation": manager.isolation.health(),
            "capacity": manager.concurrency,
            "in_use": manager.in_use,
            "active_runs": manager.active_runs,
            "data_cache": manager.data_cache.health(),
            "draining": manager.draining,
        }
        return JSONResponse(body)

    listing = describe()  # the installed packages do not change while the worker lives

    async def environment(request: Request) -> JSONResponse:
        return JSONResponse(listing)

    async def start_run(request: Request) -> JSONResponse:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return _error(400, "invalid_request", "the body is too large")
        try:
            run = parse_run_request(json.loads(raw))
        except (ValueError, RecursionError):
            return _error(400, "invalid_request", "the body is not valid JSON")
        except InvalidRequest as exc:
            return _error(400, "invalid_request", str(exc))
        try:
            started, state = await run_in_threadpool(manager.start, run)
        except AtCapacity as exc:
            return _error(503, "at_capacity", str(exc))
        body: RunStateBody = {"run_id": run.run_id, "state": state}
        return JSONResponse(body, status_code=202 if started else 200)

    async def run_state(request: Request) -> JSONResponse:
        run_id = request.path_params["run_id"]
        state = manager.state(run_id)
        if state is None:
            return _error(404, "unknown_run", f"no run {run_id}")
        body: RunStateBody = {"run_id": run_id, "state": state}
        return JSONResponse(body)

    async def cancel_run(request: Request) -> JSONResponse:
        run_id = request.path_params["run_id"]
        try:
            metrics = await run_in_threadpool(manager.cancel, run_id)
        except UnknownRun:
            return _error(404, "unknown_run", f"no live run {run_id}")
        body: Cancelled = {"run_id": run_id, "metrics": metrics}
        return JSONResponse(body)

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(404, "not_found", "no such route")

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "internal_error", "the worker failed to answer")

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/environment", environment, methods=["GET"]),
            Route("/runs", start_run, methods=["POST"]),
            Route("/runs/{run_id}", run_state, methods=["GET"]),
            Route("/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
        ],
        exception_handlers={404: not_found, 500: internal},
        lifespan=_lifespan(on_shutdown or []),
    )


def _lifespan(on_shutdown: list[Callable[[], object]]) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for hook in on_shutdown:
            hook()

    return lifespan
