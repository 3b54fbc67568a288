"""What one worker process sets up once: its uid block, the control groups, the isolation probe, the
warm fork server.

``Host.setup()`` is called at worker start: it claims a uid block (sweeping what crashed workers
left), finds the cgroup interface, runs the startup probe and starts the fork server (unless
``ALLELE_FORK_SERVER=0``, or when it cannot start: then each run starts a fresh interpreter);
``ALLELE_REQUIRE_ISOLATION=all`` (set in the image) makes it refuse to start when any measure is
missing, so production fails closed.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from . import cgroups as cgroup_support
from .cgroups import CgroupSupport
from .forks import ForkServer, ForkServerGone
from .plan import Isolation
from .process import probe_isolation
from .uids import UidBlock

log = logging.getLogger("allele.sandbox")

DEFAULT_UID_BASE = 1_000_000  # far above any account a distribution creates (nobody is 65534)
DEFAULT_LOCK_DIR = "/run/allele"


class IsolationMissing(RuntimeError):
    """ALLELE_REQUIRE_ISOLATION=all and the machine does not enforce every measure."""


@dataclass
class Host:
    isolation: Isolation
    uids: UidBlock | None
    cgroups: CgroupSupport | None
    #: The warm fork server every run's child is forked from (None: each run starts a fresh interpreter).
    forks: ForkServer | None = None

    @classmethod
    def setup(
        cls, *, uid_base: int | None = None, lock_dir: str | None = None, require_all: bool | None = None
    ) -> Host:
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
        if require_all is None:
            require_all = os.environ.get("ALLELE_REQUIRE_ISOLATION", "") == "all"
        missing = isolation.missing()
        if require_all and missing:
            host.close()
            raise IsolationMissing(
                "ALLELE_REQUIRE_ISOLATION=all but this machine does not enforce: "
                + ", ".join(missing)
                + " ("
                + "; ".join(isolation.notes)
                + ")"
            )
        return host

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
        if self.forks:
            self.forks.close()
        if self.uids:
            self.uids.close()
