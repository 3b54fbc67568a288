"""What one worker process sets up once: its uid block, the control groups, the isolation probe, the
warm fork servers.

``Host.setup()`` is called at worker start: it claims a uid block (sweeping what crashed workers
left), finds the cgroup interface, runs the startup probe and starts the fork server (unless
``ALLELE_FORK_SERVER=0``, or when it cannot start: then each run starts a fresh interpreter).  The
stack's fork server — the same with the scientific stack imported (``forks.STACK_MODULES``), for the
runs whose code names it (``forks_for``) — is started in the background when the first such run comes
(unless ``ALLELE_FORK_SERVER_STACK=0``), so a worker that never sees one never pays its start; until it
is ready those runs are forked from the first one and import what they need themselves.
``ALLELE_REQUIRE_ISOLATION`` says which measures the worker refuses to start without, so production
fails closed: ``all`` (set in the image) every one; ``all-except:<measure>,…`` every one but those
named, for a deployment that runs one run per instance (docs/deploy.md#isolation-per-measure says which
may go and what is lost); unset, none (a developer's machine).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field

from ..wire import ChildJob
from . import cgroups as cgroup_support
from .cgroups import CgroupSupport
from .forks import STACK_MODULES, ForkServer, ForkServerGone, names_the_stack
from .plan import MEASURES, RLIMITS, Isolation
from .process import probe_isolation
from .uids import UidBlock

log = logging.getLogger("allele.sandbox")

DEFAULT_UID_BASE = 1_000_000  # far above any account a distribution creates (nobody is 65534)
DEFAULT_LOCK_DIR = "/run/allele"


class IsolationMissing(RuntimeError):
    """The machine does not enforce a measure ALLELE_REQUIRE_ISOLATION requires (or the setting is wrong)."""


def required_gaps(missing: list[str], setting: str) -> list[str]:
    """The measures of ``missing`` that ``setting`` (ALLELE_REQUIRE_ISOLATION's value) requires:
    ``all`` every one, ``all-except:a,b`` every one but a and b (each a name of ``MEASURES`` or
    ``rlimit:<name>``), empty none. Any other value is refused, so a typo never weakens the sandbox."""
    if setting == "":
        return []
    if setting == "all":
        return list(missing)
    prefix = "all-except:"
    if not setting.startswith(prefix):
        raise IsolationMissing(f"ALLELE_REQUIRE_ISOLATION must be all or all-except:<measure>,…, not {setting!r}")
    allowed = {name.strip() for name in setting[len(prefix) :].split(",") if name.strip()}
    known = set(MEASURES) | {f"rlimit:{name}" for name in RLIMITS}
    unknown = sorted(allowed - known)
    if unknown:
        raise IsolationMissing(
            f"ALLELE_REQUIRE_ISOLATION names no such measure: {', '.join(unknown)} (one of {', '.join(sorted(known))})"
        )
    return [gap for gap in missing if gap not in allowed]


@dataclass
class Host:
    isolation: Isolation
    uids: UidBlock | None
    cgroups: CgroupSupport | None
    #: The warm fork server every run's child is forked from (None: each run starts a fresh interpreter).
    forks: ForkServer | None = None
    #: The same with the scientific stack imported, for the runs whose code names it (None until ready).
    stack_forks: ForkServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _closed: bool = False
    _stack_started: bool = False
    _stack_settled: threading.Event = field(default_factory=threading.Event, repr=False)

    @classmethod
    def setup(cls, *, uid_base: int | None = None, lock_dir: str | None = None, require: str | None = None) -> Host:
        root = os.geteuid() == 0
        support, note = cgroup_support.detect() if root else (None, "the worker is not root")
        uids = None
        if root:
            uids = UidBlock(
                base=uid_base if uid_base is not None else DEFAULT_UID_BASE,
                lock_dir=lock_dir or DEFAULT_LOCK_DIR,
                sweep_groups=support.sweep if support else None,
            )
        probe_uid = uids.take() if uids else None
        try:
            isolation = probe_isolation(uid=probe_uid, cgroups=support, cgroup_note=note)
        finally:
            if uids and probe_uid is not None:
                uids.give(probe_uid)
        host = cls(isolation=isolation, uids=uids, cgroups=support if isolation.cgroup else None)
        if os.environ.get("ALLELE_FORK_SERVER", "1") != "0":
            try:
                host.forks = ForkServer()
            except (OSError, ForkServerGone) as exc:
                log.warning("fork server unavailable, each run starts a fresh interpreter: %s", exc)
        if host.forks is None or os.environ.get("ALLELE_FORK_SERVER_STACK", "1") == "0":
            host._stack_started = True  # never: runs that name the stack come from the plain server
            host._stack_settled.set()
        setting = os.environ.get("ALLELE_REQUIRE_ISOLATION", "") if require is None else require
        try:
            gaps = required_gaps(isolation.missing(), setting)
        except IsolationMissing:
            host.close()
            raise
        if gaps:
            host.close()
            raise IsolationMissing(
                f"ALLELE_REQUIRE_ISOLATION={setting} but this machine does not enforce: "
                + ", ".join(gaps)
                + " ("
                + "; ".join(isolation.notes)
                + ")"
            )
        return host

    def _want_stack(self) -> None:
        """Start the stack's fork server in the background, once (the first run that names the stack)."""
        with self._lock:
            if self._stack_started or self._closed:
                return
            self._stack_started = True
        threading.Thread(target=self._start_stack_forks, daemon=True, name="forkserver-stack").start()

    def _start_stack_forks(self) -> None:
        """Start the stack's fork server (in the background: the worker serves runs meanwhile)."""
        try:
            forks = ForkServer(modules=STACK_MODULES)
        except (OSError, ForkServerGone) as exc:
            log.warning("the stack's fork server is unavailable, runs import the stack themselves: %s", exc)
            self._stack_settled.set()
            return
        with self._lock:
            closed = self._closed
            if not closed:
                self.stack_forks = forks
        if closed:
            forks.close()
        else:
            log.info("the stack's fork server is ready (pid %d)", forks.pid)
        self._stack_settled.set()

    def wait_for_stack(self, timeout: float = 120.0) -> ForkServer | None:
        """The stack's fork server once its start has settled, starting it if it is not (None: off,
        failed, or not in time)."""
        self._want_stack()
        self._stack_settled.wait(timeout)
        return self.stack_forks

    def forks_for(self, job: ChildJob) -> ForkServer | None:
        """The fork server a run's child comes from: the stack's when the run's code names the stack and
        that server is ready, else the plain one (None: a fresh interpreter).  The first run that names
        the stack starts that server."""
        if self.forks is None or not names_the_stack(job["params"]):
            return self.forks
        stack = self.stack_forks
        if stack is None:
            self._want_stack()
            return self.forks
        return stack

    def take_uid(self) -> int | None:
        return self.uids.take() if self.uids else None

    def give_uid(self, uid: int | None) -> None:
        if self.uids and uid is not None:
            self.uids.give(uid)

    def group_name(self, uid: int | None, run_id: str) -> str:
        """A run's control group: under the worker's block prefix, so a later worker can sweep it."""
        prefix = self.uids.group_prefix() if self.uids else f"allele-p{os.getpid()}-"
        return f"{prefix}{uid if uid is not None else run_id}"

    def close(self) -> None:
        with self._lock:
            self._closed = True
            stack, self.stack_forks = self.stack_forks, None
        if stack:
            stack.close()
        if self.forks:
            self.forks.close()
        if self.uids:
            self.uids.close()
