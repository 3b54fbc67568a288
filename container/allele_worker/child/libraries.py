"""The scientific stack in the job process, set up before any of the user's code runs
(docs/environment.md): the run's thread pools sized to its places, and TensorFlow refused with a clear
error below its memory floor.

**Threads.**  A fresh interpreter gets its thread counts from its environment
(``sandbox.plan.child_environment``).  A fork of the fork server inherits the server's environment (one
thread everywhere) and the pools of what the server already loaded — numpy's and scipy's OpenBLAS,
scikit-learn's OpenMP — sized when they were loaded; so the job sets the run's own counts in its
environment (read by what is loaded later, by joblib/loky when it counts CPUs, by TensorFlow when it
starts its pools, and by every process the run starts) and, for a run of more than one place, resizes
the loaded pools with threadpoolctl.

**TensorFlow's floor.**  Its import alone takes ≈ 600 MB and reserves more than a gigabyte of address
space (``sandbox.plan.NN_MIN_MEMORY_MB``); under a smaller memory cap it would stop at the soft cap or be
killed at the hard one, or spin in its thread pools against the address-space limit.  Below the floor a
finder at the head of ``sys.meta_path`` refuses ``import tensorflow`` (so also ``pygad.kerasga`` and
Keras on its TensorFlow backend) with an ``ImportError`` that names the floor and the run's cap.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

from ..sandbox.plan import NN_MIN_MEMORY_MB, thread_environment

# The modules refused below the floor (a top-level name; their submodules need it first).
NEEDS_THE_FLOOR = ("tensorflow",)


def prepare(*, places: int, memory_mb: int) -> None:
    """Size the run's thread pools to ``places`` and refuse TensorFlow under ``memory_mb`` below its floor."""
    size_thread_pools(places)
    if memory_mb < NN_MIN_MEMORY_MB:
        sys.meta_path.insert(0, MemoryFloor(memory_mb))


def size_thread_pools(places: int) -> None:
    """The run's thread counts in its environment, and, where the pools were already loaded (a fork of
    the fork server) with another size, those pools resized (one thread each in the server)."""
    wanted = thread_environment(places)
    loaded = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    if loaded != wanted and "numpy" in sys.modules:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=max(1, places))


class MemoryFloor(MetaPathFinder):
    """Refuses ``NEEDS_THE_FLOOR`` in a run whose memory cap is below ``NN_MIN_MEMORY_MB``."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in NEEDS_THE_FLOOR:
            raise ImportError(
                f"TensorFlow needs a run memory cap of at least {NN_MIN_MEMORY_MB} MB; this run's is "
                f"{self.memory_mb} MB (importing it alone takes about 600 MB). Runs paid with credits, and "
                "the trial and premium plans' runs, have enough",
                name=fullname,
            )
        return None
