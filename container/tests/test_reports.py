"""reports.py against a fake Worker: bearer token, retries on 5xx, stop on 4xx."""

from __future__ import annotations

import time

from reports import Reporter


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
    reporter = Reporter("http://127.0.0.1:9", "tok", first_delay=0.05, retry_for_seconds=0.3,
                        timeout=0.2)
    started = time.monotonic()
    assert reporter.complete({}) is None
    assert time.monotonic() - started < 2


def test_progress_failure_ignored():
    Reporter("http://127.0.0.1:9", "tok", timeout=0.2).progress({"generations_completed": 1})


def test_backoff_doubles_and_caps(fake_worker):
    fake_worker.answers = [502] * 4
    reporter = Reporter(fake_worker.url, "tok", first_delay=0.02, max_delay=0.04)
    started = time.monotonic()
    assert reporter.complete({}) == 204
    assert 0.02 + 0.04 * 3 - 0.01 <= time.monotonic() - started < 1.5
