"""Child side of the sandbox: ``confine(plan)`` puts the calling process into the run's sandbox.

It needs nothing from the parent but the plan (``wire.SandboxPlan``, plain JSON) and no ``exec``, so it works in a fresh
interpreter and in a child forked from a warm parent alike.  It must be called while the process has
one thread.  Three processes come out of it; only the last one returns:

* **relay** (the process that called it; root, outside the PID namespace, in the run's cgroup): joins
  the run's cgroup, unshares the namespaces, forks the init, then does the caller's ``relay`` work
  (``child.collector``: it reads the job's messages; it never runs user code) and exits as the job
  did.  Killing it kills everything (the init has a death signal tied to it).  With a ``relay`` but
  no PID namespace (a machine without them) it forks the job itself.
* **init** (PID 1 of the run's new PID namespace; root in the run's mount namespace): mounts a fresh
  ``/proc`` and the minimal root, ``pivot_root``s into it, forks the job, reaps every process of the
  namespace, and when the job ends kills what is left — the kernel kills the whole namespace when
  PID 1 exits — so a double-forked process never outlives its run.
* **job**: rlimits, the run's own unprivileged uid, ``no_new_privs``, death signal, the syscall
  filter (``syscalls.py``: no namespaces of its own, no io_uring, bpf, …); ``confine``
  returns in it and the caller runs the user's code.

The minimal root (a read-only tmpfs): the system's ``/usr`` (and the ``/bin``, ``/lib*`` links or
directories), the Python installation(s) and the worker package — read-only, bound at their own paths;
``/dev`` with null, zero, full, random and urandom only; a fresh ``/proc`` that shows the run's own
processes only; a private size-capped writable ``/tmp`` (also ``HOME``, ``TMPDIR``, ``/dev/shm`` and
``/var/tmp``); an ``/etc`` with ``passwd``/``group`` entries for the run's user; ``/data``, read-only,
holding the run's own data files (each a file of the worker's cache bound read-only at /data/<name>;
empty for a run without any). Nothing else of the host: no checkout, no ``.wrangler``, no ``/root``, no
other run, not the data cache.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn, Protocol

from ..wire import DataMount, SandboxPlan
from . import syscalls
from .plan import RLIMITS

PACKAGE = str(Path(__file__).resolve().parent.parent)  # the worker's code: bound into the child's view

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
DATA = "/data"  # where a run's data files are (docs/api.md#data-files)
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())
DEVICES = ("null", "zero", "full", "random", "urandom")


class ConfineError(OSError):
    """A measure the plan requires could not be applied."""


class Relay(Protocol):
    """What the relay does while the run lives: called with the pid of the process it forked (the
    run's init, or its job without a PID namespace), in the relay, with only ``keep_fds`` (and its
    standard streams) open; it returns when its work is done, and the relay then waits for that
    process and exits as the job did."""

    keep_fds: tuple[int, ...]

    def __call__(self, child: int) -> None: ...


def load_libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _die_with_parent(libc: ctypes.CDLL, parent: int) -> None:
    """SIGKILL this process when its parent dies (and if the parent is already gone, now)."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def confine(plan: SandboxPlan, relay: Relay | None = None) -> dict[str, str]:
    """Apply ``plan`` (see plan.make_plan); return, in the job process, the measures that failed.
    ``relay``: the relay's work (it never returns in the relay, which exits as the job did).

    With ``plan["require"]`` any failure raises ``ConfineError`` (in the relay) or ends the run with
    exit status 70 (later), so a run never goes ahead less confined than the startup probe promised.
    """
    libc = load_libc()
    failed: dict[str, str] = {}
    require = plan["require"]

    def fail(name: str, exc: BaseException) -> None:
        if require:
            raise ConfineError(f"sandbox measure '{name}' failed: {exc}") from exc
        failed[name] = str(exc)

    os.umask(0o077)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _die_with_parent(libc, os.getppid())
    for procs in plan["cgroup_procs"]:
        try:
            join_cgroup(procs)
        except OSError as exc:
            fail("cgroup", exc)
    flags = 0
    for name, wanted, flag in (
        ("network", plan["network"], CLONE_NEWNET),
        ("pid_namespace", plan["pid_namespace"], CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS),
        ("minimal_root", plan["minimal_root"], CLONE_NEWNS),
    ):
        if wanted:
            try:
                _check(libc.unshare(flag), f"unshare {name}")
                flags |= flag
            except OSError as exc:
                fail(name, exc)
    if flags & CLONE_NEWPID or relay is not None:
        _relay(libc, relay, pid_namespace=bool(flags & CLONE_NEWPID))  # returns in the init (or the job) only
    if flags & CLONE_NEWNS:
        try:
            _minimal_root(libc, plan, pid_namespace=bool(flags & CLONE_NEWPID))
        except OSError as exc:
            fail("minimal_root", exc)
            os.chdir(plan["workdir"])
    else:
        os.chdir(plan["workdir"])
    if flags & CLONE_NEWPID:
        _init(libc)  # returns in the job only
    _drop(libc, plan, fail)
    return failed


def join_cgroup(procs: str) -> None:
    """Move this process into the group whose ``cgroup.procs`` is ``procs``.

    A process of one thread (the relay always is: it is a fresh fork) moves itself through cgroup v1's
    ``tasks`` file ("0": the calling thread, which is the whole process): the kernel then skips its
    global threadgroup lock, whose every write waits out an RCU grace period (10–25 ms on a 2-CPU VM,
    on the path to every run's start). Otherwise — cgroup v2, whose domain groups take processes only,
    or more than one thread — the pid goes to ``cgroup.procs``. Either way every process the relay
    forks later starts in the group."""
    tasks = os.path.join(os.path.dirname(procs), "tasks")
    if len(os.listdir("/proc/self/task")) == 1 and os.path.exists(tasks):
        path, value = tasks, "0"
    else:
        path, value = procs, str(os.getpid())
    with open(path, "w") as handle:
        handle.write(value)


# --------------------------------------------------------------------------- relay and init


def _relay(libc: ctypes.CDLL, work: Relay | None, *, pid_namespace: bool) -> None:
    """Fork the namespace's init (or, without a PID namespace, the job); in this process do ``work``,
    wait for it and exit as the job did."""
    status_r, status_w = os.pipe() if pid_namespace else (-1, -1)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        if pid_namespace:
            os.close(status_r)
            os.dup2(status_w, 1023)  # the init reports the job's raw wait status here
            os.close(status_w)
        # The relay is in the parent PID namespace: seen from a new one, our parent is pid 0.
        _die_with_parent(libc, 0 if pid_namespace else parent)
        return
    if pid_namespace:
        os.close(status_w)
    keep = {status_r, *(work.keep_fds if work is not None else ())}
    for fd in range(3, 1024):  # hold nothing of the run's but what the work needs
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    if work is not None:
        try:
            work(pid)
        except BaseException:  # noqa: BLE001 - the relay must still wait and exit as the job did
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    status = 70 << 8
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    if pid_namespace:
        data = os.read(status_r, 4)
        status = struct.unpack("i", data)[0] if len(data) == 4 else 70 << 8
    _exit_as(status)


def _exit_as(status: int) -> NoReturn:
    """End this process the way a process with wait status ``status`` ended."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 70)


def _init(libc: ctypes.CDLL) -> None:
    """PID 1 of the run: fork the job, reap everything, end the namespace when the job ends."""
    job = os.fork()
    if job == 0:
        os.close(1023)
        _die_with_parent(libc, 1)
        return
    for fd in range(3, 1023):
        try:
            os.close(fd)
        except OSError:
            pass
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    status = 70 << 8
    while True:
        try:
            pid, wait_status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == job:
            status = wait_status
            try:
                os.kill(-1, signal.SIGKILL)  # every other process of the namespace
            except ProcessLookupError:
                pass
    os.write(1023, struct.pack("i", status))
    os._exit(0)


# --------------------------------------------------------------------------- the minimal root


def _mount(
    libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    _check(
        libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _bind(libc: ctypes.CDLL, source: str, target: str, *, read_only: bool = True, devices: bool = False) -> None:
    if os.path.isdir(source):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        open(target, "a").close()
    _mount(libc, source, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (0 if devices else MS_NODEV) | (MS_RDONLY if read_only else 0)
    _mount(libc, None, target, None, flags)


def _needed_paths() -> list[str]:
    """The host paths a run's Python needs (its installation(s), the directories it imports from, the
    worker package), outermost first, without paths inside another one."""
    imports = [p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]
    paths = sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, PACKAGE, *imports)})
    kept: list[str] = []
    for path in paths:
        if not any(path == k or path.startswith(k + "/") for k in kept) and not path.startswith("/usr/"):
            kept.append(path)
    return kept


def _minimal_root(libc: ctypes.CDLL, plan: SandboxPlan, *, pid_namespace: bool) -> None:
    if SYS_PIVOT_ROOT is None:
        raise OSError(f"pivot_root: unknown syscall number on {platform.machine()}")
    previous = os.umask(0o022)  # the skeleton must be traversable by the run's user
    try:
        _build_root(libc, plan, pid_namespace=pid_namespace)
    finally:
        os.umask(previous)
    os.chdir("/tmp")


def _build_root(libc: ctypes.CDLL, plan: SandboxPlan, *, pid_namespace: bool) -> None:
    uid = plan["uid"]
    owner = f",uid={uid},gid={uid}" if uid is not None else ""
    workdir = plan["workdir"]
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    # The new root: a small tmpfs on the run's own directory (the job spec is already read).
    _mount(libc, "tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    root = workdir
    # The private /tmp first: a Python installation or checkout under /tmp is bound inside it below.
    os.makedirs(root + "/tmp", mode=0o700)
    _mount(
        libc, "tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={int(plan['tmpfs_mb'])}m,mode=0700{owner}"
    )
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            os.symlink(os.readlink(name), root + name)
        elif os.path.isdir(name):
            _bind(libc, name, root + name)
    _bind(libc, "/usr", root + "/usr")
    for path in _needed_paths():
        _bind(libc, path, root + path)
    os.makedirs(root + "/dev", mode=0o755)
    for device in DEVICES:
        _bind(libc, f"/dev/{device}", f"{root}/dev/{device}", read_only=False, devices=True)
    for alias in ("/dev/shm", "/var/tmp"):
        _bind(libc, root + "/tmp", root + alias, read_only=False)
    os.makedirs(root + "/etc", mode=0o755)
    name_uid = uid if uid is not None else os.getuid()
    with open(root + "/etc/passwd", "w") as handle:
        handle.write(f"root:x:0:0::/:/bin/false\nrun:x:{name_uid}:{name_uid}::/tmp:/bin/false\n")
    with open(root + "/etc/group", "w") as handle:
        handle.write(f"root:x:0:\nrun:x:{name_uid}:\n")
    for path in (root + "/etc/passwd", root + "/etc/group"):
        os.chmod(path, 0o644)
    if os.path.islink("/etc/localtime"):
        os.symlink(os.readlink("/etc/localtime"), root + "/etc/localtime")
    _data_files(libc, root, plan.get("data_files", []))
    os.makedirs(root + "/proc", mode=0o555)
    if pid_namespace:
        _mount(libc, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        libc.sethostname(b"run", 3)  # the run's own UTS namespace: not the host's name
    os.chdir(root)
    _check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "detach the host's root")  # the old root, stacked on "."
    os.chdir("/")
    _mount(libc, None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _data_files(libc: ctypes.CDLL, root: str, files: list[DataMount]) -> None:
    """/data, holding each data file of the run bound read-only (no exec, no device, no setuid) at
    /data/<name>: the cache's file (root's, 0644: the run's uid reads it, cannot write it). The name is
    checked again here, so whatever a request said, a bind lands in /data and nowhere else."""
    folder = root + DATA
    os.makedirs(folder, mode=0o755)
    for item in files:
        name = item["name"]
        too_long = len(name.encode("utf-8", "surrogatepass")) > 255
        if not name or name in (".", "..") or "/" in name or "\0" in name or too_long:
            raise OSError(f"data file name {name!r} is not a file name")
        target = os.path.join(folder, name)
        if os.path.dirname(target) != folder:
            raise OSError(f"data file name {name!r} leaves {DATA}")
        source = item["path"]
        if not os.path.isfile(source) or os.path.islink(source):
            raise OSError(f"data file {name!r}: its cached file is missing")
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444))  # a fresh mount point
        _mount(libc, source, target, None, MS_BIND)
        _mount(libc, None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


# --------------------------------------------------------------------------- the job's own limits


def _drop(libc: ctypes.CDLL, plan: SandboxPlan, fail: Callable[[str, BaseException], None]) -> None:
    uid = plan["uid"]
    try:
        with open("/proc/self/oom_score_adj", "w") as adj:
            adj.write("1000")
    except OSError:
        pass  # best effort: the run should be the first the kernel's OOM killer picks
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
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a uid change clears it: set it again
    if plan["syscall_filter"]:
        try:
            syscalls.install(libc)  # last: it refuses mount and unshare, which the steps above use
        except OSError as exc:
            fail("syscall_filter", exc)
