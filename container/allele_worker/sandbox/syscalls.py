"""The job's syscall filter (seccomp-BPF): what the sandbox's other measures leave of the kernel's
attack surface, refused (``EPERM`` unless said otherwise).

* **New namespaces** — ``unshare`` or ``clone`` with any ``CLONE_NEW*`` flag, ``setns``. Most kernels let
  an unprivileged process create a user namespace, and inside it the run would hold every capability
  over namespaces of its own: mounts, and through a network namespace of its own nf_tables and the rest
  of the networking configuration — the interfaces most kernel privilege escalations go through. Plain
  ``fork`` and threads (``clone`` without those flags) pass.
* ``clone3`` answers ``ENOSYS`` (its flags are in memory a filter cannot read): the C library then falls
  back to ``clone``, which the filter can check.
* **Kernel interfaces a GA never needs** — ``io_uring_*``, ``bpf``, ``userfaultfd``, ``perf_event_open``,
  the key-ring calls, the mount API (``mount``, ``umount2``, ``pivot_root``, ``fsopen`` …), and file
  watches: ``inotify_init``/``inotify_init1`` (on the Python tree every run shares read-only, a watch
  shows live which modules another run imports) and ``fanotify_init``.
* **Socket families a run does not need** — ``socket`` creates ``AF_UNIX``, ``AF_INET`` and ``AF_INET6``
  sockets only (what numpy, multiprocessing, the parallel-fitness pools and the standard library use;
  the run has no network anyway), ``socketpair`` ``AF_UNIX`` only; any other family answers
  ``EAFNOSUPPORT``, as a kernel without it would: ``AF_VSOCK`` (not covered by the network namespace:
  it reaches the host of a virtual machine), netlink, packet, the crypto API's ``AF_ALG`` and the rest
  of the kernel's protocol families.
* A syscall of another ABI (x32 on x86-64, or another architecture) kills the process.

Written as a few dozen BPF instructions with ``ctypes`` rather than through libseccomp: the filter is
small enough to read whole, and the worker gains no native dependency (container/README.md).
"""

from __future__ import annotations

import ctypes
import errno
import platform
from dataclasses import dataclass

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|…|K, BPF_RET|K
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg 0's low 32 bits: little-endian)

# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; unshare() also takes NEWTIME (0x80),
# which in clone()'s flags is part of the exit signal.
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_UNSHARE_NAMESPACES = _CLONE_NAMESPACES | 0x80

_GENERIC = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
    "clone3": 435,
}
# The socket families a run may create (AF_UNIX, AF_INET, AF_INET6); socketpair: AF_UNIX only.
SOCKET_FAMILIES = (1, 2, 10)
SOCKETPAIR_FAMILIES = (1,)


@dataclass(frozen=True)
class Arch:
    audit: int  # AUDIT_ARCH_* of the native ABI
    x32_bit: int | None  # the syscall-number bit of x86-64's x32 ABI (None: no such ABI)
    numbers: dict[str, int]  # syscall name → number


ARCHES: dict[str, Arch] = {
    "x86_64": Arch(
        audit=0xC000003E,
        x32_bit=0x40000000,
        numbers={
            "clone": 56,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "bpf": 321,
            "userfaultfd": 323,
            "perf_event_open": 298,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "inotify_init": 253,
            "inotify_init1": 294,
            "fanotify_init": 300,
            "socket": 41,
            "socketpair": 53,
            **_GENERIC,
        },
    ),
    "aarch64": Arch(
        audit=0xC00000B7,
        x32_bit=None,
        numbers={
            "clone": 220,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "bpf": 280,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "inotify_init1": 26,
            "fanotify_init": 262,
            "socket": 198,
            "socketpair": 199,
            **_GENERIC,
        },
    ),
}
REFUSED = (
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "userfaultfd",
    "perf_event_open",
    "add_key",
    "request_key",
    "keyctl",
    "inotify_init",  # x86-64 only (aarch64 has inotify_init1 alone)
    "inotify_init1",
    "fanotify_init",
)


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def program(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (default: this one) as (code, jt, jf, k) instructions."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        raise OSError(f"no syscall filter for {machine or platform.machine()}")
    numbers = arch.numbers
    # Instructions with symbolic jump targets ("eperm", "enosys", "kill", "unshare", "clone"), resolved below.
    code: list[tuple[int, int | str, int | str, int]] = [
        (_LD_ABS_W, 0, 0, _ARCH),
        (_JEQ, 0, "kill", arch.audit),
        (_LD_ABS_W, 0, 0, _NR),
    ]
    if arch.x32_bit is not None:
        code.append((_JGE, "kill", 0, arch.x32_bit))
    code.append((_JEQ, "enosys", 0, numbers["clone3"]))
    code.append((_JEQ, "unshare", 0, numbers["unshare"]))
    code.append((_JEQ, "clone", 0, numbers["clone"]))
    code.append((_JEQ, "socket", 0, numbers["socket"]))
    code.append((_JEQ, "socketpair", 0, numbers["socketpair"]))
    code.extend((_JEQ, "eperm", 0, numbers[name]) for name in REFUSED if name in numbers)
    code.append((_RET, 0, 0, _RET_ALLOW))
    labels = {"unshare": len(code)}
    code += [(_LD_ABS_W, 0, 0, _ARG0), (_JSET, "eperm", 0, _UNSHARE_NAMESPACES), (_RET, 0, 0, _RET_ALLOW)]
    labels["clone"] = len(code)
    code += [(_LD_ABS_W, 0, 0, _ARG0), (_JSET, "eperm", 0, _CLONE_NAMESPACES), (_RET, 0, 0, _RET_ALLOW)]
    for label, families in (("socket", SOCKET_FAMILIES), ("socketpair", SOCKETPAIR_FAMILIES)):
        # arg 0 is the family (an int: its low 32 bits); one of the list is allowed, else EAFNOSUPPORT
        labels[label] = len(code)
        code.append((_LD_ABS_W, 0, 0, _ARG0))
        code.extend((_JEQ, "allow", 0, family) for family in families)
        code.append((_RET, 0, 0, _RET_ERRNO | errno.EAFNOSUPPORT))
    labels["allow"] = len(code)
    code.append((_RET, 0, 0, _RET_ALLOW))
    labels["eperm"] = len(code)
    code.append((_RET, 0, 0, _RET_ERRNO | errno.EPERM))
    labels["enosys"] = len(code)
    code.append((_RET, 0, 0, _RET_ERRNO | errno.ENOSYS))
    labels["kill"] = len(code)
    code.append((_RET, 0, 0, _RET_KILL_PROCESS))

    def target(at: int, jump: int | str) -> int:
        return labels[jump] - at - 1 if isinstance(jump, str) else jump

    return [(op, target(i, jt), target(i, jf), k) for i, (op, jt, jf, k) in enumerate(code)]


def install(libc: ctypes.CDLL) -> None:
    """Install the filter on this process (and so on everything it starts). Needs ``no_new_privs``
    set and, to cover every thread, a process with one thread."""
    instructions = program()
    filters = (_Filter * len(instructions))(*(_Filter(*instruction) for instruction in instructions))
    prog = _Program(len(instructions), filters)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {errno.errorcode.get(err, err)}")
