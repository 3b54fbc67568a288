"""What one run may use and what the machine enforces: ``Limits``, ``Isolation``, the confinement plan
the parent hands to the child (``wire.SandboxPlan``: plain JSON, so it crosses a process boundary), the
child's environment."""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass, field, replace

from ..wire import MESSAGE_BYTES, ChannelLimits, IsolationHealth, SandboxPlan

MIB = 1024 * 1024

# What a run's address space may hold beyond its hard memory cap (RLIMIT_AS; docs/environment.md#memory):
# libraries reserve far more than they touch — TensorFlow 0.78 GB beyond its resident memory with one
# thread, 0.98 GB with two, 1.31 GB with four (each thread's stack and malloc arena); OpenBLAS a buffer per
# thread. Memory itself is capped by the run's cgroup and the watchdog, not by this limit; too low a
# limit does not stop such a library, it breaks it (TensorFlow spun at full CPU until the time cap).
ADDRESS_SPACE_HEADROOM_MB = 1024
ADDRESS_SPACE_PER_PLACE_MB = 256

# The smallest memory cap under which a run may import TensorFlow (docs/environment.md#memory): its import
# alone takes ≈ 600 MB resident (≈ 250 MB of it its own, the rest its libraries' code), and a small
# kerasga network's run peaks at ≈ 610 MB, past the free plan's 512 MB soft cap and close to its hard one
# (640 MB). Below it, ``import tensorflow`` fails at once with an ImportError that says so
# (child/libraries.py). = the trial plan's memory cap; premium's and every credit-paid run's are 2048 MB
# (src/admission/limits.ts; test/http/environment.test.ts holds the plans to it).
NN_MIN_MEMORY_MB = 1024

# --------------------------------------------------------------------------- limits


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Every limit of one run.  Soft caps stop the GA at a generation boundary; hard ones kill."""

    time_seconds: float  # soft wall-time cap (caps.time_seconds)
    memory_mb: int  # soft memory cap (caps.memory_mb), resident set size
    hard_time_seconds: float  # watchdog kills the process group past this wall time
    hard_memory_mb: int  # watchdog kills when the child's RSS passes this
    cpu_seconds: int  # RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    address_space_mb: int  # RLIMIT_AS (allocation fails → MemoryError)
    file_size_mb: int = 64  # RLIMIT_FSIZE and the size of the run's tmpfs
    open_files: int = 256  # RLIMIT_NOFILE
    processes: int = 64  # RLIMIT_NPROC for the run's own uid (threads count)
    output_bytes: int = 64 * 1024  # kept of stdout+stderr
    output_flood_bytes: int = 64 * MIB  # more than this printed → killed, resource_limit_exceeded
    message_bytes: int = MESSAGE_BYTES  # the largest message the job may send but its outcome (progress)
    outcome_bytes: int = 256 * MIB  # the largest outcome (read and parsed by the run's relay, in its cgroup)
    messages_per_second: float = 20  # messages the child may send (it sends ≤ 4 progress a second) …
    message_burst: int = 200  # … plus these, over the whole run

    @classmethod
    def from_caps(
        cls, *, time_seconds: float, memory_mb: int, population_size: int = 0, places: int = 1, **overrides: int
    ) -> Limits:
        """The limits of a run with these caps taking ``places`` CPUs; ``overrides`` replace any of them
        (tests, benchmarks)."""
        grace = max(2.0, 0.1 * time_seconds)
        hard_memory = memory_mb + max(128, memory_mb // 8)
        limits = cls(
            time_seconds=float(time_seconds),
            memory_mb=int(memory_mb),
            hard_time_seconds=float(time_seconds) + grace,
            hard_memory_mb=hard_memory,
            cpu_seconds=int(math.ceil(time_seconds + grace)) + 5,
            address_space_mb=hard_memory + ADDRESS_SPACE_HEADROOM_MB + ADDRESS_SPACE_PER_PLACE_MB * places,
            outcome_bytes=max(16 * MIB, 64 * population_size + MIB),
        )
        return replace(limits, **overrides)

    def channel(self) -> ChannelLimits:
        """What the run's relay enforces on the job's message channel."""
        return {
            "message_bytes": self.message_bytes,
            "outcome_bytes": self.outcome_bytes,
            "messages_per_second": self.messages_per_second,
            "message_burst": self.message_burst,
        }


# --------------------------------------------------------------------------- isolation report


MEASURES = ("user", "network", "pid_namespace", "minimal_root", "syscall_filter", "cgroup")


@dataclass
class Isolation:
    """Which measures this machine enforces (found by the startup probe); ``notes`` say why not.

    ``cgroup`` is "v1" or "v2" when runs get a control group of their own (memory, processes and CPU
    over the whole process tree), else None: then memory is summed over the processes of the run's
    uid, CPU comes from the namespace's init reaping every process, and processes are capped by
    RLIMIT_NPROC of the run's uid."""

    user: bool = False
    network: bool = False
    pid_namespace: bool = False
    minimal_root: bool = False
    syscall_filter: bool = False
    cgroup: str | None = None
    rlimits: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def missing(self) -> list[str]:
        """The measures of MEASURES this machine does not enforce, and any rlimit that failed."""
        gaps = [name for name in MEASURES if not getattr(self, name)]
        return gaps + [f"rlimit:{name}" for name in RLIMITS if name not in self.rlimits]

    def health(self) -> IsolationHealth:
        return {
            "user": self.user,
            "network": self.network,
            "pid_namespace": self.pid_namespace,
            "minimal_root": self.minimal_root,
            "syscall_filter": self.syscall_filter,
            "cgroup": self.cgroup,
            "memory_tree": self.cgroup is not None or self.user,
            "cpu_tree": self.cgroup is not None or self.pid_namespace,
            "pids": self.cgroup is not None or "nproc" in self.rlimits,
            "rlimits": list(self.rlimits),
            "notes": list(self.notes),
        }


RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}


# The variables that size a run's thread pools, each set to the run's places (the CPUs it takes,
# docs/runner-protocol.md#places): BLAS (OpenBLAS, MKL), OpenMP (scikit-learn's compiled loops), numexpr,
# TensorFlow's intra- and inter-op pools, and the CPUs joblib/loky counts (``n_jobs=-1``). Every thread
# is billed: they run in the run's cgroup (docs/environment.md#threads).
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "LOKY_MAX_CPU_COUNT",
)


def thread_environment(places: int) -> dict[str, str]:
    """``THREAD_VARIABLES``, each the run's ``places``."""
    return dict.fromkeys(THREAD_VARIABLES, str(max(1, places)))


def child_environment(home: str, places: int = 1) -> dict[str, str]:
    """The child's whole environment: nothing of the worker's (no secrets, no token); its thread pools
    sized to its ``places``."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        **thread_environment(places),
        "TF_CPP_MIN_LOG_LEVEL": "1",  # TensorFlow's informational lines (CPU features) kept out of the run's output
    }


def make_plan(
    *,
    workdir: str,
    limits: Limits,
    isolation: Isolation,
    uid: int | None,
    require: bool,
    cgroup_procs: list[str] | None = None,
) -> SandboxPlan:
    """What confine() applies in the child (JSON: it crosses a process boundary)."""
    return {
        "workdir": workdir,
        "uid": uid,
        "network": isolation.network,
        "pid_namespace": isolation.pid_namespace,
        "minimal_root": isolation.minimal_root,
        "syscall_filter": isolation.syscall_filter,
        "cgroup_procs": cgroup_procs or [],
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
