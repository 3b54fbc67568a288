"""HTTP surface of the GA worker (docs/runner-protocol.md): parse, call the run manager, map errors.

GET /health · POST /runs · POST /runs/{run_id}/cancel
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..errors import AtCapacity, InvalidRequest, UnknownRun
from .runs import RunManager, RunRequest, check_population

__all__ = ["VERSION", "create_app", "parse_run_request"]

VERSION = "0.1.0"
ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
MAX_BODY = 512 * 1024 * 1024  # an inline initial_population may be large


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_run_request(body: Any) -> RunRequest:
    """A ``POST /runs`` body → ``RunRequest``; ``InvalidRequest`` names the first problem."""
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object")
    for key in ("run_id", "submission_id"):
        if not isinstance(body.get(key), str) or not ID.match(body[key]):
            raise InvalidRequest(f"{key} must be an id of letters and digits")
    params = body.get("params")
    if not isinstance(params, dict):
        raise InvalidRequest("params must be an object")
    for key in ("num_generations", "sol_per_pop", "num_genes", "num_parents_mating"):
        value = params.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidRequest(f"params.{key} must be a positive integer")
    if not isinstance(params.get("fitness_func"), str) or not isinstance(params.get("fitness_func_entry"), str):
        raise InvalidRequest("params.fitness_func and params.fitness_func_entry must be strings")
    population = body.get("initial_population")
    if population is not None:
        check_population(population)
    population_url = body.get("initial_population_url")
    if population_url is not None and (
        not isinstance(population_url, str) or not population_url.startswith(("http://", "https://"))
    ):
        raise InvalidRequest("initial_population_url must be null or an http(s) url")
    caps = body.get("caps")
    if (
        not isinstance(caps, dict)
        or not _number(caps.get("time_seconds"))
        or caps["time_seconds"] <= 0
        or not _number(caps.get("memory_mb"))
        or caps["memory_mb"] <= 0
    ):
        raise InvalidRequest("caps must hold positive time_seconds and memory_mb")
    report = body.get("report")
    if (
        not isinstance(report, dict)
        or not isinstance(report.get("url"), str)
        or not report["url"].startswith(("http://", "https://"))
        or not isinstance(report.get("token"), str)
        or not report["token"]
    ):
        raise InvalidRequest("report must hold an http(s) url and a token")
    return RunRequest(
        run_id=body["run_id"],
        submission_id=body["submission_id"],
        params=params,
        initial_population=population,
        time_seconds=float(caps["time_seconds"]),
        memory_mb=int(caps["memory_mb"]),
        report_url=report["url"],
        report_token=report["token"],
        initial_population_url=population_url,
    )


def create_app(manager: RunManager, on_shutdown: list[Any] | None = None) -> Starlette:
    async def health(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "status": "ok",
                "version": VERSION,
                "isolation": manager.isolation.health(),
                "capacity": manager.concurrency,
                "in_use": manager.in_use,
                "active_runs": manager.active_runs,
            }
        )

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
        return JSONResponse({"run_id": run.run_id, "state": state}, status_code=202 if started else 200)

    async def run_state(request: Request) -> JSONResponse:
        run_id = request.path_params["run_id"]
        state = manager.state(run_id)
        if state is None:
            return _error(404, "unknown_run", f"no run {run_id}")
        return JSONResponse({"run_id": run_id, "state": state})

    async def cancel_run(request: Request) -> JSONResponse:
        run_id = request.path_params["run_id"]
        try:
            metrics = await run_in_threadpool(manager.cancel, run_id)
        except UnknownRun:
            return _error(404, "unknown_run", f"no live run {run_id}")
        return JSONResponse({"run_id": run_id, "metrics": metrics})

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(404, "not_found", "no such route")

    async def internal(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "internal_error", "the worker failed to answer")

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/runs", start_run, methods=["POST"]),
            Route("/runs/{run_id}", run_state, methods=["GET"]),
            Route("/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
        ],
        exception_handlers={404: not_found, 500: internal},
        lifespan=_lifespan(on_shutdown or []),
    )


def _lifespan(on_shutdown: list[Any]) -> Any:
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        for hook in on_shutdown:
            hook()

    return lifespan
