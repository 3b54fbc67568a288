"""Durable runs through the real worker and sandboxed children (docs/architecture.md, "Durable runs"):
checkpoints streamed unread to ``PUT …/checkpoint`` with the run's usage, a drain that checkpoints at the
next generation boundary and hands the run back (``POST …/suspend``), a resume from the fetched
checkpoint ending exactly as the uninterrupted run, and a run's forged checkpoint messages refused."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from conftest import params

from allele_worker.worker.run_request import parse_run_request
from allele_worker.worker.runs import RunManager

pytestmark = pytest.mark.slow

SLOW = (
    "import time\nimport numpy\ndef fitness(ga, s, i):\n    time.sleep(0.004)\n    return -float(numpy.sum(s ** 2))\n"
)


class Receiver:
    """The Worker's report endpoints: records every request with its raw body; serves ``checkpoint``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.checkpoint: bytes | None = None
        self.lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with receiver.lock:
                    receiver.requests.append(
                        {"method": self.command, "path": self.path, "body": body, "headers": dict(self.headers)}
                    )
                    receiver.lock.notify_all()
                if self.command == "GET" and self.path.endswith("/checkpoint") and receiver.checkpoint is not None:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(receiver.checkpoint)))
                    self.end_headers()
                    self.wfile.write(receiver.checkpoint)
                    return
                self.send_response(404 if self.command == "GET" else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, run_id: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/{run_id}"

    def of(self, run_id: str, suffix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"] == f"/{run_id}/{suffix}"]

    def wait(self, run_id: str, suffix: str, timeout: float = 120) -> dict[str, Any]:
        with self.lock:
            assert self.lock.wait_for(lambda: bool(self.of(run_id, suffix)), timeout), (run_id, suffix)
            return self.of(run_id, suffix)[-1]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.server.shutdown()


def _body(receiver: Receiver, run_id: str, job: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "submission_id": "subDURABLE01",
        "params": job,
        "caps": {"time_seconds": 600, "memory_mb": 1024},
        "report": {"url": receiver.url(run_id), "token": "t"},
        "checkpoint": {"interval_seconds": 0.3, "max_bytes": 1 << 26},
        **extra,
    }


def test_a_drained_run_hands_back_its_checkpoint_and_resumes_exactly(host, tmp_path, receiver):
    job = params(
        num_generations=150, sol_per_pop=20, num_genes=5, num_parents_mating=6, random_seed=42, fitness_func=SLOW
    )
    manager = RunManager(host=host, run_root=str(tmp_path))
    try:
        manager.start(parse_run_request(_body(receiver, "runPLAIN0001", job)))
        plain = json.loads(receiver.wait("runPLAIN0001", "complete")["body"])
        assert plain["status"] == "succeeded", plain
        # Checkpoints of a running run: streamed with the generation and the usage so far.
        uploads = receiver.of("runPLAIN0001", "checkpoint")
        assert uploads and all(int(u["headers"]["X-Allele-Generation"]) > 0 for u in uploads)
        assert all("X-Allele-Cpu-Seconds" in u["headers"] for u in uploads)

        manager.start(parse_run_request(_body(receiver, "runDRAIN0001", job)))
        receiver.wait("runDRAIN0001", "checkpoint")
        time.sleep(1.0)
        manager.drain(30)
        suspend = json.loads(receiver.wait("runDRAIN0001", "suspend", 5)["body"])
        assert suspend["checkpointed"] is True and suspend["metrics"]["cpu_seconds_used"] > 0
        assert not receiver.of("runDRAIN0001", "complete")
        last = receiver.of("runDRAIN0001", "checkpoint")[-1]
        assert manager.active_runs == 0
    finally:
        manager.wait_idle()
    # Another worker goes on from the checkpoint it was handed: exactly the uninterrupted result.
    receiver.checkpoint = last["body"]
    manager = RunManager(host=host, run_root=str(tmp_path))
    try:
        resumed_id = "runDRAIN0001"
        receiver.requests.clear()
        url = receiver.url(resumed_id) + "/checkpoint"
        manager.start(parse_run_request(_body(receiver, resumed_id, job, checkpoint_url=url)))
        resumed = json.loads(receiver.wait(resumed_id, "complete")["body"])
    finally:
        manager.wait_idle()
    assert resumed["status"] == "succeeded", resumed
    assert resumed["result"] == plain["result"]
    assert resumed["engine"] == plain["engine"]


FORGER = """
import os, json
def fitness(ga, solution, idx):
    if ga.generations_completed == 2 and idx == 0:
        huge = {"type": "checkpoint", "generation": 3, "slot": 0, "bytes": 1 << 40}
        nowhere = {"type": "checkpoint", "generation": 3, "slot": 7, "bytes": 10}
        for fd in range(3, 64):
            try:
                os.write(fd, (json.dumps(huge) + "\\n").encode())
                os.write(fd, (json.dumps(nowhere) + "\\n").encode())
            except OSError:
                pass
    return -float((solution ** 2).sum())
"""


def test_forged_checkpoint_messages_past_the_cap_or_slots_are_dropped(host, tmp_path, receiver):
    job = params(num_generations=6, random_seed=1, fitness_func=FORGER)
    manager = RunManager(host=host, run_root=str(tmp_path))
    try:
        manager.start(parse_run_request(_body(receiver, "runFORGE0001", job)))
        done = json.loads(receiver.wait("runFORGE0001", "complete")["body"])
    finally:
        manager.wait_idle()
    assert done["status"] == "succeeded", done
    for upload in receiver.of("runFORGE0001", "checkpoint"):
        assert len(upload["body"]) <= 1 << 26
