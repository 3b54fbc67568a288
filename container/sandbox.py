"""The sandboxed child process: limits as one value object, spawn, confinement, group kill, usage.

Parent side: ``Limits`` (every limit of one run), ``probe_isolation()`` (which measures this machine
can enforce, found once at start by running the real confinement code in a throw-away child),
``SandboxedProcess`` (spawn ``child.py``, read its output and messages with bounds, watchdog, kill,
``os.wait4`` usage).  Child side: ``confine(plan)``, called by ``child.py`` before any user code runs.

Measures, in the order the child applies them (each one that cannot be enforced is reported):

1. new network namespace (``unshare(CLONE_NEWNET)``: no interface but a down loopback);
2. new mount namespace with a size-limited tmpfs on the run directory, bound over ``/tmp``,
   ``/var/tmp`` and ``/dev/shm`` (files written there vanish with the run);
3. rlimits: CPU time, address space, file size, open files, processes, core dumps;
4. an unprivileged user of its own (uid ``SANDBOX_UID_BASE + slot``, no groups), ``no_new_privs``,
   death signal when the worker dies.

The environment is emptied by the parent (``PATH``, thread counts, ``HOME``); the report token never
reaches the child.  The child gets its own session, so its whole process group is killed at once;
processes of the run's uid that escaped the group are killed too.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = [
    "CHILD_SCRIPT",
    "Isolation",
    "Limits",
    "ProcessReport",
    "SandboxedProcess",
    "child_environment",
    "confine",
    "probe_isolation",
]

HERE = Path(__file__).resolve().parent
CHILD_SCRIPT = HERE / "child.py"

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
MIB = 1024 * 1024


# --------------------------------------------------------------------------- limits


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Every limit of one run.  Soft caps stop the GA at a generation boundary; hard ones kill."""

    time_seconds: float               # soft wall-time cap (caps.time_seconds)
    memory_mb: int                    # soft memory cap (caps.memory_mb), resident set size
    hard_time_seconds: float          # watchdog kills the process group past this wall time
    hard_memory_mb: int               # watchdog kills when the child's RSS passes this
    cpu_seconds: int                  # RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    address_space_mb: int             # RLIMIT_AS (allocation fails → MemoryError)
    file_size_mb: int = 64            # RLIMIT_FSIZE and the size of the run's tmpfs
    open_files: int = 256             # RLIMIT_NOFILE
    processes: int = 64               # RLIMIT_NPROC for the run's own uid (threads count)
    output_bytes: int = 64 * 1024     # kept of stdout+stderr
    output_flood_bytes: int = 64 * MIB  # more than this printed → killed, resource_limit_exceeded
    message_bytes: int = 256 * MIB    # the largest message the child may send (its outcome)

    @classmethod
    def from_caps(cls, *, time_seconds: float, memory_mb: int, population_size: int = 0,
                  **overrides: Any) -> Limits:
        grace = max(2.0, 0.1 * time_seconds)
        hard_memory = memory_mb + max(128, memory_mb // 8)
        values: dict[str, Any] = dict(
            time_seconds=float(time_seconds),
            memory_mb=int(memory_mb),
            hard_time_seconds=float(time_seconds) + grace,
            hard_memory_mb=hard_memory,
            cpu_seconds=int(math.ceil(time_seconds + grace)) + 5,
            address_space_mb=hard_memory + 384,
            message_bytes=max(16 * MIB, 64 * population_size + MIB),
        )
        values.update(overrides)
        return cls(**values)


# --------------------------------------------------------------------------- isolation report


@dataclass
class Isolation:
    """Which measures this machine enforces; ``notes`` says why the others are not."""

    user: bool = False
    network: bool = False
    filesystem: bool = False
    rlimits: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def health(self) -> dict[str, Any]:
        return {"user": self.user, "network": self.network, "filesystem": self.filesystem,
                "rlimits": list(self.rlimits)}


RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}


def child_environment(home: str) -> dict[str, str]:
    """The child's whole environment: nothing of the worker's (no secrets, no token)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


def _plan(*, workdir: str, limits: Limits, isolation: Isolation, uid: int | None,
          require: bool) -> dict[str, Any]:
    return {
        "workdir": workdir,
        "uid": uid,
        "network": isolation.network,
        "filesystem": isolation.filesystem,
        "require": require,  # fail the run when a measure that should work does not
        "rlimits": {
            "cpu": [limits.cpu_seconds, limits.cpu_seconds + 1],
            "as": [limits.address_space_mb * MIB] * 2,
            "fsize": [limits.file_size_mb * MIB] * 2,
            "nofile": [limits.open_files] * 2,
            "nproc": [limits.processes] * 2,
            "core": [0, 0],
        },
        "tmpfs_mb": limits.file_size_mb,
    }


def probe_isolation(*, uid: int | None = None, timeout: float = 20.0) -> Isolation:
    """Run the real confinement code in a throw-away child and see what holds."""
    isolation = Isolation(user=uid is not None, network=True, filesystem=True)
    limits = Limits.from_caps(time_seconds=30, memory_mb=512)
    import tempfile
    workdir = tempfile.mkdtemp(prefix="allele-probe-")
    try:
        if uid is not None:
            os.chown(workdir, uid, uid)
        plan = _plan(workdir=workdir, limits=limits, isolation=isolation, uid=uid, require=False)
        completed = subprocess.run(
            [sys.executable, "-I", str(CHILD_SCRIPT), "--probe", json.dumps(plan)],
            capture_output=True, timeout=timeout, env=child_environment(workdir), cwd=workdir,
            start_new_session=True, check=False)
        report = json.loads(completed.stdout.decode() or "{}")
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        report = {"failed": {"probe": f"{type(exc).__name__}: {exc}"}}
    finally:
        _remove_tree(workdir)
    failed: dict[str, str] = report.get("failed", {"probe": "no answer from the probe"})
    isolation.network = "network" not in failed and "namespaces" not in failed
    isolation.filesystem = "filesystem" not in failed and "namespaces" not in failed
    isolation.user = uid is not None and "user" not in failed
    isolation.rlimits = [name for name in RLIMITS if f"rlimit:{name}" not in failed]
    if uid is None:
        failed.setdefault("user", "the worker is not root, so the run keeps the worker's user")
        if "nproc" in isolation.rlimits:
            isolation.rlimits.remove("nproc")
            failed.setdefault("rlimit:nproc", "only enforced for a user of the run's own")
    for name, reason in sorted(failed.items()):
        label = {"network": "network namespace", "filesystem": "private tmpfs",
                 "namespaces": "namespaces", "user": "unprivileged user"}.get(name, name)
        isolation.notes.append(f"{label} unavailable: {reason}")
    return isolation


# --------------------------------------------------------------------------- child side


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _blocked_ancestor(path: str) -> str | None:
    """The first ancestor of ``path`` an unprivileged user cannot pass through, if any."""
    current = "/"
    for part in Path(path).parts[1:-1] if Path(path).is_file() else Path(path).parts[1:]:
        current = os.path.join(current, part)
        if not os.stat(current).st_mode & 0o001:
            return current
    return None


def _expose(libc: Any, paths: list[str]) -> None:
    """Make ``paths`` reachable for the run's user in this mount namespace only.

    A Python installed under a private home (``/root/.pyenv``) cannot be loaded by an unprivileged
    user.  The blocking directory is covered by an empty tmpfs (hiding the rest of it) and each
    needed path is bound back at its own place.  Runs in the child's private mount namespace, from
    the run's tmpfs as current directory.
    """
    staged: list[tuple[str, str]] = []
    covered: set[str] = set()
    for index, path in enumerate(dict.fromkeys(paths)):
        blocked = _blocked_ancestor(path)
        if blocked is None or any(path.startswith(s + "/") or path == s for _, s in staged):
            continue
        staged.append(_stage(libc, path, f".expose{index}"))
        covered.add(blocked)
    for blocked in covered:
        _check(libc.mount(b"tmpfs", blocked.encode(), b"tmpfs", MS_NOSUID | MS_NODEV,
                          b"size=1m,mode=0755"), f"cover {blocked}")
    _restore(libc, staged)


def _stage(libc: Any, path: str, stage: str) -> tuple[str, str]:
    """Bind ``path`` to a stage point in the current directory, before what hides it is mounted."""
    os.mkdir(stage, 0o700)
    _check(libc.mount(path.encode(), stage.encode(), None, MS_BIND | MS_REC, None), "stage")
    return stage, path


def _stage_under(libc: Any, paths: list[str], covers: list[str]) -> list[tuple[str, str]]:
    """Bind the needed paths that lie under a directory about to be covered (a checkout or virtual
    environment under ``/tmp``) to stage points in the current directory, so they can be put back."""
    staged: list[tuple[str, str]] = []
    for index, path in enumerate(dict.fromkeys(os.path.realpath(p) for p in paths)):
        if not any(path == c or path.startswith(c + "/") for c in covers):
            continue
        if any(path.startswith(kept + "/") for _, kept in staged):
            continue
        staged.append(_stage(libc, path, f".keep{index}"))
    return staged


def _restore(libc: Any, staged: list[tuple[str, str]]) -> None:
    """Put staged paths back at their own place (now on a tmpfs that covers what hid them)."""
    for stage, path in staged:
        previous = os.umask(0o022)
        try:
            os.makedirs(path, exist_ok=True)
        finally:
            os.umask(previous)
        _check(libc.mount(stage.encode(), path.encode(), None, MS_BIND | MS_REC, None), "restore")
        _check(libc.umount2(stage.encode(), 2), "unstage")  # MNT_DETACH
        os.rmdir(stage)


def confine(plan: dict[str, Any]) -> dict[str, str]:
    """Apply every measure of ``plan`` to this process; return the ones that failed (name → why).

    Called by the child as root (when the worker is root) before any user code is loaded.
    With ``plan["require"]`` a failure raises instead, so a run never goes ahead less confined
    than the startup probe promised.
    """
    failed: dict[str, str] = {}
    require = bool(plan.get("require"))

    def fail(name: str, exc: BaseException) -> None:
        if require:
            raise OSError(f"sandbox measure '{name}' failed: {exc}") from exc
        failed[name] = str(exc)

    libc = _libc()
    workdir = plan["workdir"]
    uid = plan.get("uid")
    os.umask(0o077)
    flags = (CLONE_NEWNET if plan.get("network") else 0) | (CLONE_NEWNS if plan.get("filesystem") else 0)
    if flags:
        try:
            _check(libc.unshare(flags), "unshare")
        except OSError as exc:
            # Try each namespace alone to say which one is missing.
            if require:
                fail("namespaces", exc)
            for name, flag in (("network", CLONE_NEWNET), ("filesystem", CLONE_NEWNS)):
                if flags & flag:
                    try:
                        _check(libc.unshare(flag), "unshare")
                    except OSError as exc2:
                        fail(name, exc2)
    if plan.get("filesystem") and "filesystem" not in failed and "namespaces" not in failed:
        try:
            _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
            owner = f",uid={uid},gid={uid}" if uid is not None else ""
            options = f"size={int(plan['tmpfs_mb'])}m,mode=0700{owner}".encode()
            _check(libc.mount(b"tmpfs", workdir.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
                   "mount tmpfs")
            os.chdir(workdir)  # the tmpfs root; "." stays valid once /tmp is covered
            covers = [t for t in ("/tmp", "/var/tmp", "/dev/shm") if os.path.isdir(t)]
            needed = [sys.base_prefix, sys.prefix, str(HERE)]
            kept = _stage_under(libc, needed, covers)
            for target in covers:
                _check(libc.mount(b".", target.encode(), None, MS_BIND, None), f"bind {target}")
            _restore(libc, kept)
            if uid is not None:
                _expose(libc, [sys.base_prefix, sys.prefix, str(HERE)])
        except OSError as exc:
            fail("filesystem", exc)
            os.chdir(workdir)
    else:
        os.chdir(workdir)
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:
        pass  # best effort: the child should be the first the kernel's OOM killer picks
    for name, (soft, hard) in plan["rlimits"].items():
        if name == "nproc" and uid is None:
            continue  # counts every process of the worker's own user: not applied
        try:
            resource.setrlimit(RLIMITS[name], (int(soft), int(hard)))
        except (OSError, ValueError) as exc:
            fail(f"rlimit:{name}", exc)
    if uid is not None:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            if os.getuid() != uid or os.geteuid() != uid:
                raise OSError("uid did not change")
            try:
                os.setuid(0)
            except PermissionError:
                pass
            else:
                raise OSError("could regain root")
        except OSError as exc:
            fail("user", exc)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return failed


# --------------------------------------------------------------------------- parent side


@dataclass
class ProcessReport:
    """What the parent knows once the child is gone."""

    exit_code: int | None            # exit status, or None when a signal ended it
    signal: int | None               # the signal that ended it
    killed: str | None               # why the parent killed it: time, memory, output, message, cancel
    outcome: dict[str, Any] | None   # the child's last ``outcome`` message (unvalidated)
    output: str                      # stdout+stderr, truncated
    output_truncated: bool
    cpu_seconds: float
    peak_memory_mb: float
    wall_ms: int


class _BoundedReader(threading.Thread):
    """Drain a pipe: keep the first ``keep`` bytes, count the rest."""

    def __init__(self, fd: int, keep: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep = fd, keep
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self.total += len(chunk)
                room = self.keep - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
        except OSError:
            pass
        finally:
            os.close(self.fd)


class _MessageReader(threading.Thread):
    """Read newline-separated JSON messages from the child; no line may pass ``limit`` bytes."""

    def __init__(self, fd: int, limit: int, on_message: Callable[[dict[str, Any]], None]) -> None:
        super().__init__(daemon=True)
        self.fd, self.limit, self.on_message = fd, limit, on_message
        self.overflow = False
        self.outcome: dict[str, Any] | None = None

    def run(self) -> None:
        buffer = bytearray()
        try:
            while chunk := os.read(self.fd, 1 << 20):
                if self.overflow:
                    continue
                buffer += chunk
                while (newline := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:newline])
                    del buffer[: newline + 1]
                    self._handle(line)
                if len(buffer) > self.limit:
                    self.overflow = True
                    buffer.clear()
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def _handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict):
            return
        if message.get("type") == "outcome":
            self.outcome = message
        elif message.get("type") == "progress":
            self.on_message(message)


def _read_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB
    except (OSError, ValueError, IndexError):
        return None


def _pids_of_uid(uid: int) -> list[int]:
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
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except (OSError, ValueError):
            continue
    return pids


def kill_uid(uid: int, rounds: int = 50) -> None:
    """SIGKILL every process of ``uid`` until none is left (a fork bomb cannot outrun this)."""
    for _ in range(rounds):
        pids = _pids_of_uid(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _remove_tree(path: str) -> None:
    import shutil
    shutil.rmtree(path, ignore_errors=True)


class SandboxedProcess:
    """One run's child: spawn, watch, kill, measure.  ``wait()`` blocks until it is gone."""

    def __init__(self, *, spec: dict[str, Any], limits: Limits, isolation: Isolation,
                 workdir: str, uid: int | None,
                 on_progress: Callable[[dict[str, Any]], None] | None = None,
                 poll_seconds: float = 0.05) -> None:
        self.spec, self.limits, self.isolation = spec, limits, isolation
        self.workdir, self.uid = workdir, uid
        self.on_progress = on_progress or (lambda message: None)
        self.poll_seconds = poll_seconds
        self.started_at = 0.0
        self.killed: str | None = None
        self.peak_rss_mb = 0.0
        self.ended = threading.Event()
        self.report: ProcessReport | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._kill_lock = threading.Lock()

    # -- lifecycle

    def start(self) -> None:
        plan = _plan(workdir=self.workdir, limits=self.limits, isolation=self.isolation,
                     uid=self.uid, require=True)
        self.started_at = time.monotonic()
        spec = dict(self.spec, started_at=self.started_at, sandbox=plan)
        spec_path = os.path.join(self.workdir, "job.json")
        fd = os.open(spec_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(spec, handle)
        if self.uid is not None:
            os.chown(self.workdir, self.uid, self.uid)
        os.chmod(self.workdir, 0o700)
        out_r, out_w = os.pipe()
        msg_r, msg_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-u", str(CHILD_SCRIPT), "--spec", spec_path,
                 "--msg-fd", str(msg_w)],
                stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, pass_fds=(msg_w,),
                env=child_environment("/tmp" if self.isolation.filesystem else self.workdir),
                cwd=self.workdir, start_new_session=True,
                close_fds=True)
        except BaseException:
            for fd_ in (out_r, out_w, msg_r, msg_w):
                os.close(fd_)
            raise
        finally:
            pass
        os.close(out_w)
        os.close(msg_w)
        self._output = _BoundedReader(out_r, self.limits.output_bytes)
        self._messages = _MessageReader(msg_r, self.limits.message_bytes, self._progress)
        self._output.start()
        self._messages.start()
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()

    def _progress(self, message: dict[str, Any]) -> None:
        generations = message.get("generations_completed")
        fitness = message.get("best_solution_fitness")
        if isinstance(generations, int) and not isinstance(generations, bool) and generations >= 0 \
                and (fitness is None or (isinstance(fitness, (int, float))
                                         and not isinstance(fitness, bool))):
            self.on_progress({"generations_completed": generations,
                              "best_solution_fitness": fitness})

    def _watch(self) -> None:
        assert self._proc is not None
        pid = self._proc.pid
        while not self.ended.wait(self.poll_seconds):
            rss = _read_rss_mb(pid)
            if rss is not None:
                self.peak_rss_mb = max(self.peak_rss_mb, rss)
            if time.monotonic() - self.started_at > self.limits.hard_time_seconds:
                self.kill("time")
            elif rss is not None and rss > self.limits.hard_memory_mb:
                self.kill("memory")
            elif self._output.total > self.limits.output_flood_bytes:
                self.kill("output")
            elif self._messages.overflow:
                self.kill("message")

    def kill(self, reason: str) -> None:
        """Kill the whole process group (and the run's uid); the first reason given is kept."""
        with self._kill_lock:
            if self._proc is None or self.ended.is_set():
                return
            if self.killed is None:
                self.killed = reason
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def wait(self) -> ProcessReport:
        """Reap the child with ``os.wait4`` (its own CPU time and peak RSS), then clean up."""
        assert self._proc is not None
        pid = self._proc.pid
        _, status, usage = os.wait4(pid, 0)
        wall_ms = int((time.monotonic() - self.started_at) * 1000)
        self._proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from reaping again
        with self._kill_lock:
            self.ended.set()
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever it left in its group
        except (ProcessLookupError, PermissionError):
            pass
        if self.uid is not None:
            kill_uid(self.uid)
        self._output.join(timeout=5)
        self._messages.join(timeout=5)
        kept = bytes(self._output.kept)
        truncated = self._output.total > len(kept)
        output = kept.decode("utf-8", errors="replace")
        if truncated:
            marker = "\n[output truncated]\n"
            output = kept[: self.limits.output_bytes - len(marker)].decode("utf-8", "replace") + marker
        self.report = ProcessReport(
            exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            killed=self.killed,
            outcome=self._messages.outcome,
            output=output,
            output_truncated=truncated,
            cpu_seconds=usage.ru_utime + usage.ru_stime,
            peak_memory_mb=max(self.peak_rss_mb, usage.ru_maxrss / 1024),
            wall_ms=wall_ms,
        )
        return self.report

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None


def set_dumpable(flag: bool) -> None:
    """``PR_SET_DUMPABLE 0`` makes this process's /proc files root-owned: a child running as the
    same user cannot read ``/proc/<worker>/environ`` either."""
    _libc().prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)


def describe(isolation: Isolation) -> dict[str, Any]:
    return asdict(isolation)
