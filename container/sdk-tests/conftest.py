"""The unmodified Vilvik SDK against a running Allele (test/e2e/sdk.test.ts starts it and passes
ALLELE_BASE_URL, the API root, ALLELE_API_KEY, a fresh account's key, and ALLELE_LIMITED_API_KEY, the key
of an account whose daily quota is one run)."""

from __future__ import annotations

import os

import pytest
import vilvik

FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n"
JOB = {"fitness_func": FITNESS, "num_genes": 4, "num_generations": 15, "sol_per_pop": 8, "num_parents_mating": 4}


@pytest.fixture(scope="session")
def base_url() -> str:
    return os.environ["ALLELE_BASE_URL"]


@pytest.fixture(scope="session")
def api_key() -> str:
    return os.environ["ALLELE_API_KEY"]


@pytest.fixture(scope="session")
def client(base_url: str, api_key: str) -> vilvik.Client:
    return vilvik.Client(api_key=api_key, base_url=base_url)


@pytest.fixture(scope="session")
def limited_client(base_url: str) -> vilvik.Client:
    return vilvik.Client(api_key=os.environ["ALLELE_LIMITED_API_KEY"], base_url=base_url)
