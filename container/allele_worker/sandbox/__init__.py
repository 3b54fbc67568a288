"""The sandbox of a run's child process: both of its ends, below the worker side and the child side.

The worker's end: ``plan`` (what a run may use, ``Limits``; what this machine enforces, ``Isolation``;
the confinement plan the child gets, ``wire.SandboxPlan``; the child's environment), ``host`` (once per
worker: the uid block, the cgroup interface, the startup probe, the warm fork server, the fail-closed
check), ``uids`` and ``cgroups`` (a run's own user and control group), ``process`` (the startup probe,
the spawn, the watchdog, the tree kill, the usage) and ``forks`` (the worker's side of the fork
server).  The child's end: ``confine``, applied before any user code runs, and ``syscalls`` (its
seccomp filter).

Measures, in the order the child applies them (the startup probe reports each one this machine cannot
enforce; a run then fails rather than go ahead less confined than the probe found):

1. control group: the child joins the run's own group before it forks anything, so memory, processes
   and CPU are capped and counted over its whole process tree, and every run has the same CPU weight;
2. network namespace (``unshare(CLONE_NEWNET)``): no interface but a down loopback;
3. PID namespace (with IPC and UTS): a reaping init (PID 1) runs the job and ends the namespace with
   it, and ``/proc`` shows the run's own processes only;
4. minimal root: a mount namespace and ``pivot_root`` into a read-only tmpfs holding only ``/usr``,
   the Python installation(s) and this package, a few ``/dev`` nodes, a fresh ``/proc``, a private
   size-capped writable ``/tmp`` (also ``HOME``, ``/dev/shm``, ``/var/tmp``) and an ``/etc`` naming the
   run's user;
5. rlimits: CPU time, address space, file size, open files, processes, core dumps;
6. an unprivileged user of its own (a uid of the worker's block, no groups), ``no_new_privs``, death
   signal when its parent dies;
7. the syscall filter (``syscalls.py``), installed last: no namespaces of its own, none of the kernel
   interfaces a GA never needs;
8. an empty environment, given by the parent (``PATH``, ``HOME``, ``TMPDIR``, ``LANG``, thread counts:
   ``child_environment``): the report token never reaches the child.

The child gets its own session; the end of a run kills its process group, every process left in its
control group and every process of its uid.
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
