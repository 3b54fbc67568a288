"""Start the Allele GA worker: ``python -m allele_worker`` (from any cwd).

Environment: ``HOST`` (default 127.0.0.1), ``PORT`` (default 8788), ``SANDBOX_UID_BASE`` (first uid
of the per-run users when running as root, default 61000), ``ALLELE_RUN_DIR`` (parent directory of
the runs' temporary directories, default a fresh one under the system temp dir), ``LOG_LEVEL``.
Logs go to stderr; at start, one line per sandbox measure this machine cannot enforce.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable

import uvicorn

from .app import create_app
from .runs import RunManager
from .sandbox import probe_isolation, set_dumpable

log = logging.getLogger("allele")
CLEANUP: list[Callable[[], object]] = []  # run at graceful shutdown (uvicorn re-raises SIGTERM afterwards: no atexit)


def build_manager() -> RunManager:
    uid_base = int(os.environ.get("SANDBOX_UID_BASE", "61000")) if os.geteuid() == 0 else None
    isolation = probe_isolation(uid=uid_base)
    for note in isolation.notes:
        log.warning("isolation: %s", note)
    log.info("isolation: user=%s network=%s filesystem=%s rlimits=%s", isolation.user,
             isolation.network, isolation.filesystem, ",".join(isolation.rlimits))
    run_root = os.environ.get("ALLELE_RUN_DIR") or None
    if run_root:
        os.makedirs(run_root, mode=0o711, exist_ok=True)
    else:
        run_root = tempfile.mkdtemp(prefix="allele-runs-")
        CLEANUP.append(lambda: shutil.rmtree(run_root, ignore_errors=True))
    return RunManager(isolation=isolation, run_root=run_root, uid_base=uid_base)


def main() -> None:
    level = os.environ.get("LOG_LEVEL", "INFO").upper()
    logging.basicConfig(stream=sys.stderr, level=level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    set_dumpable(False)  # /proc/<worker>/environ unreadable to anything but root
    manager = build_manager()
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8788"))
    uvicorn.run(create_app(manager, on_shutdown=CLEANUP), host=host, port=port, log_level=level.lower(),
                access_log=level == "DEBUG")


if __name__ == "__main__":
    main()
