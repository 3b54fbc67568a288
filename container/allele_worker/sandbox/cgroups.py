"""Per-run control groups: caps and accounting over a run's whole process tree.

A run's child joins its group before anything else happens, so every process it or user code starts
(forked, double-forked, re-parented) is in it: memory is the group's (hard cap → the kernel's OOM
killer inside the group only), the process count is ``pids.max``, CPU billed is the group's total, every
group has the same CPU weight (so the scheduler shares the CPUs between runs, not between their
processes: a run of 60 busy processes cannot take a neighbour's share), and the end of a run kills
every process still in the group.

Both kernels' interfaces are supported:

* cgroup v2 (one unified hierarchy; what a modern container runtime gives): ``memory.max``,
  ``memory.peak``, ``memory.events`` (``oom_kill``), ``pids.max``, ``cpu.stat`` (``usage_usec``),
  ``cpu.weight``, ``cgroup.kill``;
* cgroup v1 (one hierarchy per controller): ``memory.limit_in_bytes``, ``memory.max_usage_in_bytes``,
  ``memory.oom_control`` (``oom_kill``), ``pids.max``, ``cpuacct.usage``, ``cpu.shares``; the kill
  signals every pid of ``cgroup.procs`` until none is left.

Groups live under the worker's own group, named ``allele-<block>-<n>`` (``block`` is the worker's uid
block, see uids.py), so a worker that starts after a crash can find and remove what its block left.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpu")
# Every run's group gets the same weight: the defaults, written explicitly (a parent's own could differ).
CPU_SHARES_V1, CPU_WEIGHT_V2 = 1024, 100


def _own_paths() -> dict[str, str]:
    """``/proc/self/cgroup`` as controller → path ("" is the v2 hierarchy)."""
    paths: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read_int(path: Path, key: str | None = None) -> int | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    if key is None:
        value = text.strip()
        return None if value == "max" else int(value)
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return None


@dataclass(frozen=True)
class CgroupSupport:
    """Where this worker may create run groups: ``version`` 2 (one base) or 1 (one base per controller)."""

    version: int
    bases: dict[str, Path]  # controller ("" for v2) → the directory run groups are created in

    def group(self, name: str) -> RunCgroup:
        return RunCgroup(self, name)

    def sweep(self, prefix: str) -> list[str]:
        """Kill and remove every leftover group whose name starts with ``prefix``; return their names."""
        names: set[str] = set()
        for base in self.bases.values():
            try:
                names.update(entry.name for entry in base.iterdir() if entry.is_dir() and entry.name.startswith(prefix))
            except OSError:
                continue
        for name in sorted(names):
            group = self.group(name)
            group.kill()
            group.remove()
        return sorted(names)


def detect() -> tuple[CgroupSupport | None, str]:
    """The cgroup interface this worker can use for its runs, or None and why not."""
    own = _own_paths()
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.exists():
        base = CGROUP_ROOT / own.get("", "/").lstrip("/")
        try:
            available = (base / "cgroup.controllers").read_text().split()
        except OSError as exc:
            return None, f"cgroup v2: {exc}"
        missing = [c for c in ("memory", "pids", "cpu") if c not in available]
        if missing:
            return None, f"cgroup v2 without the {', '.join(missing)} controller(s)"
        try:
            _enable_v2(base)
        except OSError as exc:
            return None, f"cgroup v2: cannot delegate controllers ({exc})"
        return CgroupSupport(2, {"": base}), "v2"
    bases: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        mount = next(
            (
                CGROUP_ROOT / name
                for name in (controller, *(("cpu,cpuacct", "cpuacct,cpu") if controller.startswith("cpu") else ()))
                if (CGROUP_ROOT / name / "cgroup.procs").exists()
            ),
            None,
        )
        if mount is None:
            return None, f"cgroup v1 without the {controller} controller"
        base = mount / own.get(controller, "/").lstrip("/")
        if not os.access(base, os.W_OK):
            return None, f"cgroup v1 {controller} hierarchy is not writable"
        bases[controller] = base
    return CgroupSupport(1, bases), "v1"


def _enable_v2(base: Path) -> None:
    """Enable memory, pids and cpu for the children of ``base``.  A v2 group with processes cannot
    also have controllers for children ("no internal processes"), so the worker moves itself into a
    leaf ``allele-worker`` first when it is the one holding ``base``."""
    wanted = "+memory +pids +cpu"
    try:
        _write(base / "cgroup.subtree_control", wanted)
        return
    except OSError:
        leaf = base / "allele-worker"
        leaf.mkdir(exist_ok=True)
        for pid in (base / "cgroup.procs").read_text().split():
            try:
                _write(leaf / "cgroup.procs", pid)
            except OSError:
                pass  # a process that is gone, or one of the kernel's
    _write(base / "cgroup.subtree_control", wanted)


class RunCgroup:
    """One run's group (one directory per v1 controller, or one v2 directory)."""

    def __init__(self, support: CgroupSupport, name: str) -> None:
        self.support, self.name = support, name
        self.dirs = {controller: base / name for controller, base in support.bases.items()}

    def create(self, *, memory_bytes: int, pids: int) -> None:
        for path in self.dirs.values():
            path.mkdir(mode=0o700, exist_ok=True)
        if self.support.version == 2:
            d = self.dirs[""]
            _write(d / "memory.max", str(memory_bytes))
            try:
                _write(d / "memory.swap.max", "0")
            except OSError:
                pass  # no swap accounting: nothing to forbid
            _write(d / "pids.max", str(pids))
            _write(d / "cpu.weight", str(CPU_WEIGHT_V2))
        else:
            _write(self.dirs["memory"] / "memory.limit_in_bytes", str(memory_bytes))
            _write(self.dirs["pids"] / "pids.max", str(pids))
            _write(self.dirs["cpu"] / "cpu.shares", str(CPU_SHARES_V1))

    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join this group (every controller; a hierarchy
        that holds several controllers once)."""
        return list(dict.fromkeys(str(path / "cgroup.procs") for path in self.dirs.values()))

    def memory_bytes(self) -> int | None:
        if self.support.version == 2:
            return _read_int(self.dirs[""] / "memory.current")
        return _read_int(self.dirs["memory"] / "memory.usage_in_bytes")

    def peak_memory_bytes(self) -> int | None:
        if self.support.version == 2:
            return _read_int(self.dirs[""] / "memory.peak")
        return _read_int(self.dirs["memory"] / "memory.max_usage_in_bytes")

    def cpu_seconds(self) -> float | None:
        if self.support.version == 2:
            usec = _read_int(self.dirs[""] / "cpu.stat", "usage_usec")
            return None if usec is None else usec / 1e6
        nsec = _read_int(self.dirs["cpuacct"] / "cpuacct.usage")
        return None if nsec is None else nsec / 1e9

    def oom_kills(self) -> int:
        if self.support.version == 2:
            return _read_int(self.dirs[""] / "memory.events", "oom_kill") or 0
        return _read_int(self.dirs["memory"] / "memory.oom_control", "oom_kill") or 0

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.dirs.values():
            try:
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def kill(self, rounds: int = 200) -> None:
        """SIGKILL every process of the group until it is empty (a fork loop cannot outrun it)."""
        if self.support.version == 2:
            try:
                _write(self.dirs[""] / "cgroup.kill", "1")
            except OSError:
                pass  # older kernel: fall through to the pid loop
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        for path in self.dirs.values():
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # the last process is still being torn down
