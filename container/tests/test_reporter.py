"""worker/reporter.py against a fake Worker: bearer token, retries on 5xx, stop on 4xx; the population upload
and the start-population fetch."""

from __future__ import annotations

import json
import os
import ssl
import time

import httpx
import pytest

from allele_worker.worker.reporter import Reporter, tls_context


def test_complete_retries_5xx_then_succeeds(fake_worker):
    fake_worker.answers = [503, 500, 204]
    reporter = Reporter(f"{fake_worker.url}/internal/v1/runs/abc", "tok", first_delay=0.05)
    assert reporter.complete({"status": "succeeded"}) == 204
    assert fake_worker.paths() == ["/internal/v1/runs/abc/complete"] * 3
    assert fake_worker.requests[0]["authorization"] == "Bearer tok"


def test_complete_stops_on_4xx(fake_worker):
    fake_worker.answers = [409, 204]
    reporter = Reporter(fake_worker.url, "tok", first_delay=0.05)
    assert reporter.complete({"status": "failed"}) == 409
    assert len(fake_worker.requests) == 1


def test_complete_gives_up_after_its_window():
    reporter = Reporter("http://127.0.0.1:9", "tok", first_delay=0.05, retry_for_seconds=0.3, timeout=0.2)
    started = time.monotonic()
    assert reporter.complete({}) is None
    assert time.monotonic() - started < 2


def test_reporters_share_one_tls_context(monkeypatch):
    """Each run's reporter reuses the worker's one TLS context: no run loads the CA bundle again
    (≈ 20 ms of CPU per run before its first report when every client built its own)."""
    tls_context()  # built once, when the run manager is created
    loaded: list[object] = []
    real = ssl.SSLContext.load_verify_locations
    monkeypatch.setattr(
        ssl.SSLContext,
        "load_verify_locations",
        lambda self, *args, **kwargs: loaded.append(args) or real(self, *args, **kwargs),
    )
    for run in range(3):
        Reporter(f"https://worker.example/internal/v1/runs/run{run}", "tok").close()
    assert loaded == []
    httpx.Client().close()  # what a reporter did before: a CA bundle per client
    assert len(loaded) == 1


def test_progress_failure_ignored():
    Reporter("http://127.0.0.1:9", "tok", timeout=0.2).progress({"generations_completed": 1})


def test_backoff_doubles_and_caps(fake_worker):
    fake_worker.answers = [502] * 4
    reporter = Reporter(fake_worker.url, "tok", first_delay=0.02, max_delay=0.04)
    started = time.monotonic()
    assert reporter.complete({}) == 204
    assert 0.02 + 0.04 * 3 - 0.01 <= time.monotonic() - started < 1.5


def test_population_upload_retries_like_complete(fake_worker):
    fake_worker.answers = [503, 204]
    reporter = Reporter(f"{fake_worker.url}/internal/v1/runs/abc", "tok", first_delay=0.05)
    assert reporter.upload_population([[1.0, float("inf")], [float("nan"), 2]]) == 204
    assert fake_worker.paths() == ["/internal/v1/runs/abc/population"] * 2
    upload = fake_worker.requests[-1]
    assert upload["method"] == "PUT" and upload["authorization"] == "Bearer tok"
    assert upload["content_type"] == "application/json"
    assert upload["body"] == [[1.0, None], [None, 2]]
    assert int(upload["content_length"]) == len(b"[[1.0,null],[null,2]]")


def test_population_upload_stops_on_4xx_and_on_cancel(fake_worker):
    fake_worker.answers = [409, 204]
    reporter = Reporter(fake_worker.url, "tok", first_delay=0.05)
    assert reporter.upload_population([[1.0]]) == 409
    assert len(fake_worker.requests) == 1
    reporter.stopped.set()
    assert reporter.upload_population([[1.0]]) is None
    assert reporter.complete({}) is None
    assert len(fake_worker.requests) == 1


def _transport(answers: list):
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, int):
            return httpx.Response(answer)
        return httpx.Response(200, content=json.dumps(answer).encode())

    return httpx.MockTransport(handle), seen


def _fetched(fd: int, size: int) -> bytes:
    return os.pread(fd, size, 0)


def test_fetch_population_retries_5xx_and_connection_errors():
    transport, seen = _transport([503, httpx.ConnectError("down"), [[1.5, 2.5]]])
    reporter = Reporter("http://w/r", "tok", first_delay=0.01, transport=transport)
    fd = os.memfd_create("test")
    try:
        size = reporter.fetch_population("http://w/r/initial-population", fd, 1000)
        assert _fetched(fd, size) == b"[[1.5, 2.5]]"
    finally:
        os.close(fd)
    assert len(seen) == 3 and all(r.method == "GET" for r in seen)
    assert seen[0].headers["authorization"] == "Bearer tok"


def test_fetch_population_leaves_it_unread():
    """The worker never parses a start population (the job does, under the run's caps): bytes that
    are no JSON at all are fetched as they are."""
    answer = b'[[1, 2]]], "sandbox": null, "x": [[1'
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=answer))
    reporter = Reporter("http://w/r", "tok", transport=transport)
    fd = os.memfd_create("test")
    try:
        assert _fetched(fd, reporter.fetch_population("http://w/r/initial-population", fd, 1000)) == answer
    finally:
        os.close(fd)


@pytest.mark.parametrize("answers", [[404], [503] * 50, [b"x" * 101]], ids=["4xx", "gives-up", "past-the-cap"])
def test_fetch_population_failures(answers):
    answers = [httpx.Response(200, content=a) if isinstance(a, bytes) else a for a in answers]

    def handle(request: httpx.Request) -> httpx.Response:
        answer = answers.pop(0)
        return answer if isinstance(answer, httpx.Response) else httpx.Response(answer)

    reporter = Reporter(
        "http://w/r",
        "tok",
        first_delay=0.01,
        max_delay=0.02,
        fetch_for_seconds=0.1,
        transport=httpx.MockTransport(handle),
    )
    fd = os.memfd_create("test")
    try:
        with pytest.raises(LookupError):
            reporter.fetch_population("http://w/r/initial-population", fd, 100)
    finally:
        os.close(fd)


def test_fetch_population_cancelled():
    reporter = Reporter("http://w/r", "tok", transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    reporter.stopped.set()
    fd = os.memfd_create("test")
    try:
        assert reporter.fetch_population("http://w/r/initial-population", fd, 100) == 0
    finally:
        os.close(fd)
