"""Sandbox uids that never collide between workers on one host, and the sweep of what a crash left.

A worker claims a block of uids by holding an exclusive ``flock`` on ``<lock_dir>/uid-block-<n>.lock``
for its whole life (the kernel drops the lock when the process dies, however it dies).  Its runs take
uids from its own block only, so one worker's cleanup can never touch another worker's run.  A block
whose lock is free belongs to nobody: whatever still runs under its uids, or any control group named
after it, was left by a worker that died — the sweep kills and removes it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import threading
import time
from collections.abc import Callable

log = logging.getLogger("allele.sandbox")

BLOCK_SIZE = 1000
MAX_BLOCKS = 32


def pids_of_uids(first: int, count: int) -> list[int]:
    """Live (not zombie) processes whose real uid is in ``[first, first + count)``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                        break  # already dead, waiting to be reaped
                    if line.startswith(b"Uid:"):
                        if first <= int(line.split()[1]) < first + count:
                            pids.append(int(entry))
                        break
        except (OSError, ValueError):
            continue
    return pids


def kill_uids(first: int, count: int = 1, rounds: int = 50) -> int:
    """SIGKILL every process of those uids until none is left; return how many were killed."""
    killed = 0
    for _ in range(rounds):
        pids = pids_of_uids(first, count)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return killed


class UidBlock:
    """The block of uids this worker holds: ``take()`` / ``give()`` one per live run."""

    def __init__(
        self,
        *,
        base: int,
        lock_dir: str,
        block_size: int = BLOCK_SIZE,
        max_blocks: int = MAX_BLOCKS,
        sweep_groups: Callable[[str], list[str]] | None = None,
    ) -> None:
        os.makedirs(lock_dir, mode=0o700, exist_ok=True)
        self.base, self.block_size = base, block_size
        self._lock = threading.Lock()
        self._fd: int | None = None
        self.index = -1
        for index in range(max_blocks):
            fd = os.open(os.path.join(lock_dir, f"uid-block-{index}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # another live worker's block
            if self._fd is None:
                self._fd, self.index = fd, index
                continue
            self._sweep(index, sweep_groups)  # a free block: its owner died
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        if self._fd is None:
            raise RuntimeError(f"every one of the {max_blocks} sandbox uid blocks is held by a live worker")
        self._sweep(self.index, sweep_groups)  # ours may hold what a crashed predecessor left
        self.first = base + self.index * block_size
        self._free = list(range(self.first, self.first + block_size))

    def _sweep(self, index: int, sweep_groups: Callable[[str], list[str]] | None) -> None:
        first = self.base + index * self.block_size
        killed = kill_uids(first, self.block_size)
        groups = sweep_groups(self.group_prefix(index)) if sweep_groups else []
        if killed or groups:
            log.warning(
                "sandbox: removed what a previous worker left in uid block %d: %d process(es), control group(s) %s",
                index,
                killed,
                ", ".join(groups) or "none",
            )

    def group_prefix(self, index: int | None = None) -> str:
        return f"allele-{self.index if index is None else index}-"

    def take(self) -> int:
        with self._lock:
            if not self._free:
                raise RuntimeError("no free sandbox uid")
            return self._free.pop(0)

    def give(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
