"""Reports to the Worker with the run's bearer token: ``POST {report.url}/progress`` and ``/complete``,
``PUT {report.url}/population``, ``PUT {report.url}/files/{name}`` and ``PUT {report.url}/checkpoint``;
and the fetches of a continue's start population, of a run's data files and of a resumed run's checkpoint.

Progress is best effort (one attempt, failures ignored).  The completion report and the uploads
are retried with back-off 1 s, 2 s, 4 s … capped at 60 s for up to 15 minutes while the Worker
answers 5xx or cannot be reached; any other answer (2xx applied, 4xx: run no longer live or bad token)
ends the retries.  The start population and a data file (``GET``) are retried the same way for up to
60 s.  A cancel (``stopped``) ends every retry loop at once.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from typing import BinaryIO

import httpx

from ..sandbox.store import Part, payload_chunks, payload_length
from ..wire import CompleteReport, Metrics, Progress, to_json

__all__ = ["Reporter", "population_json", "tls_context"]

log = logging.getLogger("allele.reports")


Rows = Sequence[Sequence[float | None]]


def _finite_rows(population: Rows) -> list[Sequence[float | None]]:
    return [
        [v if not isinstance(v, float) or math.isfinite(v) else None for v in row] if isinstance(row, list) else row
        for row in population
    ]


def population_json(population: Rows) -> bytes:
    """Compact JSON of a population; non-finite numbers become ``null`` (as in every report)."""
    try:
        return to_json(population)
    except ValueError:
        return to_json(_finite_rows(population))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one TLS context of every run's reports (thread-safe, shared): building it loads the CA
    bundle, ≈ 20 ms of CPU that each run's client paid before its first report."""
    return httpx.create_ssl_context()


class Reporter:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 10.0,
        retry_for_seconds: float = 15 * 60,
        first_delay: float = 1.0,
        max_delay: float = 60.0,
        fetch_for_seconds: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.retry_for_seconds = retry_for_seconds
        self.fetch_for_seconds = fetch_for_seconds
        self.first_delay, self.max_delay = first_delay, max_delay
        self._client = httpx.Client(
            timeout=timeout,
            transport=transport,
            verify=tls_context(),
            headers={"Authorization": f"Bearer {token}", "User-Agent": "Allele-GA-Worker/1.0"},
        )
        self.stopped = threading.Event()  # set by a cancel: no more reports

    def _post(self, kind: str, body: Progress | CompleteReport) -> httpx.Response:
        return self._client.post(
            f"{self.url}/{kind}", content=to_json(body), headers={"Content-Type": "application/json"}
        )

    def _send(self, method: str, path: str, pieces: Sequence[bytes | Part], content_type: str) -> httpx.Response:
        """A body of these pieces (a store's part read a piece at a time, never whole), with its
        ``Content-Length``: the Worker streams such a body to R2 unread."""
        headers = {"Content-Type": content_type, "Content-Length": str(payload_length(pieces))}
        return self._client.request(method, f"{self.url}/{path}", content=payload_chunks(pieces), headers=headers)

    def _retry(self, what: str, send: Callable[[], httpx.Response], retry_for_seconds: float) -> httpx.Response | None:
        """``send`` until it answers below 500; None when it gave up or a cancel stopped it."""
        deadline = time.monotonic() + retry_for_seconds
        delay = self.first_delay
        while not self.stopped.is_set():
            try:
                answer = send()
                if answer.status_code < 500:
                    if answer.status_code >= 400:
                        log.warning("%s refused with %s: not retried", what, answer.status_code)
                    return answer
                log.warning("%s answered %s: retrying in %.0f s", what, answer.status_code, delay)
            except httpx.HTTPError as exc:
                log.warning("%s failed (%s): retrying in %.0f s", what, type(exc).__name__, delay)
            if time.monotonic() + delay > deadline:
                log.error("%s not done within %.0f s: giving up", what, retry_for_seconds)
                return None
            if self.stopped.wait(delay):
                break
            delay = min(delay * 2, self.max_delay)
        return None

    def progress(self, body: Progress) -> int | None:
        """Send one progress report (not retried); its HTTP status, None when it was not answered."""
        if self.stopped.is_set():
            return None
        try:
            return self._post("progress", body).status_code
        except httpx.HTTPError as exc:
            log.debug("progress report failed: %s", exc)
            return None

    def complete(self, body: CompleteReport, result: Sequence[bytes | Part] | None = None) -> int | None:
        """Send the completion report; return the final HTTP status (None: gave up or cancelled).
        ``result``: the result's JSON in pieces (from the run's store), sent as the body's ``result``
        in place of ``body["result"]``."""
        if result is None:
            send = lambda: self._post("complete", body)  # noqa: E731
        else:
            rest = to_json({key: value for key, value in body.items() if key != "result"})
            pieces = [b'{"result":', *result, b",", rest[1:]]
            send = lambda: self._send("POST", "complete", pieces, "application/json")  # noqa: E731
        answer = self._retry("complete report", send, self.retry_for_seconds)
        return None if answer is None else answer.status_code

    def upload_population(self, population: Rows | bytes | Part) -> int | None:
        """``PUT {url}/population`` (a population, its ``population_json``, or its JSON in the run's
        store); return the final HTTP status (None: gave up or cancelled)."""
        data = population if isinstance(population, (bytes, Part)) else population_json(population)
        answer = self._retry(
            "population upload",
            lambda: self._send("PUT", "population", [data], "application/json"),
            self.retry_for_seconds,
        )
        return None if answer is None else answer.status_code

    def upload_file(self, name: str, data: bytes | Part) -> int | None:
        """``PUT {url}/files/{name}`` (one of ``wire.STAGED_FILES``); the final HTTP status."""
        content_type = "text/csv" if name.endswith(".csv") else "application/json"
        answer = self._retry(
            f"{name} upload",
            lambda: self._send("PUT", f"files/{name}", [data], content_type),
            self.retry_for_seconds,
        )
        return None if answer is None else answer.status_code

    def upload_checkpoint(self, data: Part, generation: int, usage: dict[str, float] | None = None) -> int | None:
        """``PUT {url}/checkpoint`` (a durable run's checkpoint, streamed from its slot unread; the
        Worker keeps only the latest), with the run's usage by then (``cpu_seconds``, ``wall_ms``,
        ``peak_mb``); retried for 30 s at most: the next checkpoint follows."""
        headers = {"X-Allele-Generation": str(generation)}
        for key, header in (
            ("cpu_seconds", "X-Allele-Cpu-Seconds"),
            ("wall_ms", "X-Allele-Wall-Ms"),
            ("peak_mb", "X-Allele-Peak-Mb"),
        ):
            value = (usage or {}).get(key)
            if value is not None and math.isfinite(value) and value >= 0:
                headers[header] = f"{value:.6f}".rstrip("0").rstrip(".") if key == "cpu_seconds" else str(round(value))

        def send() -> httpx.Response:
            pieces = [data]
            headers_all = {**headers, "Content-Type": "application/octet-stream"}
            headers_all["Content-Length"] = str(payload_length(pieces))
            return self._client.request(
                "PUT", f"{self.url}/checkpoint", content=payload_chunks(pieces), headers=headers_all
            )

        answer = self._retry("checkpoint upload", send, 30.0)
        return None if answer is None else answer.status_code

    def suspend(self, metrics: Metrics, *, checkpointed: bool) -> int | None:
        """``POST {url}/suspend``: a drained run handed back to go on elsewhere from its last checkpoint
        (``checkpointed``: one was stored at the drain, and ``metrics`` are its whole segment's)."""
        body = {"metrics": metrics, "checkpointed": checkpointed}
        answer = self._retry(
            "suspend report",
            lambda: self._client.post(
                f"{self.url}/suspend", content=to_json(body), headers={"Content-Type": "application/json"}
            ),
            60.0,
        )
        return None if answer is None else answer.status_code

    def fetch_checkpoint(self, url: str, fd: int, max_bytes: int) -> int:
        """``GET url`` (the run's last checkpoint) streamed into ``fd`` (the child's first checkpoint
        slot), unread; its length.  ``LookupError`` when refused, past ``max_bytes`` or not had within
        ``fetch_for_seconds``; 0 when a cancel stopped it."""
        return self._fetch_into(url, fd, max_bytes, "checkpoint")

    def fetch_population(self, url: str, fd: int, max_bytes: int) -> int:
        """``GET url`` (a continue's start population) streamed into ``fd`` unread: the job parses it,
        under the run's caps (a Premium population is tens of MB of JSON; parsed here it would cost the
        worker, outside every run's cgroup, several times that).  As ``fetch_checkpoint``."""
        return self._fetch_into(url, fd, max_bytes, "start population")

    def _fetch_into(self, url: str, fd: int, max_bytes: int, what: str) -> int:
        deadline = time.monotonic() + self.fetch_for_seconds
        delay = self.first_delay
        while not self.stopped.is_set():
            try:
                with self._client.stream("GET", url) as answer:
                    if 400 <= answer.status_code < 500:
                        raise LookupError(f"answered {answer.status_code}")
                    if answer.status_code < 300:
                        os.ftruncate(fd, 0)
                        size = 0
                        for piece in answer.iter_bytes(1 << 20):
                            if size + len(piece) > max_bytes:
                                raise LookupError(f"the {what} is past the run's cap")
                            view = memoryview(piece)
                            while view:
                                written = os.pwrite(fd, view, size)
                                size += written
                                view = view[written:]
                        return size
            except httpx.HTTPError as exc:
                log.warning("%s fetch failed (%s)", what, type(exc).__name__)
            if time.monotonic() + delay > deadline:
                raise LookupError("gave up")
            if self.stopped.wait(delay):
                break
            delay = min(delay * 2, self.max_delay)
        return 0

    def fetch_file(self, url: str, sink: BinaryIO, max_bytes: int) -> bool:
        """``GET url`` (a data file) streamed into ``sink``, at most ``max_bytes`` of it; each attempt
        starts ``sink`` afresh.  True once it is whole; False when a cancel stopped it.  Raises
        ``LookupError`` when it is refused (4xx), longer than ``max_bytes``, or could not be had within
        ``fetch_for_seconds``."""
        deadline = time.monotonic() + self.fetch_for_seconds
        delay = self.first_delay
        while not self.stopped.is_set():
            try:
                sink.seek(0)
                sink.truncate()
                with self._client.stream("GET", url) as answer:
                    if answer.status_code < 500:
                        if not 200 <= answer.status_code < 300:
                            raise LookupError(f"answered {answer.status_code}")
                        received = 0
                        for chunk in answer.iter_bytes(1 << 16):
                            received += len(chunk)
                            if received > max_bytes:
                                raise LookupError(f"more than the {max_bytes} bytes announced")
                            sink.write(chunk)
                            if self.stopped.is_set():
                                return False
                        sink.flush()
                        return True
                    log.warning("data file fetch answered %s: retrying in %.0f s", answer.status_code, delay)
            except httpx.HTTPError as exc:
                log.warning("data file fetch failed (%s): retrying in %.0f s", type(exc).__name__, delay)
            if time.monotonic() + delay > deadline:
                raise LookupError(f"gave up after {self.fetch_for_seconds:.0f} s")
            if self.stopped.wait(delay):
                break
            delay = min(delay * 2, self.max_delay)
        return False

    def close(self) -> None:
        self._client.close()
