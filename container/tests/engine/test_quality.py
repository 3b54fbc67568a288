"""bench/quality.py, the accelerated engine's quality against stock PyGAD: its short rank test, and
its Mann-Whitney U in numpy against the exact distribution."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from conftest import CONTAINER

QUALITY = CONTAINER.parent / "bench" / "quality.py"  # a benchmark tool, not part of the worker


def _load_quality() -> Any:
    spec = importlib.util.spec_from_file_location("quality", QUALITY)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quality_rank_test_short():
    with warnings.catch_warnings():
        answer = subprocess.run(
            [sys.executable, str(QUALITY), "--short", "--seeds", "8", "--generations", "25"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "not worse" in answer.stdout


def test_mann_whitney_in_numpy():
    quality = _load_quality()
    # Known values: x clearly smaller than y → tiny p; identical samples → p ≈ 0.5+
    u, p = quality.mann_whitney_less(np.arange(10), np.arange(10, 20))
    assert u == 0 and p < 0.001
    u, p = quality.mann_whitney_less(np.arange(10), np.arange(10))
    assert u == 50 and p > 0.5
    # Against the exact permutation distribution of U (small samples, with ties).
    import itertools

    x, y = np.array([1, 2, 3, 4, 5]), np.array([3, 4, 5, 6, 7])
    u, p = quality.mann_whitney_less(x, y)
    assert u == 4.5
    pooled = np.concatenate([x, y])
    ranks, _ = quality.rank_average(pooled)
    exact = [ranks[list(c)].sum() - 15 for c in itertools.combinations(range(10), 5)]
    assert abs(p - np.mean(np.array(exact) <= u)) < 0.03
