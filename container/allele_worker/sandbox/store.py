"""A run's store: an anonymous memory file (memfd) the worker creates for each run and hands to its
child, into which the run's relay (``child.collector``) writes what it collected from the job's outcome
— the summary (``wire.CollectedOutcome``) and the parts: the result's JSON, the final population's,
the staged files.  The worker then streams the parts to the Worker unparsed (``Part.chunks``), a
piece at a time, so its own memory holds none of them whole.

The store's pages are charged to the process that writes them — the relay, inside the run's control
group — so its bytes count against the run's memory, as the outcome's do while the relay reads it.
The job never holds the store (the child closes it before user code runs).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["CHUNK", "Part", "Store", "StoreWriter", "memory_file", "payload_chunks", "payload_length"]

CHUNK = 1 << 20  # the piece a part is read (and sent) in


def memory_file(name: str) -> int:
    """A memfd (close-on-exec; passed on explicitly), or an unlinked temporary file without them."""
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        with tempfile.TemporaryFile() as handle:
            return os.dup(handle.fileno())


class Store:
    """The worker's end of a run's store (its own file descriptor, for ``pread``)."""

    def __init__(self) -> None:
        self.fd = memory_file("allele-store")

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def part(self, at: object) -> Part | None:
        """The part at ``at`` (``[offset, length]`` as the relay wrote it), if it lies in the store."""
        if (
            isinstance(at, list)
            and len(at) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in at)
            and at[0] + at[1] <= self.size()
        ):
            return Part(self, at[0], at[1])
        return None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@dataclass(frozen=True)
class Part:
    """``length`` bytes of a store from ``offset``."""

    store: Store
    offset: int
    length: int

    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        """The part in pieces of at most ``size`` bytes (a short read ends it early: nothing is
        invented)."""
        position, end = self.offset, self.offset + self.length
        while position < end:
            piece = os.pread(self.store.fd, min(size, end - position), position)
            if not piece:
                return
            position += len(piece)
            yield piece

    def read(self) -> bytes:
        """The whole part (for small ones only: a summary, an inline population)."""
        return b"".join(self.chunks())

    def slice(self, start: int, stop: int) -> Part:
        """The bytes ``start`` to ``stop`` of this part (within it)."""
        start, stop = max(0, min(start, self.length)), max(0, min(stop, self.length))
        return Part(self.store, self.offset + start, max(0, stop - start))


class StoreWriter:
    """The relay's end: appends and says where each piece went (``[offset, length]``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.end = 0

    def write(self, data: bytes | memoryview | Iterable[bytes]) -> list[int]:
        start = self.end
        for piece in [data] if isinstance(data, (bytes, memoryview)) else data:
            view = memoryview(piece)
            while view:
                written = os.pwrite(self.fd, view, self.end)
                self.end += written
                view = view[written:]
        return [start, self.end - start]


def payload_length(parts: Sequence[bytes | Part]) -> int:
    """How many bytes a body of these pieces has (its ``Content-Length``)."""
    return sum(len(part) if isinstance(part, bytes) else part.length for part in parts)


def payload_chunks(parts: Sequence[bytes | Part]) -> Iterator[bytes]:
    """A body of these pieces, a store part read a piece at a time."""
    for part in parts:
        if isinstance(part, bytes):
            if part:
                yield part
        else:
            yield from part.chunks()
