"""Shared fixtures: the real sandbox (probed once), a helper that runs one job in a real child,
and a tiny HTTP server standing in for the Worker's report endpoints."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from allele_worker import sandbox
from allele_worker.worker import completion

CONTAINER = Path(__file__).resolve().parent.parent

IS_ROOT = os.geteuid() == 0


@pytest.fixture(scope="session")
def host() -> Iterator[sandbox.Host]:
    """This test session's sandbox host: its own uid block (so a worker running on the same machine
    is never touched), the machine's cgroups, the real startup probe."""
    host = sandbox.Host.setup()
    yield host
    host.close()


@pytest.fixture(scope="session")
def isolation(host: sandbox.Host) -> sandbox.Isolation:
    return host.isolation


def params(**overrides: Any) -> dict[str, Any]:
    base = {
        "num_generations": 10,
        "sol_per_pop": 8,
        "num_parents_mating": 4,
        "num_genes": 3,
        "fitness_func": "def fitness(ga, solution, idx):\n    return -float((solution ** 2).sum())\n",
        "fitness_func_entry": "fitness",
    }
    base.update(overrides)
    return base


def live_children(parent: int | None = None) -> set[int]:
    """The live (not zombie) child processes of ``parent``, this process by default."""
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            state, parent_pid = stat[stat.rindex(")") + 2 :].split()[:2]
            if int(parent_pid) == parent and state != "Z":
                found.add(int(entry))
    return found


def run_child(
    host: sandbox.Host,
    job_params: dict[str, Any],
    *,
    time_seconds: float = 20,
    memory_mb: int = 512,
    initial_population: list | None = None,
    on_start: Callable[[sandbox.SandboxedProcess], None] | None = None,
    places: int = 1,
    **limit_overrides: Any,
) -> tuple[dict[str, Any], sandbox.ProcessReport]:
    """Run one job in a real sandboxed child (forked from the fork server the worker would pick); return
    (complete-report body, process report)."""
    limits = sandbox.Limits.from_caps(time_seconds=time_seconds, memory_mb=memory_mb, places=places, **limit_overrides)
    workdir = tempfile.mkdtemp(prefix="allele-test-")
    spec = {
        "params": job_params,
        "initial_population": initial_population,
        "caps": {"time_seconds": time_seconds, "memory_mb": memory_mb},
    }
    progress: list[dict[str, Any]] = []
    uid = host.take_uid()
    process = sandbox.SandboxedProcess(
        job=spec,
        limits=limits,
        isolation=host.isolation,
        workdir=workdir,
        uid=uid,
        cgroups=host.cgroups,
        forks=host.forks_for(spec),
        group_name=host.group_name(uid, os.path.basename(workdir)),
        on_progress=progress.append,
        places=places,
    )
    try:
        process.start()
        if on_start is not None:
            on_start(process)
        report = process.wait()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        host.give_uid(uid)
    try:
        body = materialize(completion.fold(report, limits))
    finally:
        if report.store is not None:
            report.store.close()
    body["_progress"] = progress
    return body, report


def materialize(done: completion.Completion) -> dict[str, Any]:
    """A completion as one dict, the way the Worker reads it: the result parsed from the run's store
    with its population in it, and the staged files (``_files``, their bytes)."""
    body: dict[str, Any] = dict(done.body)
    if done.result is not None:
        result = json.loads(done.result.read())
        if done.population is not None:
            result["population"] = json.loads(done.population.read())
        body["result"] = result
    body["_files"] = {name: part.read() for name, part in done.files.items()}
    return body


class FakeWorker:
    """Records every request; POST/PUT answer ``status_for[path suffix]`` if set, else the status
    queued in ``answers`` (default 204); GET serves ``served[path]`` (a JSON value, or an int
    status) and 404 for any other path."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.served: dict[str, Any] = {}
        self.status_for: dict[str, int] = {}
        self.event = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self, body: Any) -> None:
                fake.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "body": body,
                        "authorization": self.headers.get("Authorization"),
                        "content_type": self.headers.get("Content-Type"),
                        "content_length": self.headers.get("Content-Length"),
                    }
                )
                fake.event.notify_all()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                data = self.rfile.read(length)
                body = data.decode() if self.headers.get("Content-Type") == "text/csv" else json.loads(data or b"null")
                with fake.event:
                    status = next(
                        (code for suffix, code in fake.status_for.items() if self.path.endswith(suffix)), None
                    )
                    if status is None:
                        status = fake.answers.pop(0) if fake.answers else 204
                    self._record(body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_POST

            def do_GET(self) -> None:
                with fake.event:
                    served = fake.served.get(self.path, 404)
                    self._record(None)
                if isinstance(served, int):
                    self.send_response(served)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = json.dumps(served).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def paths(self) -> list[str]:
        with self.event:
            return [r["path"] for r in self.requests]

    def wait_for(self, suffix: str, timeout: float = 30.0) -> dict[str, Any]:
        with self.event:
            ok = self.event.wait_for(lambda: any(r["path"].endswith(suffix) for r in self.requests), timeout)
            assert ok, f"no {suffix} report within {timeout} s: {self.paths()}"
            return next(r for r in self.requests if r["path"].endswith(suffix))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_worker():
    worker = FakeWorker()
    yield worker
    worker.close()
