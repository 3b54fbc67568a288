"""What a run's code can import, as this worker's own environment says: ``GET /environment``
(docs/runner-protocol.md), and the source of the API's ``GET /api/v1/environment`` (docs/environment.md:
``container/environment_json.py`` writes it into src/model/environment.json, which
tests/test_environment.py holds to this and to requirements.txt).

The packages are the installed distributions the worker package requires, with everything they require in
turn (pyproject.toml's dependencies: the service, PyGAD and the scientific stack; requirements.txt pins
them): what the image installs, and nothing of a developer's tools (pytest, ruff, mypy) that a local
environment holds besides. Each with its version and the top-level modules it provides.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re

from ..sandbox.plan import NN_MIN_MEMORY_MB, THREAD_VARIABLES
from ..wire import Environment, EnvironmentPackage

ROOT = "allele-worker"
# The libraries the environment is curated for (docs/decisions.md), listed first; the rest are theirs
# and the service's dependencies, importable too.
FEATURED = ("numpy", "scipy", "pandas", "scikit-learn", "tensorflow-cpu", "keras", "pygad", "joblib", "threadpoolctl")
# Where a run finds the data files its submission names (the data files feature, issue 27).
DATA_MOUNT = "/data"


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them: ``tensorflow_cpu`` → ``tensorflow-cpu``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_closure(root: str = ROOT) -> dict[str, importlib.metadata.Distribution]:
    """The installed distributions ``root`` requires, transitively (extras and other platforms' markers
    left out), by normalized name, ``root`` itself not included."""
    from packaging.requirements import Requirement

    found: dict[str, importlib.metadata.Distribution] = {}
    pending = [root]
    while pending:
        name = pending.pop()
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a requirement this platform does not install
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            key = normalized(requirement.name)
            if key not in found and key != root:
                try:
                    found[key] = importlib.metadata.distribution(requirement.name)
                except importlib.metadata.PackageNotFoundError:
                    continue
                pending.append(requirement.name)
    return found


def packages() -> list[EnvironmentPackage]:
    """The importable packages: the featured ones first (in ``FEATURED``'s order), then the rest by name."""
    modules: dict[str, list[str]] = {}
    for module, names in importlib.metadata.packages_distributions().items():
        if not module.startswith("_"):
            for name in names:
                modules.setdefault(normalized(name), []).append(module)
    listed: list[EnvironmentPackage] = [
        {
            "name": name,
            "version": dist.version,
            "modules": sorted(set(modules.get(name, []))),
            "featured": name in FEATURED,
        }
        for name, dist in installed_closure().items()
    ]
    order = {name: index for index, name in enumerate(FEATURED)}
    return sorted(listed, key=lambda package: (order.get(package["name"], len(order)), package["name"]))


def describe(*, python: str | None = None) -> Environment:
    """This worker's environment as a run sees it (``python``: the version to state, default this one's)."""
    return {
        "python": python or platform.python_version(),
        "packages": packages(),
        "threads": {
            "variables": list(THREAD_VARIABLES),
            "description": (
                "each set to the run's places: 1, or N for a run with parallel_processing N; the threads "
                "run in the run's control group and their CPU time is billed"
            ),
        },
        "memory": {
            "tensorflow_min_memory_mb": NN_MIN_MEMORY_MB,
            "description": (
                f"TensorFlow (and pygad.kerasga) needs a run memory cap of at least {NN_MIN_MEMORY_MB} MB, which "
                "runs paid with credits and the trial and premium plans' runs have (the free plan's runs paid by "
                "the plan, 512 MB, do not): below it, import tensorflow fails with an ImportError that says so"
            ),
        },
        "data_files": {
            "mount": DATA_MOUNT,
            "read_only": True,
            "available": False,
            "description": (
                f"a submission's data files, read-only at {DATA_MOUNT}/<name> (the data files feature lands separately)"
            ),
        },
    }
