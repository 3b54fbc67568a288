"""Start the Allele GA worker: ``python -m allele_worker`` (from any cwd).

Environment: ``HOST`` (default 127.0.0.1), ``PORT`` (default 8788), ``SANDBOX_UID_BASE`` (first uid
of the per-run users when running as root, default 1000000; each worker claims a block of 1000),
``ALLELE_LOCK_DIR`` (where the uid block locks live, default /run/allele), ``WORKER_CONCURRENCY``
(runs at once, default the number of CPUs; more starts are refused with 503 at_capacity),
``ALLELE_REQUIRE_ISOLATION`` (``all``: refuse to start unless every sandbox measure holds;
``all-except:<measure>,…``: every one but those named — docs/deploy.md#isolation-per-measure),
``ALLELE_FORK_SERVER`` (``0``: start each run's child as a fresh interpreter instead of a fork of the
warm fork server), ``ALLELE_RUN_DIR`` (parent directory of the runs' temporary directories, default a
fresh one under the system temp dir), ``ALLELE_DATA_CACHE_DIR`` (the cache of runs' data files, default
``data-cache`` in the run directory), ``ALLELE_DATA_CACHE_BYTES`` (its bound, default 2 GiB; files that
live runs hold may pass it), ``LOG_LEVEL``.
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

from .sandbox import Host, IsolationMissing, set_dumpable
from .worker.app import create_app
from .worker.data_cache import DataCache
from .worker.runs import DATA_CACHE_BYTES, RunManager

log = logging.getLogger("allele")
CLEANUP: list[Callable[[], object]] = []  # run at graceful shutdown (uvicorn re-raises SIGTERM afterwards: no atexit)


def build_manager() -> RunManager:
    uid_base = os.environ.get("SANDBOX_UID_BASE")
    host = Host.setup(uid_base=int(uid_base) if uid_base else None, lock_dir=os.environ.get("ALLELE_LOCK_DIR") or None)
    CLEANUP.append(host.close)
    isolation = host.isolation
    for note in isolation.notes:
        log.warning("isolation: %s", note)
    log.info("isolation: %s", " ".join(f"{k}={v}" for k, v in isolation.health().items() if k != "notes"))
    if host.uids:
        log.info(
            "sandbox uids: block %d (%d..%d)",
            host.uids.index,
            host.uids.first,
            host.uids.first + host.uids.block_size - 1,
        )
    run_root = os.environ.get("ALLELE_RUN_DIR") or None
    if run_root:
        os.makedirs(run_root, mode=0o711, exist_ok=True)
    else:
        run_root = tempfile.mkdtemp(prefix="allele-runs-")
        CLEANUP.append(lambda: shutil.rmtree(run_root, ignore_errors=True))
    concurrency = os.environ.get("WORKER_CONCURRENCY")
    cache_bytes = os.environ.get("ALLELE_DATA_CACHE_BYTES")
    cache = DataCache(
        os.environ.get("ALLELE_DATA_CACHE_DIR") or os.path.join(run_root, "data-cache"),
        int(cache_bytes) if cache_bytes else DATA_CACHE_BYTES,
    )
    return RunManager(
        host=host, run_root=run_root, concurrency=int(concurrency) if concurrency else None, data_cache=cache
    )


def main() -> None:
    level = os.environ.get("LOG_LEVEL", "INFO").upper()
    logging.basicConfig(stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    set_dumpable(False)  # /proc/<worker>/environ unreadable to anything but root
    try:
        manager = build_manager()
    except IsolationMissing as exc:
        log.critical("refusing to start: %s", exc)
        sys.exit(78)  # EX_CONFIG
    # SIGTERM (a deploy, an eviction, npm start's supervisor): uvicorn stops taking requests, then this
    # drains every run first — checkpointed and handed back — within ALLELE_DRAIN_SECONDS.
    drain_seconds = float(os.environ.get("ALLELE_DRAIN_SECONDS") or 600)
    CLEANUP.insert(0, lambda: manager.drain(drain_seconds))
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "8788"))
    uvicorn.run(
        create_app(manager, on_shutdown=CLEANUP),
        host=host,
        port=port,
        log_level=level.lower(),
        access_log=level == "DEBUG",
    )


if __name__ == "__main__":
    main()
