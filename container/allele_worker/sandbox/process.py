"""Parent side of the sandbox: the startup probe, spawning one run's child, reading its output and
messages with bounds, the watchdog, the group kill and the ``wait4`` usage.

The child gets its ``wire.ChildSpec`` (the job, when it started, its ``SandboxPlan``, its
``ChannelLimits``) through a file descriptor of its own, and a store (``store.Store``).  Its relay —
the run's own process that reads what the job writes (``child.collector``) — answers on the channel
(``wire.RelayMessage``): progress, checked again here before it goes on, a limit the job passed, and
where in the store it put the validated outcome (``wire.CollectedOutcome``), which is read here (a
bounded summary) and kept unvalidated for ``worker.completion``; the outcome's parts stay in the store."""

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
    CHANNEL_LINE_BYTES,
    MAX_OBJECTIVES,
    SUMMARY_BYTES,
    CheckpointMessage,
    ChildJob,
    ChildSpec,
    DataMount,
    JSONObject,
    ProbeAnswer,
    Progress,
    checked_checkpoint,
    checked_progress,
)
from .cgroups import CgroupSupport, RunCgroup
from .confine import PACKAGE, PR_SET_DUMPABLE, load_libc
from .forks import ForkServer
from .plan import MIB, RLIMITS, Isolation, Limits, child_environment, make_plan
from .store import Store, memory_file
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
    killed: str | None  # why it was killed: time, memory, output, message(s), outcome, cancel
    # The relay's summary of the job's outcome (``wire.CollectedOutcome``, unvalidated); {} when the job
    # sent an outcome that was not valid; None when it sent none.
    outcome: JSONObject | None
    output: str  # stdout+stderr, truncated
    output_truncated: bool
    cpu_seconds: float
    peak_memory_mb: float
    wall_ms: int
    store: Store | None = None  # the outcome's parts (the caller closes it)


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
    """Read the relay's newline-separated JSON messages (``wire.RelayMessage``).  No line may pass
    ``wire.CHANNEL_LINE_BYTES`` (every byte is searched for a newline once: linear in what arrives),
    and no more than ``burst`` + ``per_second`` × the seconds since the start may come — the relay
    already holds the job to both (it reads what user code writes, in the run's cgroup, and forwards
    only checked progress); these are the worker's own backstop, every message costing it CPU the run
    is not billed."""

    def __init__(self, fd: int, on_message: Callable[[JSONObject], None], *, per_second: float, burst: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.on_message = fd, on_message
        self.per_second, self.burst = per_second, burst
        self.overflow = False
        self.flooded = False
        self.limit: str | None = None  # the relay stopped the run: "message", "outcome" or "messages"
        self.outcome: JSONObject | None = None  # the relay's last message, where the outcome is

    def run(self) -> None:
        buffer = bytearray()
        scanned = 0
        started, count = time.monotonic(), 0
        try:
            while chunk := os.read(self.fd, 65536):
                if self.overflow or self.flooded:
                    continue
                buffer += chunk
                start = 0
                while (newline := buffer.find(b"\n", scanned)) >= 0:
                    count += 1
                    if newline - start > CHANNEL_LINE_BYTES:
                        self.overflow = True
                        break
                    self._handle(bytes(buffer[start:newline]))
                    start = scanned = newline + 1
                if self.overflow:
                    buffer.clear()
                    continue
                del buffer[:start]
                scanned = len(buffer)
                if count > self.burst + self.per_second * (time.monotonic() - started):
                    self.flooded = True
                    buffer.clear()
                elif len(buffer) > CHANNEL_LINE_BYTES:
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
        kind = message.get("type")
        if kind == "outcome":
            self.outcome = message
        elif kind in ("progress", "checkpoint"):
            self.on_message(message)
        elif kind == "limit" and message.get("reason") in ("message", "outcome", "messages"):
            self.limit = self.limit or message["reason"]


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


def _copy(source: int, target: int, size: int) -> None:
    """The first ``size`` bytes of ``source`` appended to ``target``, a MiB at a time."""
    at = 0
    while at < size:
        piece = memoryview(os.pread(source, min(MIB, size - at), at))
        if not piece:
            raise OSError("the start population is shorter than it was")
        at += len(piece)
        while piece:
            piece = piece[os.write(target, piece) :]


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
        data_files: list[DataMount] | None = None,
        slots: tuple[Store, Store, Store] | None = None,
        on_checkpoint: Callable[[CheckpointMessage], None] | None = None,
        places: int = 1,
        start_population: Store | None = None,
    ) -> None:
        self.job, self.limits, self.isolation = job, limits, isolation
        # A fetched start population's JSON (``job["initial_population_bytes"]`` long): copied after
        # the spec, unread (the job parses it).
        self.start_population = start_population
        self.data_files = data_files or []  # bound read-only at /data/<name> in the run's minimal root
        self.places = places  # the CPUs the run takes: its thread pools' size
        self.workdir, self.uid = workdir, uid
        self.group: RunCgroup | None = None
        if cgroups is not None and isolation.cgroup is not None:
            self.group = cgroups.group(group_name or f"allele-x-{os.path.basename(workdir)}")
        self.on_progress = on_progress or (lambda message: None)
        # A durable run's two checkpoint slots (memfds the job writes its checkpoints into, in turn),
        # its drain byte (a memfd the worker sets), and who hears of each checkpoint
        # (docs/architecture.md, "Durable runs").
        self.slots = slots
        self.on_checkpoint = on_checkpoint or (lambda message: None)
        self.poll_seconds = poll_seconds
        self.started_at = 0.0
        self.killed: str | None = None
        self.peak_rss_mb = 0.0
        self.ended = threading.Event()
        self.report: ProcessReport | None = None
        self.forks = forks
        self.store: Store | None = None
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
            data_files=self.data_files,
        )
        self.started_at = time.monotonic()
        spec: ChildSpec = {
            **self.job,
            "started_at": self.started_at,
            "places": self.places,
            "sandbox": plan,
            "channel": self.limits.channel(),
        }
        job_checkpoint = self.job.get("checkpoint")
        if job_checkpoint is not None and self.slots is not None:
            spec["channel"]["checkpoint_bytes"] = job_checkpoint["max_bytes"]
        # The child reads its job from a file descriptor of its own: no file of it, and nothing of
        # it passes through the fork server.
        spec_fd = memory_file("allele-job")
        self.store = Store()
        try:
            # One line of JSON (json.dumps writes no newline), then the start population's bytes.
            data = memoryview(json.dumps(spec).encode() + b"\n")
            while data:
                data = data[os.write(spec_fd, data) :]
            if self.start_population is not None:
                _copy(self.start_population.fd, spec_fd, self.job.get("initial_population_bytes", 0))
            os.lseek(spec_fd, 0, os.SEEK_SET)
        except BaseException:
            os.close(spec_fd)
            self._close_store()
            self._cleanup_group()
            raise
        if self.uid is not None:
            os.chown(self.workdir, self.uid, self.uid)
        os.chmod(self.workdir, 0o700)
        out_r, out_w = os.pipe()
        msg_r, msg_w = os.pipe()
        try:
            if self.forks is not None:  # a fork of the warm parent (it confines itself the same way)
                slot_fds = [slot.fd for slot in self.slots] if self.slots is not None else []
                self._pid = self.forks.spawn([out_w, msg_w, spec_fd, self.store.fd, *slot_fds])
            else:
                self._proc = subprocess.Popen(
                    [
                        *CHILD,
                        "--spec-fd",
                        str(spec_fd),
                        "--msg-fd",
                        str(msg_w),
                        "--store-fd",
                        str(self.store.fd),
                        *(["--checkpoint-fds", ",".join(str(slot.fd) for slot in self.slots)] if self.slots else []),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=out_w,
                    stderr=out_w,
                    pass_fds=(msg_w, spec_fd, self.store.fd, *(slot.fd for slot in self.slots or ())),
                    env=child_environment("/tmp" if self.isolation.minimal_root else self.workdir, self.places),
                    cwd=self.workdir,
                    start_new_session=True,
                    close_fds=True,
                )
                self._pid = self._proc.pid
        except BaseException:
            for fd_ in (out_r, out_w, msg_r, msg_w):
                os.close(fd_)
            self._close_store()
            self._cleanup_group()
            raise
        finally:
            os.close(spec_fd)
        os.close(out_w)
        os.close(msg_w)
        self._output = _BoundedReader(out_r, self.limits.output_bytes)
        self._messages = _MessageReader(
            msg_r,
            self._progress,
            per_second=self.limits.messages_per_second,
            burst=self.limits.message_burst + 8,  # the relay's own (a limit, the outcome) beside the job's
        )
        self._output.start()
        self._messages.start()
        self._watchdog = threading.Thread(target=self._watch, daemon=True)
        self._watchdog.start()

    def _progress(self, message: JSONObject) -> None:
        """A progress message (``wire.ProgressMessage``) as the progress report it becomes, if it has
        that shape (``wire.checked_progress``: the relay checked it, and this is checked again); a
        checkpoint message (``wire.CheckpointMessage``) checked again the same way."""
        if message.get("type") == "checkpoint":
            job_checkpoint = self.job.get("checkpoint")
            checked = checked_checkpoint(message, job_checkpoint["max_bytes"]) if job_checkpoint else None
            if checked is not None and self.slots is not None:
                self.on_checkpoint(checked)
            return
        progress = checked_progress(message)
        if progress is not None:
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
            elif self._messages.limit is not None:
                self.kill(self._messages.limit)  # the relay stopped the job; the rest of the tree too
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
        if self.killed is None:  # the channel's limits hold also when the run ended before a poll saw them
            messages = self._messages
            self.killed = messages.limit or (
                "message" if messages.overflow else "messages" if messages.flooded else None
            )
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
            outcome=self._collected(),
            output=output,
            output_truncated=truncated,
            cpu_seconds=cpu_seconds,
            peak_memory_mb=peak_mb,
            wall_ms=wall_ms,
            store=self.store,
        )
        return self.report

    def _collected(self) -> JSONObject | None:
        message = self._messages.outcome
        return None if message is None or self.store is None else collected_summary(self.store, message)

    def _close_store(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def _cleanup_group(self) -> None:
        if self.group is not None:
            self.group.kill()
            self.group.remove()

    @property
    def pid(self) -> int | None:
        return self._pid


def collected_summary(store: Store, message: JSONObject) -> JSONObject:
    """The relay's summary of the job's outcome (``wire.CollectedOutcome``, unvalidated), read from the
    store where its last message (``wire.CollectedMessage``) says; {} when the relay found the outcome
    not valid, or the summary is not where it says or not a JSON object of at most SUMMARY_BYTES."""
    part = store.part(message.get("at"))
    if part is None or part.length > SUMMARY_BYTES:
        return {}
    try:
        summary = json.loads(part.read())
    except (ValueError, RecursionError):
        return {}
    return summary if isinstance(summary, dict) else {}


def set_dumpable(flag: bool) -> None:
    """``PR_SET_DUMPABLE 0`` makes this process's /proc files root-owned: a child running as the
    same user cannot read ``/proc/<worker>/environ`` either."""
    load_libc().prctl(PR_SET_DUMPABLE, 1 if flag else 0, 0, 0, 0)
