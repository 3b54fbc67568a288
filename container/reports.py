"""Reports to the Worker: ``POST {report.url}/progress`` and ``/complete`` with the run's bearer token.

Progress is best effort (one attempt, failures ignored).  The completion report is retried with
back-off 1 s, 2 s, 4 s … capped at 60 s for up to 15 minutes while the Worker answers 5xx or cannot
be reached; any other answer (2xx applied, 4xx: run no longer live or bad token) ends the retries.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import httpx

__all__ = ["Reporter"]

log = logging.getLogger("allele.reports")


class Reporter:
    def __init__(self, url: str, token: str, *, timeout: float = 10.0,
                 retry_for_seconds: float = 15 * 60, first_delay: float = 1.0,
                 max_delay: float = 60.0, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.retry_for_seconds = retry_for_seconds
        self.first_delay, self.max_delay = first_delay, max_delay
        self._client = httpx.Client(timeout=timeout, transport=transport,
                                    headers={"Authorization": f"Bearer {token}",
                                             "Content-Type": "application/json",
                                             "User-Agent": "Allele-GA-Worker/1.0"})
        self.stopped = threading.Event()  # set by a cancel: no more reports

    def _post(self, kind: str, body: dict[str, Any]) -> httpx.Response:
        data = json.dumps(body, allow_nan=False, separators=(",", ":"))
        return self._client.post(f"{self.url}/{kind}", content=data)

    def progress(self, body: dict[str, Any]) -> None:
        if self.stopped.is_set():
            return
        try:
            self._post("progress", body)
        except httpx.HTTPError as exc:
            log.debug("progress report failed: %s", exc)

    def complete(self, body: dict[str, Any]) -> int | None:
        """Send the completion report; return the final HTTP status (None: gave up or cancelled)."""
        deadline = time.monotonic() + self.retry_for_seconds
        delay = self.first_delay
        while not self.stopped.is_set():
            try:
                status = self._post("complete", body).status_code
                if status < 500:
                    if status >= 400:
                        log.warning("complete report refused with %s: not retried", status)
                    return status
                log.warning("complete report answered %s: retrying in %.0f s", status, delay)
            except httpx.HTTPError as exc:
                log.warning("complete report failed (%s): retrying in %.0f s", type(exc).__name__,
                            delay)
            if time.monotonic() + delay > deadline:
                log.error("complete report not delivered within %.0f s: giving up",
                          self.retry_for_seconds)
                return None
            if self.stopped.wait(delay):
                break
            delay = min(delay * 2, self.max_delay)
        return None

    def close(self) -> None:
        self._client.close()
