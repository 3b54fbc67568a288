"""The worker's cache of data files (docs/runner-protocol.md#data-files): a run's files by account and
sha256 on the worker's own disk, so a sweep of 100 runs reading one file fetches its bytes once.

* **Download once.** Runs that want the same file at the same time wait for the one that fetches it
  (with its own run's token); a second fetch starts only if that one failed for want of the Worker (its
  run was cancelled, the Worker could not be reached), not for the bytes.
* **Checked.** A download goes to a temporary file, then its size and sha256 are checked against what
  the run request says, and only then is it renamed into place (atomic: a path in the cache always holds
  the whole, checked bytes). A mismatch is refused (``DataFileRefused``) and nothing is kept.
* **Bounded, least recently used first.** When the files pass ``max_bytes``, the least recently used
  files that no live run holds go. Files a live run holds (bound at /data in its sandbox) stay, so the
  cache may pass its bound while they run, by at most their size.
* **Never a run's.** The cache's directories are the worker's own (0700); a run sees only its own files,
  bound read-only at /data/<name> in its minimal root (``sandbox.confine``), not the cache. Files are
  0644 so the run's uid can read them there; the read-only bind stops writes.
* **Kept apart by account.** Files live under ``objects/<scope>/<sha256>`` (the scope: the account),
  so a run cannot learn from the cache's speed whether another account uses bytes it guesses.

One worker process per cache directory: the bookkeeping (what is held, what was used when) is in memory;
a directory left by an earlier worker is read back at the start, in the order of its files' times.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from ..wire import DataCacheHealth, DataFileRef

__all__ = ["DataCache", "DataFileRefused", "DataFileUnavailable", "Fetch"]

log = logging.getLogger("allele.data")

# fetch(url, sink, max_bytes) -> True once whole, False when a cancel stopped it; LookupError when refused.
Fetch = Callable[[str, BinaryIO, int], bool]
SCOPE = re.compile(r"^[A-Za-z0-9]{1,64}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class DataFileUnavailable(Exception):
    """The file could not be fetched (the Worker refused it or could not be reached, or a cancel)."""


class DataFileRefused(DataFileUnavailable):
    """The bytes fetched are not the file the run request names (size or sha256): never kept."""


@dataclass
class _Entry:
    size: int
    holders: int = 0


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    error: DataFileUnavailable | None = None


class DataCache:
    def __init__(self, root: str, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._objects = os.path.join(root, "objects")
        self._tmp = os.path.join(root, "tmp")
        for path in (root, self._objects, self._tmp):
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.chmod(path, 0o700)
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()  # least recently used first
        self._pending: dict[tuple[str, str], _Pending] = {}
        self.downloads = self.hits = self.evictions = 0
        self._load()

    def _load(self) -> None:
        """What an earlier worker left: the files in place (each renamed there whole and checked), oldest first."""
        for name in os.listdir(self._tmp):
            os.unlink(os.path.join(self._tmp, name))
        found = []
        for scope in os.listdir(self._objects):
            folder = os.path.join(self._objects, scope)
            for sha in os.listdir(folder) if SCOPE.match(scope) and os.path.isdir(folder) else ():
                if SHA256.match(sha):
                    info = os.stat(os.path.join(folder, sha))
                    found.append((info.st_mtime, scope, sha, info.st_size))
        for _, scope, sha, size in sorted(found):
            self._entries[(scope, sha)] = _Entry(size)
        with self._lock:
            self._evict()

    def path(self, scope: str, sha256: str) -> str:
        return os.path.join(self._objects, scope, sha256)

    def acquire(self, scope: str, ref: DataFileRef, fetch: Fetch) -> str:
        """The path of the checked file ``ref`` of account ``scope``, held until ``release``: from the
        cache, from a download another run is making, or fetched now with ``fetch``."""
        if not SCOPE.match(scope) or not SHA256.match(ref["sha256"]):
            raise DataFileRefused("not a cacheable file")
        key = (scope, ref["sha256"])
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and os.path.exists(self.path(*key)):
                    entry.holders += 1
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return self.path(*key)
                if entry is not None:  # removed behind the cache's back: fetched again
                    del self._entries[key]
                pending = self._pending.get(key)
                owner = pending is None
                if pending is None:
                    pending = self._pending[key] = _Pending()
            if not owner:
                pending.done.wait()
                if isinstance(pending.error, DataFileRefused):
                    raise pending.error
                continue  # whole now (taken in the next turn), or the other run's fetch failed: try again
            try:
                self._download(key, ref, fetch)
            except DataFileUnavailable as exc:
                pending.error = exc
                raise
            except BaseException as exc:
                pending.error = DataFileUnavailable(f"{type(exc).__name__}")
                raise
            finally:
                with self._lock:
                    del self._pending[key]
                    if pending.error is None:
                        self._entries[key] = _Entry(ref["size_bytes"], holders=1)
                        self.downloads += 1
                        self._evict()
                pending.done.set()
            return self.path(*key)

    def _download(self, key: tuple[str, str], ref: DataFileRef, fetch: Fetch) -> None:
        scope, sha256 = key
        handle, temporary = tempfile.mkstemp(dir=self._tmp)
        try:
            with os.fdopen(handle, "w+b") as sink:
                try:
                    whole = fetch(ref["url"], sink, ref["size_bytes"])
                except LookupError as exc:
                    raise DataFileUnavailable(str(exc)) from None
                if not whole:
                    raise DataFileUnavailable("cancelled")
                sink.seek(0)
                digest = hashlib.sha256()
                size = 0
                while chunk := sink.read(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
                os.fsync(sink.fileno())
            if size != ref["size_bytes"] or digest.hexdigest() != sha256:
                log.warning("data file %s refused: %d bytes of sha256 %s", sha256, size, digest.hexdigest())
                raise DataFileRefused(f"the bytes fetched are not the file {ref['name']} (size or sha256 differ)")
            os.chmod(temporary, 0o644)
            os.makedirs(os.path.join(self._objects, scope), mode=0o700, exist_ok=True)
            os.rename(temporary, self.path(scope, sha256))
        except BaseException:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            raise

    def release(self, scope: str, sha256: str) -> None:
        """A run no longer holds the file; the cache may evict it once nothing does."""
        with self._lock:
            entry = self._entries.get((scope, sha256))
            if entry is not None and entry.holders > 0:
                entry.holders -= 1
            self._evict()

    def _evict(self) -> None:
        """Least recently used files no run holds go while the cache is past its bound (under the lock)."""
        total = sum(e.size for e in self._entries.values())
        for key in [k for k, e in self._entries.items() if e.holders == 0]:
            if total <= self.max_bytes:
                break
            entry = self._entries.pop(key)
            total -= entry.size
            self.evictions += 1
            try:
                os.unlink(self.path(*key))
            except FileNotFoundError:
                pass

    def held(self, scope: str, sha256: str) -> int:
        """How many runs hold this file now (tests)."""
        with self._lock:
            entry = self._entries.get((scope, sha256))
            return entry.holders if entry else 0

    def health(self) -> DataCacheHealth:
        with self._lock:
            return {
                "files": len(self._entries),
                "bytes": sum(e.size for e in self._entries.values()),
                "max_bytes": self.max_bytes,
                "downloads": self.downloads,
                "hits": self.hits,
                "evictions": self.evictions,
            }
