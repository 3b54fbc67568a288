"""The run's relay at work: what stands between the job's message channel and the worker.

The job (user code included) writes JSON lines to a pipe whose other end only the relay holds — the
relay being the process that confined the run (``sandbox.confine``): it is in the run's control group,
outside its namespaces, and never runs user code.  The relay reads that pipe while the job lives, and:

- bounds every line as it arrives, in time linear in its length: a message other than the outcome
  (``wire.MESSAGE_BYTES``, progress), the outcome (the line that starts with ``wire.OUTCOME_PREFIX``,
  ``ChannelLimits.outcome_bytes``) and the count of messages (a burst, then so many a second).  Past
  any of them it tells the worker (``wire.LimitMessage``), kills the run's init (and so the whole
  namespace), and reads no more: the run fails as ``resource_limit_exceeded`` whenever its process
  ends, before or after the worker's watchdog looked;
- forwards each progress message to the worker, checked (``wire.checked_progress``) and re-encoded;
- keeps the last outcome line and, once the job's end closed the pipe, parses and validates it
  (``validation.validate_outcome``) and writes it into the run's store (``sandbox.store``): the
  result's JSON, the final population's, the staged files (``staged_files``) and a summary
  (``wire.CollectedOutcome``), whose place it sends last (``wire.CollectedMessage``).

So the worker — one process for every run, outside their control groups — never buffers or parses
what user code wrote: the outcome's bytes, its parse and its parts are the run's own memory and CPU.
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
from collections.abc import Callable, Iterator

from ..sandbox.store import CHUNK, StoreWriter
from ..validation import ValidOutcome, validate_outcome
from ..wire import (
    MESSAGE_BYTES,
    OUTCOME_PREFIX,
    ChannelLimits,
    CollectedOutcome,
    Genes,
    LimitReason,
    OutcomeMessage,
    ProgressMessage,
    RelayMessage,
    checked_progress,
    to_json,
)
from .staged_files import take_files

__all__ = ["Collector"]

PIPE_BYTES = 1 << 16  # what a pipe holds (Linux's default): no read returns more


def _rows_json(rows: list[Genes]) -> Iterator[bytes]:
    """``to_json(rows)`` a piece at a time (rows of ≈ 64 K values each: one piece for a small
    population, no second copy of a large one)."""
    yield b"["
    per_piece = max(1, (1 << 16) // max(1, len(rows[0]) if rows else 1))
    for start in range(0, len(rows), per_piece):
        piece = to_json(rows[start : start + per_piece])[1:-1]
        yield b"," + piece if start else piece
    yield b"]"


class Collector:
    """The relay's side of one run's channel: ``job_r`` (the job's lines), ``channel`` (to the worker),
    ``store`` (the run's memfd).  ``confine`` keeps ``keep_fds`` open in the relay and calls the
    collector with the pid of the process it forked (the run's init, or its job without a PID
    namespace); the job's side closes them before user code runs."""

    def __init__(
        self,
        job_r: int,
        channel: int,
        store: int,
        limits: ChannelLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.job_r, self.channel, self.limits, self.clock = job_r, channel, limits, clock
        self.writer = StoreWriter(store)
        self.keep_fds: tuple[int, ...] = (job_r, channel, store)
        self.limited: LimitReason | None = None
        self._outcome: bytes | bytearray | None = None

    # -- the relay's work

    def __call__(self, child: int) -> None:
        """Read the job's lines until its end closes the pipe (or a limit stops it), then collect."""
        self._read(child)
        if self.limited is None and self._outcome is not None:
            raw, self._outcome = self._outcome, None
            self.collect(raw)

    def _read(self, child: int) -> None:
        limits = self.limits
        message_bytes = min(limits["message_bytes"], MESSAGE_BYTES)
        started, lines = self.clock(), 0
        buffer = bytearray()
        scanned = 0  # the bytes of ``buffer`` already searched for a newline: each byte is searched once
        pipe = io.FileIO(self.job_r, "rb", closefd=False)
        piece = memoryview(bytearray(PIPE_BYTES))  # read into, every time: no allocation per read
        while True:
            try:
                got = pipe.readinto(piece)
            except OSError:
                break
            if not got:
                break
            buffer += piece[:got]
            start = 0
            while (newline := buffer.find(b"\n", scanned)) >= 0:
                lines += 1
                if buffer.startswith(OUTCOME_PREFIX, start):
                    if newline - start > limits["outcome_bytes"]:
                        return self._limit("outcome", child)
                    if start == 0 and newline > CHUNK:  # a long outcome: keep this buffer, copy the rest
                        rest = bytes(buffer[newline + 1 :])
                        del buffer[newline:]
                        self._outcome, buffer = buffer, bytearray(rest)
                        scanned = 0
                        continue
                    self._outcome = bytes(buffer[start:newline])
                elif newline - start > message_bytes:
                    return self._limit("message", child)
                else:
                    self._message(bytes(buffer[start:newline]))
                start = scanned = newline + 1
            if start:
                del buffer[:start]
            scanned = len(buffer)
            if lines > limits["message_burst"] + limits["messages_per_second"] * (self.clock() - started):
                return self._limit("messages", child)
            outcome = buffer.startswith(OUTCOME_PREFIX)  # the line still arriving
            if len(buffer) > (limits["outcome_bytes"] if outcome else message_bytes):
                return self._limit("outcome" if outcome else "message", child)

    def _limit(self, reason: LimitReason, child: int) -> None:
        """Tell the worker, end the run (its init: the whole namespace), read no more."""
        self.limited = reason
        self._outcome = None
        self.send({"type": "limit", "reason": reason})
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self.job_r)  # writers left (a job without a PID namespace) get EPIPE, not a full pipe

    def _message(self, line: bytes) -> None:
        """A message other than the outcome: progress goes on, checked and re-encoded; the rest (user
        code may write anything) is dropped."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict) or message.get("type") != "progress":
            return
        progress = checked_progress(message)
        if progress is not None:
            forwarded: ProgressMessage = {"type": "progress", **progress}
            self.send(forwarded)

    def send(self, message: RelayMessage) -> None:
        data = to_json(message) + b"\n"
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.channel, view) :]
        except OSError:
            pass  # the worker is gone: the run dies with it

    # -- the outcome

    def collect(self, raw: bytes | bytearray) -> None:
        """Parse and validate the job's outcome line, write it into the store, say where."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError):
            message = None
        del raw
        try:
            valid = validate_outcome(message)
        except RecursionError:  # hostile nesting inside an otherwise valid shape
            valid = None
        del message
        if valid is None:
            self.send({"type": "outcome", "at": None})
            return
        self.send({"type": "outcome", "at": self.store(valid)})

    def collect_own(self, outcome: OutcomeMessage) -> None:
        """An outcome of the child's own (a failure before the job exists): stored as the job's is."""
        valid = validate_outcome(json.loads(to_json(outcome)))
        self.send({"type": "outcome", "at": self.store(valid) if valid is not None else None})

    def store(self, valid: ValidOutcome) -> list[int]:
        """Write the outcome's parts and its summary into the store; where the summary is."""
        parts: dict[str, list[int]] = {}
        population_finite = True
        result = valid["result"]
        if result is not None:
            population = result.pop("population", None)
            if population is not None:
                population_finite = not any(None in row for row in population)
                parts["population"] = self.writer.write(_rows_json(population))
                del population
            for name, data in take_files(result).items():
                parts[name] = self.writer.write(data)
            parts["result"] = self.writer.write(to_json(result))
        summary: CollectedOutcome = {
            "status": valid["status"],
            "error": valid["error"],
            "hit_time_cap": valid["hit_time_cap"],
            "hit_memory_cap": valid["hit_memory_cap"],
            "engine": valid["engine"],
            "warnings": valid["warnings"],
            "progress": valid["progress"],
            "population_finite": population_finite,
            "parts": parts,
        }
        return self.writer.write(to_json(summary))
