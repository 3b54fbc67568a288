"""Parent side of the sandbox: the startup probe, spawning one run's child, reading its output and
messages with bounds, the watchdog, the group kill and the ``wait4`` usage.

The child gets its ``wire.ChildSpec`` (``job.json``: the job, when it started, its ``SandboxPlan``) and
answers on its message channel (``wire.ChildMessage``): progress, checked here before it goes on, and
its outcome, kept unvalidated for ``worker.completion``."""

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

from ..wire import (
    MAX_OBJECTIVES,
    ChildJob,
    ChildSpec,
    JSONObject,
    ProbeAnswer,
    Progress,
    is_count,
    is_finite_number,
    is_number,
)
from .cgroups import CgroupSupport, RunCgroup
from .confine import PACKAGE, PR_SET_DUMPABLE, load_libc
from .forks import ForkServer
from .plan import MIB, RLIMITS, Isolation, Limits, child_environment, make_plan
from .uids import kill_uids, pids_of_uids

CHILD = [sys.executable, "-I", "-u", "-m", "allele_worker.child"]
MAX_PROGRESS_OBJECTIVES = MAX_OBJECTIVES  # the most objective values a progress message may carry


def probe_isolation(
    *, uid: int | None = None, cgroups: CgroupSupport | None = None, cgroup_note: str = "", timeout: float = 30.0
) -> Isolation:
    """Run the real confinement code in a throw-away child (in a control group of its own when the
    machine has them) and see which measures hold."""
    isolation = Isolation(
        user=uid is not None,
        network=True,
        pid_namespace=True,
        minimal_root=True,
        syscall_filter=True,
        cgroup=f"v{cgroups.version}" if cgroups else None,
    )
    limits = Limits.from_caps(time_seconds=30, memory_mb=512)
    workdir = tempfile.mkdtemp(prefix="allele-probe-")
    group = cgroups.group(f"allele-probe-{os.getpid()}") if cgroups else None
    failed: dict[str, str] = {}
    marker = ""
    try:
        if uid is not None:
            os.chown(workdir, uid, uid)
        if group is not None:
            group.create(memory_bytes=limits.hard_memory_mb * MIB, pids=limits.processes)
        plan = make_plan(
            workdir=workdir,
            limits=limits,
            isolation=isolation,
            uid=uid,
            require=False,
            cgroup_procs=group.procs_files() if group else None,
        )
        marker = os.path.join(os.path.dirname(workdir), f"allele-probe-marker-{os.getpid()}")
        with open(marker, "w") as handle:
            handle.write("a file of the host the run must not see")
        hidden = [
            marker,
            "/etc/hostname",
            "/etc/hosts",
            os.path.join(os.path.dirname(PACKAGE), "pyproject.toml"),
            os.path.expanduser("~/.bashrc"),
        ]
        plan["probe_hidden"] = [path for path in hidden if os.path.exists(path)]
        completed = subprocess.run(
            [*CHILD, "--probe", json.dumps(plan)],
            capture_output=True,
            timeout=timeout,
            env=child_environment(workdir),
            cwd=workdir,
            start_new_session=True,
            check=False,
        )
        answer: ProbeAnswer = json.loads(completed.stdout.decode() or "{}")
        failed = answer.get("failed", {"probe": "no answer"})
        if group is not None and group.cpu_seconds() is None:
            failed["cgroup"] = "the run's group reports no CPU usage"
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        failed = {"probe": f"{type(exc).__name__}: {exc}"}
    finally:
        if group is not None:
            group.kill()
            group.remove()
        _remove_tree(workdir)
        if os.path.exists(marker):
            os.unlink(marker)
    if "probe" in failed:
        for name in ("network", "pid_namespace", "minimal_root", "syscall_filter", "user"):
            failed.setdefault(name, failed["probe"])
    isolation.network = "network" not in failed
    isolation.pid_namespace = "pid_namespace" not in failed
    isolation.minimal_root = "minimal_root" not in failed
    isolation.syscall_filter = "syscall_filter" not in failed
    isolation.user = uid is not None and "user" not in failed
    if cgroups is None:
        failed.setdefault("cgroup", cgroup_note or "no control groups")
    elif "cgroup" in failed:
        isolation.cgroup = None
    isolation.rlimits = [name for name in RLIMITS if f"rlimit:{name}" not in failed]
    if uid is None:
        failed.setdefault("user", "the worker is not root, so the run keeps the worker's user")
        if "nproc" in isolation.rlimits:
            isolation.rlimits.remove("nproc")
            failed.setdefault("rlimit:nproc", "only enforced for a user of the run's own")
    for name, reason in sorted(failed.items()):
        label = {
            "network": "network namespace",
            "pid_namespace": "PID namespace",
            "minimal_root": "minimal root",
            "syscall_filter": "syscall filter",
            "user": "unprivileged user",
            "cgroup": "control group (memory, processes and CPU over the process tree)",
        }.get(name, name)
        isolation.notes.append(f"{label} unavailable: {reason}")
    return isolation


# --------------------------------------------------------------------------- parent side


@dataclass
class ProcessReport:
    """What the parent knows once the child is gone."""

    exit_code: int | None  # exit status, or None when a signal ended it
    signal: int | None  # the signal that ended it
    killed: str | None  # why the parent killed it: time, memory, output, message(s), cancel
    outcome: JSONObject | None  # the child's last ``outcome`` message (unvalidated)
    output: str  # stdout+stderr, truncated
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
    """Read newline-separated JSON messages from the child; no line may pass ``limit`` bytes, and no
    more than ``burst`` + ``per_second`` × the seconds since the start may come (user code can write
    to the channel too, and every message costs this process — the worker — CPU the run is not billed)."""

    def __init__(
        self, fd: int, limit: int, on_message: Callable[[JSONObject], None], *, per_second: float, burst: int
    ) -> None:
        super().__init__(daemon=True)
        self.fd, self.limit, self.on_message = fd, limit, on_message
        self.per_second, self.burst = per_second, burst
        self.overflow = False
        self.flooded = False
        self.outcome: JSONObject | None = None

    def run(self) -> None:
        buffer = bytearray()
        started, count = time.monotonic(), 0
        try:
            while chunk := os.read(self.fd, 1 << 20):
                if self.overflow or self.flooded:
                    continue
                count += chunk.count(b"\n")
                if count > self.burst + self.per_second * (time.monotonic() - started):
                    self.flooded = True
                    buffer.clear()
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


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _tree_rss_mb(uid: int) -> float:
    """Resident memory summed over every process of the run's uid (when there is no cgroup)."""
    return sum(_read_rss_mb(pid) or 0.0 for pid in pids_of_uids(uid, 1))


class SandboxedProcess:
    """One run's child: spawn, watch, kill, measure.  ``wait()`` blocks until it is gone.

    With ``cgroups`` the run gets a control group of its own named ``group_name``: memory is capped
    and measured over the whole tree, processes by ``pids.max``, CPU billed is the group's total, and
    the end of the run kills every process left in it."""

    def __init__(
        self,
        *,
        job: ChildJob,
        limits: Limits,
        isolation: Isolation,
        workdir: str,
        uid: int | None,
        cgroups: CgroupSupport | None = None,
        group_name: str | None = None,
        forks: ForkServer | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        poll_seconds: float = 0.05,
    ) -> None:
        self.job, self.limits, self.isolation = job, limits, isolation
        self.workdir, self.uid = workdir, uid
        self.group: RunCgroup | None = None
        if cgroups is not None and isolation.cgroup is not None:
            self.group = cgroups.group(group_name or f"allele-x-{os.path.basename(workdir)}")
        self.on_progress = on_progress or (lambda message: None)
        self.poll_seconds = poll_seconds
        self.started_at = 0.0
        self.killed: str | None = None
        self.peak_rss_mb = 0.0
        self.ended = threading.Event()
        self.report: ProcessReport | None = None
        self.forks = forks
        self._pid: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._kill_lock = threading.Lock()

    # -- lifecycle

    def start(self) -> None:
        if self.group is not None:
            # The kernel's cap sits a little above the watchdog's, so the watchdog normally stops the
            # run first (clear reason); the kernel's OOM killer is the backstop for a fast allocation.
            self.group.create(memory_bytes=(self.limits.hard_memory_mb + 64) * MIB, pids=self.limits.processes)
        plan = make_plan(
            workdir=self.workdir,
            limits=self.limits,
            isolation=self.isolation,
            uid=self.uid,
            require=True,
            cgroup_procs=self.group.procs_files() if self.group else None,
        )
        self.started_at = time.monotonic()
        spec: ChildSpec = {**self.job, "started_at": self.started_at, "sandbox": plan}
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
            if self.forks is not None:  # a fork of the warm parent (it confines itself the same way)
                self._pid = self.forks.spawn(spec_path, out_w, msg_w)
            else:
                self._proc = subprocess.Popen(
                    [*CHILD, "--spec", spec_path, "--msg-fd", str(msg_w)],
                    stdin=subprocess.DEVNULL,
                    stdout=out_w,
                    stderr=out_w,
                    pass_fds=(msg_w,),
                    env=child_environment("/tmp" if self.isolation.minimal_root else self.workdir),
                    cwd=self.workdir,
                    start_new_session=True,
                    close_fds=True,
                )
                self._pid = self._proc.pid
        except BaseException:
            for fd_ in (out_r, out_w, msg_r, msg_w):
                os.close(fd_)
            self._cleanup_group()
            raise
        os.close(out_w)
        os.close(msg_w)
        self._output = _BoundedReader(out_r, self.limits.output_bytes)
        self._messages = _MessageReader(
            msg_r,
            self.limits.message_bytes,
            self._progress,
            per_second=self.limits.messages_per_second,
            burst=self.limits.message_burst,
        )
        self._output.start()
        self._messages.start()
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()

    def _progress(self, message: JSONObject) -> None:
        """A progress message (``wire.ProgressMessage``) as the progress report it becomes, if it has
        that shape (user code can write to the channel too)."""
        generations = message.get("generations_completed")
        fitness = message.get("best_solution_fitness")
        if is_count(generations) and (fitness is None or is_number(fitness)):
            progress: Progress = {"generations_completed": generations, "best_solution_fitness": fitness}
            for key in ("best_solution_objectives", "best_objectives"):
                objectives = message.get(key)
                if isinstance(objectives, list) and 0 < len(objectives) <= MAX_PROGRESS_OBJECTIVES:
                    finite = [v for v in objectives if is_finite_number(v)]
                    if len(finite) == len(objectives):
                        progress[key] = finite
            self.on_progress(progress)

    def memory_mb(self) -> float | None:
        """The run's memory now: its group's, else the sum over its uid's processes, else the child's."""
        if self.group is not None:
            used = self.group.memory_bytes()
            return None if used is None else used / MIB
        if self.uid is not None:
            return _tree_rss_mb(self.uid)
        return _read_rss_mb(self._pid) if self._pid else None

    def _watch(self) -> None:
        while not self.ended.wait(self.poll_seconds):
            used = self.memory_mb()
            if used is not None:
                self.peak_rss_mb = max(self.peak_rss_mb, used)
            if time.monotonic() - self.started_at > self.limits.hard_time_seconds:
                self.kill("time")
            elif used is not None and used > self.limits.hard_memory_mb:
                self.kill("memory")
            elif self._output.total > self.limits.output_flood_bytes:
                self.kill("output")
            elif self._messages.overflow:
                self.kill("message")
            elif self._messages.flooded:
                self.kill("messages")

    def kill(self, reason: str) -> None:
        """Kill the whole run (its group, process group and uid); the first reason given is kept."""
        with self._kill_lock:
            if self._pid is None or self.ended.is_set():
                return
            if self.killed is None:
                self.killed = reason
            self._kill_tree()

    def _kill_tree(self) -> None:
        assert self._pid is not None
        # The relay, then its process group: the relay's death ends the namespace. By its pid too, for a
        # kill that lands before the fresh fork has made its own session (the fork server answers with
        # the pid first): no group of that id exists then, nor a cgroup member or a process of the uid.
        for kill in (os.kill, os.killpg):
            try:
                kill(self._pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.group is not None:
            self.group.kill()
        if self.uid is not None:
            kill_uids(self.uid)

    def wait(self) -> ProcessReport:
        """Reap the child, kill whatever of the run is left, and measure it."""
        assert self._pid is not None
        if self.forks is not None:
            exit_ = self.forks.wait(self._pid)
            status, own_cpu, own_maxrss_kb = exit_.status, exit_.cpu_seconds, exit_.maxrss_kb
        else:
            assert self._proc is not None
            _, status, usage = os.wait4(self._pid, 0)
            own_cpu, own_maxrss_kb = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
            self._proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from reaping again
        wall_ms = int((time.monotonic() - self.started_at) * 1000)
        with self._kill_lock:
            self.ended.set()
            self._kill_tree()
        cpu_seconds = own_cpu  # the relay and every process its init reaped
        peak_mb = max(self.peak_rss_mb, own_maxrss_kb / 1024)
        if self.group is not None:
            cpu_seconds = max(cpu_seconds, self.group.cpu_seconds() or 0.0)
            peak_mb = max(peak_mb, (self.group.peak_memory_bytes() or 0) / MIB)
            if self.killed is None and self.group.oom_kills() > 0:
                self.killed = "memory"  # the kernel stopped the tree at the group's memory cap
        self._cleanup_group()
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
            cpu_seconds=cpu_seconds,
            peak_memory_mb=peak_mb,
            wall_ms=wall_ms,
        )
        return self.report

    def _cleanup_group(self) -> None:
        if self.group is not None:
            self.group.kill()
            self.group.remove()

    @property
    def pid(self) -> int | None:
        return self._pid


def set_dumpable(flag: bool) -> None:
    """``PR_SET_DUMPABLE 0`` makes this process's /proc files root-owned: a child running as the
    same user cannot read ``/proc/<worker>/environ`` either."""
    load_libc().prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)
