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
- forwards each progress message to the worker, checked (``wire.checked_progress``) and re-encoded,
  and each checkpoint message (``wire.checked_checkpoint``: a slot, a size within the run's cap — the
  checkpoint's bytes stay in the job's slot, which the worker streams unread);
- keeps the last outcome line (and the last population line, which a succeeded outcome's population
  travels on: ``outcome_lines``) and, once the job's end closed the pipe, parses and validates it
  (``validation.validate_outcome``) and writes it into the run's store (``sandbox.store``): the
  result's JSON, the final population's — the job's own bytes when every value of it is a finite
  number, so a large population is parsed once and never encoded again —, the staged files
  (``staged_files``) and a summary (``wire.CollectedOutcome``), whose place it sends last
  (``wire.CollectedMessage``).

So the worker — one process for every run, outside their control groups — never buffers or parses
what user code wrote: the outcome's bytes, its parse and its parts are the run's own memory and CPU.
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from typing import cast

from ..sandbox.store import CHUNK, StoreWriter
from ..validation import ValidOutcome, compile_refused, validate_outcome
from ..wire import (
    JSON,
    MESSAGE_BYTES,
    OUTCOME_PREFIX,
    POPULATION_PREFIX,
    ChannelLimits,
    ChildMessage,
    CollectedOutcome,
    Genes,
    LimitReason,
    OutcomeMessage,
    PopulationMessage,
    ProgressMessage,
    RelayMessage,
    checked_checkpoint,
    checked_progress,
    to_json,
)
from .staged_files import take_files

__all__ = ["Collector", "outcome_lines"]

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


def _large(buffer: bytearray, start: int) -> str | None:
    """Whether the line at ``start`` is one of the two that may be large: "outcome", "population"."""
    if buffer.startswith(OUTCOME_PREFIX, start):
        return "outcome"
    if buffer.startswith(POPULATION_PREFIX, start):
        return "population"
    return None


def _parsed(raw: bytes | bytearray) -> object:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def outcome_lines(outcome: OutcomeMessage) -> list[ChildMessage]:
    """What the job sends at its end: a succeeded outcome's population on a line of its own
    (``wire.PopulationMessage``), then the outcome without it."""
    if outcome["status"] != "succeeded" or "population" not in outcome["result"]:
        return [outcome]
    result = dict(outcome["result"])
    population: PopulationMessage = {"type": "population", "population": cast(JSON, result.pop("population"))}
    return [population, cast(OutcomeMessage, {**outcome, "result": result})]


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
        sources: Mapping[str, object] | None = None,
    ) -> None:
        self.job_r, self.channel, self.limits, self.clock = job_r, channel, limits, clock
        self.sources = sources  # the job's params: its code, to confirm a failure to compile
        self.writer = StoreWriter(store)
        self.keep_fds: tuple[int, ...] = (job_r, channel, store)
        self.limited: LimitReason | None = None
        self._outcome: bytes | bytearray | None = None
        self._population: bytes | bytearray | None = None  # the last population line

    # -- the relay's work

    def __call__(self, child: int) -> None:
        """Read the job's lines until its end closes the pipe (or a limit stops it), then collect."""
        self._read(child)
        if self.limited is None and self._outcome is not None:
            raw, self._outcome = self._outcome, None
            population, self._population = self._population, None
            self.collect(raw, population)

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
                large = _large(buffer, start)
                if large is not None:
                    if newline - start > limits["outcome_bytes"]:
                        return self._limit("outcome", child)
                    line: bytes | bytearray
                    if start == 0 and newline > CHUNK:  # a long line: keep this buffer, copy the rest
                        rest = bytes(buffer[newline + 1 :])
                        del buffer[newline:]
                        line, buffer = buffer, bytearray(rest)
                        scanned = 0
                    else:
                        line = bytes(buffer[start:newline])
                        start = scanned = newline + 1
                    if large == "outcome":
                        self._outcome = line
                    else:
                        self._population = line
                    continue
                if newline - start > message_bytes:
                    return self._limit("message", child)
                else:
                    self._message(bytes(buffer[start:newline]))
                start = scanned = newline + 1
            if start:
                del buffer[:start]
            scanned = len(buffer)
            if lines > limits["message_burst"] + limits["messages_per_second"] * (self.clock() - started):
                return self._limit("messages", child)
            arriving = _large(buffer, 0) is not None  # the line still arriving
            if len(buffer) > (limits["outcome_bytes"] if arriving else message_bytes):
                return self._limit("outcome" if arriving else "message", child)

    def _limit(self, reason: LimitReason, child: int) -> None:
        """Tell the worker, end the run (its init: the whole namespace), read no more."""
        self.limited = reason
        self._outcome = self._population = None
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
        if isinstance(message, dict) and message.get("type") == "checkpoint":
            checked = checked_checkpoint(message, self.limits.get("checkpoint_bytes", 0))
            if checked is not None:
                self.send(checked)
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

    def collect(self, raw: bytes | bytearray, population: bytes | bytearray | None = None) -> None:
        """Parse and validate the job's outcome line (and the population line before it, for a
        succeeded outcome without one of its own), write it into the store, say where."""
        message = _parsed(raw)
        del raw
        result = message.get("result") if isinstance(message, dict) else None
        if population is not None and isinstance(result, dict) and "population" not in result:
            sent = _parsed(population)
            if isinstance(sent, dict) and "population" in sent:
                result["population"] = sent["population"]
            del sent
        else:
            population = None
        try:
            valid = validate_outcome(message)
        except RecursionError:  # hostile nesting inside an otherwise valid shape
            valid = None
        del message, result
        if valid is None:
            self.send({"type": "outcome", "at": None})
            return
        error = valid["error"]
        if error is not None and "stage" in error and not compile_refused(self.sources or {}):
            del error["stage"]  # the job says its code did not compile, but it does: charged as it ran
        self.send({"type": "outcome", "at": self.store(valid, population)})

    def collect_own(self, outcome: OutcomeMessage) -> None:
        """An outcome of the child's own (a failure before the job exists): stored as the job's is."""
        valid = validate_outcome(json.loads(to_json(outcome)))
        self.send({"type": "outcome", "at": self.store(valid) if valid is not None else None})

    def store(self, valid: ValidOutcome, line: bytes | bytearray | None = None) -> list[int]:
        """Write the outcome's parts and its summary into the store; where the summary is.  ``line``:
        the population line the population came from, whose bytes are stored as they are when every
        value is a finite number (json.loads took them, so they are JSON, and nothing is to be made
        null); else the population is encoded again."""
        parts: dict[str, list[int]] = {}
        population_finite = True
        result = valid["result"]
        if result is not None:
            population = result.pop("population", None)
            if population is not None:
                population_finite = not any(None in row for row in population)
                if line is not None and population_finite and line.endswith(b"}"):
                    parts["population"] = self.writer.write(memoryview(line)[len(POPULATION_PREFIX) : -1])
                else:
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
