"""The data cache (worker/data_cache.py, docs/runner-protocol.md#data-files): one download however many
runs want a file at once, bytes checked before they are kept, least recently used files evicted past the
bound but never one a run holds, accounts kept apart; and the reporter's streamed fetch it uses."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from pathlib import Path
from typing import BinaryIO

import pytest

from allele_worker.wire import DataFileRef
from allele_worker.worker.data_cache import DataCache, DataFileRefused, DataFileUnavailable
from allele_worker.worker.reporter import Reporter

SCOPE = "acct12345678"


def ref(content: bytes, name: str = "jobs.csv", url: str = "http://worker/f") -> DataFileRef:
    return {"name": name, "sha256": hashlib.sha256(content).hexdigest(), "size_bytes": len(content), "url": url}


class Source:
    """A fetch serving ``content`` (or ``served`` when the bytes should differ), counting its calls;
    ``gate`` holds every fetch until it is set."""

    def __init__(self, content: bytes, served: bytes | None = None) -> None:
        self.content, self.served = content, content if served is None else served
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()
        self.fail_next: BaseException | None = None
        self.lock = threading.Lock()

    def __call__(self, url: str, sink: BinaryIO, max_bytes: int) -> bool:
        with self.lock:
            self.calls += 1
            failure, self.fail_next = self.fail_next, None
        self.gate.wait(10)
        if failure is not None:
            if isinstance(failure, StopIteration):
                return False  # a cancel
            raise failure
        sink.write(self.served[: max_bytes + 1])
        return True


def test_a_file_is_fetched_once_and_kept_checked_with_the_runs_permissions(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    content = b"job,duration\na,3\n"
    source = Source(content)
    path = cache.acquire(SCOPE, ref(content), source)
    assert Path(path).read_bytes() == content
    assert cache.acquire(SCOPE, ref(content), source) == path
    assert source.calls == 1
    assert cache.health() == {
        "files": 1,
        "bytes": len(content),
        "max_bytes": 10_000,
        "downloads": 1,
        "hits": 1,
        "evictions": 0,
    }
    # The worker's own directories; the file readable by a run's uid (through its read-only bind), written by no one.
    for folder in (tmp_path / "cache", tmp_path / "cache" / "objects", tmp_path / "cache" / "objects" / SCOPE):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert os.listdir(tmp_path / "cache" / "tmp") == []


def test_concurrent_runs_wanting_one_file_download_it_once(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    content = b"x" * 5000
    source = Source(content)
    source.gate.clear()  # the first fetch waits until every run has asked
    paths: list[str] = []
    threads = [
        threading.Thread(target=lambda: paths.append(cache.acquire(SCOPE, ref(content), source))) for _ in range(10)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while source.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # the others are now waiting on the first
    source.gate.set()
    for thread in threads:
        thread.join(10)
    assert source.calls == 1
    assert len(paths) == 10 and len(set(paths)) == 1
    assert cache.held(SCOPE, ref(content)["sha256"]) == 10
    assert cache.health()["downloads"] == 1 and cache.health()["hits"] == 9


def test_bytes_that_are_not_the_file_are_refused_and_never_kept(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    content = b"the real file\n"
    for served in (b"a forged file\n", content + b"more", content[:-1]):
        with pytest.raises(DataFileRefused):
            cache.acquire(SCOPE, ref(content), Source(content, served))
    assert cache.health()["files"] == 0 and cache.health()["downloads"] == 0
    assert not os.path.exists(cache.path(SCOPE, ref(content)["sha256"]))
    assert os.listdir(tmp_path / "cache" / "tmp") == []
    # The real bytes later are kept.
    assert Path(cache.acquire(SCOPE, ref(content), Source(content))).read_bytes() == content


def test_runs_waiting_on_a_refused_download_are_refused_too(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    content = b"real\n"
    source = Source(content, b"fake\n")
    source.gate.clear()
    outcomes: list[str] = []

    def want() -> None:
        try:
            cache.acquire(SCOPE, ref(content), source)
            outcomes.append("ok")
        except DataFileRefused:
            outcomes.append("refused")

    threads = [threading.Thread(target=want) for _ in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    source.gate.set()
    for thread in threads:
        thread.join(10)
    assert outcomes == ["refused"] * 3 and source.calls == 1


def test_a_run_waiting_on_a_cancelled_download_fetches_the_file_itself(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    content = b"data\n"
    source = Source(content)
    source.gate.clear()
    source.fail_next = StopIteration()  # the first run's fetch is stopped by its cancel
    results: list[object] = []

    def want() -> None:
        try:
            results.append(cache.acquire(SCOPE, ref(content), source))
        except DataFileUnavailable as exc:
            results.append(exc)

    first = threading.Thread(target=want)
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=want)
    second.start()
    time.sleep(0.1)
    source.gate.set()
    first.join(10)
    second.join(10)
    assert isinstance(results[0], DataFileUnavailable)
    assert isinstance(results[1], str) and Path(results[1]).read_bytes() == content
    assert source.calls == 2


def test_a_refused_fetch_is_unavailable(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 10_000)
    source = Source(b"x")
    source.fail_next = LookupError("answered 404")
    with pytest.raises(DataFileUnavailable, match="404"):
        cache.acquire(SCOPE, ref(b"x"), source)


def test_least_recently_used_files_no_run_holds_are_evicted_past_the_bound(tmp_path):
    cache = DataCache(str(tmp_path / "cache"), 250)
    files = [bytes([65 + i]) * 100 for i in range(4)]
    a, b, c, d = (ref(f) for f in files)
    source = {f: Source(f) for f in files}
    path_a = cache.acquire(SCOPE, a, source[files[0]])
    cache.acquire(SCOPE, b, source[files[1]])
    cache.release(SCOPE, b["sha256"])
    cache.release(SCOPE, a["sha256"])
    cache.acquire(SCOPE, a, source[files[0]])  # a is used again: b is now the least recently used
    cache.release(SCOPE, a["sha256"])
    cache.acquire(SCOPE, c, source[files[2]])  # 300 bytes: b goes
    assert not os.path.exists(cache.path(SCOPE, b["sha256"]))
    assert os.path.exists(path_a)
    assert cache.health()["evictions"] == 1 and cache.health()["bytes"] == 200
    # Held files stay, past the bound, until released.
    path_c = cache.path(SCOPE, c["sha256"])
    path_a = cache.acquire(SCOPE, a, source[files[0]])
    cache.acquire(SCOPE, d, source[files[3]])
    assert all(os.path.exists(p) for p in (path_a, path_c, cache.path(SCOPE, d["sha256"])))
    assert cache.health()["bytes"] == 300
    cache.release(SCOPE, c["sha256"])
    assert not os.path.exists(path_c)
    cache.release(SCOPE, a["sha256"])
    cache.release(SCOPE, d["sha256"])
    assert cache.health()["bytes"] <= 250
    # An evicted file is fetched again when a run wants it.
    cache.acquire(SCOPE, b, source[files[1]])
    assert source[files[1]].calls == 2


def test_accounts_are_kept_apart_and_a_cache_left_behind_is_read_back(tmp_path):
    root = str(tmp_path / "cache")
    cache = DataCache(root, 10_000)
    content = b"shared bytes\n"
    one = cache.acquire("accountA0001", ref(content), Source(content))
    two = cache.acquire("accountB0002", ref(content), Source(content))
    assert one != two and cache.health()["downloads"] == 2
    again = DataCache(root, 10_000)
    assert again.health()["files"] == 2
    source = Source(content)
    assert again.acquire("accountA0001", ref(content), source) == one and source.calls == 0
    with pytest.raises(DataFileRefused):
        again.acquire("../escape", ref(content), source)


def test_the_reporter_streams_a_file_with_the_run_token_and_retries(fake_worker, tmp_path):
    content = os.urandom(200_000)
    fake_worker.served["/internal/v1/runs/r1/data-files/abc"] = content
    reporter = Reporter(f"{fake_worker.url}/internal/v1/runs/r1", "tok", first_delay=0.01, fetch_for_seconds=2)
    with open(tmp_path / "f", "w+b") as sink:
        assert reporter.fetch_file(f"{fake_worker.url}/internal/v1/runs/r1/data-files/abc", sink, len(content))
        sink.seek(0)
        assert sink.read() == content
        assert fake_worker.requests[-1]["authorization"] == "Bearer tok"
        with pytest.raises(LookupError, match="more than"):
            reporter.fetch_file(f"{fake_worker.url}/internal/v1/runs/r1/data-files/abc", sink, len(content) - 1)
        with pytest.raises(LookupError, match="404"):
            reporter.fetch_file(f"{fake_worker.url}/internal/v1/runs/r1/data-files/nope", sink, 10)
        fake_worker.served["/internal/v1/runs/r1/data-files/down"] = 503
        with pytest.raises(LookupError, match="gave up"):
            reporter.fetch_file(f"{fake_worker.url}/internal/v1/runs/r1/data-files/down", sink, 10)
        assert sum(r["path"].endswith("/down") for r in fake_worker.requests) > 1
    reporter.close()
