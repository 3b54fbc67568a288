"""Parent side of the sandbox: the startup probe, spawning one run's child, reading its output and
messages with bounds, the watchdog, the group kill and the ``wait4`` usage."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .confine import PR_SET_DUMPABLE, load_libc
from .plan import MIB, RLIMITS, Isolation, Limits, child_environment, make_plan

CHILD = [sys.executable, "-I", "-u", "-m", "allele_worker.child"]

def probe_isolation(*, uid: int | None = None, timeout: float = 20.0) -> Isolation:
    """Run the real confinement code in a throw-away child and see what holds."""
    isolation = Isolation(user=uid is not None, network=True, filesystem=True)
    limits = Limits.from_caps(time_seconds=30, memory_mb=512)
    workdir = tempfile.mkdtemp(prefix="allele-probe-")
    try:
        if uid is not None:
            os.chown(workdir, uid, uid)
        plan = make_plan(workdir=workdir, limits=limits, isolation=isolation, uid=uid, require=False)
        completed = subprocess.run(
            [*CHILD, "--probe", json.dumps(plan)],
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
        plan = make_plan(workdir=self.workdir, limits=self.limits, isolation=self.isolation,
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
                [*CHILD, "--spec", spec_path, "--msg-fd", str(msg_w)],
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
    load_libc().prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)
