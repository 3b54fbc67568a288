"""The sandboxed child process of one run.

``plan`` says what a run may use (``Limits``) and what this machine enforces (``Isolation``);
``process`` is the parent side (startup probe, spawn, watchdog, group kill, ``wait4`` usage);
``confine`` is the child side, applied before any user code runs.

Measures, in the order the child applies them (each one that cannot be enforced is reported):

1. new network namespace (``unshare(CLONE_NEWNET)``: no interface but a down loopback);
2. new mount namespace with a size-limited tmpfs on the run directory, bound over ``/tmp``,
   ``/var/tmp`` and ``/dev/shm`` (files written there vanish with the run);
3. rlimits: CPU time, address space, file size, open files, processes, core dumps;
4. an unprivileged user of its own (uid ``SANDBOX_UID_BASE + slot``, no groups), ``no_new_privs``,
   death signal when the worker dies;
5. the syscall filter (``syscalls.py``): no namespaces of its own, none of the kernel interfaces a GA
   never needs.

The environment is emptied by the parent (``PATH``, thread counts, ``HOME``); the report token never
reaches the child.  The child gets its own session, so its whole process group is killed at once;
processes of the run's uid that escaped the group are killed too.
"""

from .cgroups import CgroupSupport
from .confine import confine
from .host import Host, IsolationMissing
from .plan import Isolation, Limits, child_environment, make_plan
from .process import ProcessReport, SandboxedProcess, probe_isolation, set_dumpable
from .uids import UidBlock, kill_uids

__all__ = [
    "CgroupSupport",
    "Host",
    "Isolation",
    "IsolationMissing",
    "Limits",
    "ProcessReport",
    "SandboxedProcess",
    "UidBlock",
    "child_environment",
    "confine",
    "kill_uids",
    "make_plan",
    "probe_isolation",
    "set_dumpable",
]
