"""Child side of the sandbox: ``confine(plan)`` applies every measure of a plan to the calling process.

Called in the run's child before any user code is loaded (and by the startup probe in a throw-away
child).  It needs nothing from the parent but the plan, so it can run in a fresh interpreter or in a
child forked from a warm parent alike.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from .plan import RLIMITS

PACKAGE = str(Path(__file__).resolve().parent.parent)  # the worker's code: bound into the child's view

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38

def load_libc() -> Any:
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

    libc = load_libc()
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
            needed = [sys.base_prefix, sys.prefix, PACKAGE]
            kept = _stage_under(libc, needed, covers)
            for target in covers:
                _check(libc.mount(b".", target.encode(), None, MS_BIND, None), f"bind {target}")
            _restore(libc, kept)
            if uid is not None:
                _expose(libc, [sys.base_prefix, sys.prefix, PACKAGE])
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

