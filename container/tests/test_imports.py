"""check_imports.py: the package's imports run down its layers, the worker side and the child side
never import each other, and there is no cycle; and the check finds each kind of problem."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from conftest import CONTAINER

SCRIPT = CONTAINER / "check_imports.py"


def _check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _package(root: Path, files: dict[str, str]) -> Path:
    """A small ``allele_worker`` package under ``root`` with ``files`` (path → source)."""
    package = root / "allele_worker"
    for name, source in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return package


def test_the_package_imports_run_one_way():
    check = _check()
    assert check.problems(check.import_graph()) == []
    answer = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert answer.returncode == 0, answer.stdout + answer.stderr


def test_every_import_form_is_read(tmp_path):
    check = _check()
    package = _package(
        tmp_path,
        {
            "wire.py": "",
            "errors.py": "from .wire import X\n",
            "sandbox/__init__.py": "",
            "sandbox/plan.py": "",
            "engine/__init__.py": "",
            "child/__init__.py": "",
            "child/jobs.py": "def run():\n    from .. import engine\n    from ..sandbox.plan import Limits\n",
            "child/entry.py": "from . import jobs\nimport allele_worker.wire\n",
        },
    )
    graph = check.import_graph(package)
    assert graph[package / "child/jobs.py"] == {package / "engine/__init__.py", package / "sandbox/plan.py"}
    assert graph[package / "child/entry.py"] == {package / "child/jobs.py", package / "wire.py"}
    assert graph[package / "errors.py"] == {package / "wire.py"}
    assert check.problems(graph, package) == []


def test_upward_imports_crossings_and_cycles_are_found(tmp_path):
    check = _check()
    package = _package(
        tmp_path,
        {
            "wire.py": "from .worker import app\n",
            "errors.py": "",
            "worker/__init__.py": "",
            "worker/app.py": "from ..child.jobs import execute\nfrom . import runs\n",
            "worker/runs.py": "from .app import create_app\n",
            "child/__init__.py": "",
            "child/jobs.py": "",
        },
    )
    found = check.problems(check.import_graph(package), package)
    assert any(line.startswith("upward import: allele_worker/wire.py") for line in found), found
    assert any(line.startswith("across the sides: allele_worker/worker/app.py") for line in found), found
    assert any(line.startswith("cycle: ") and "worker/runs.py" in line for line in found), found
