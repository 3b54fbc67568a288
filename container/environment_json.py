"""Writes src/model/environment.json, what the API's ``GET /api/v1/environment`` serves (docs/environment.md),
from the GA worker's own environment (``allele_worker.worker.environment.describe``, which the worker's
``GET /environment`` answers): in production no worker stands to be asked (each run starts a container
of its own), so the Worker serves this copy, and tests/test_environment.py fails when it differs from
the worker's environment or from requirements.txt. Python is stated by its minor version, "3.11": the local
environment's patch release and the image's (python:3.11-slim) need not be the same one.

    npm run environment                                   # this, then biome's formatting of the file
    container/.venv/bin/python container/environment_json.py --check   # exit status 1 when it differs

Not part of the package or the image.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from allele_worker.worker.environment import describe

TARGET = Path(__file__).resolve().parent.parent / "src" / "model" / "environment.json"


def listing() -> dict[str, Any]:
    """The API's listing: the worker's, Python by its minor version."""
    return dict(describe(python=f"{sys.version_info.major}.{sys.version_info.minor}"))


def main(argv: list[str]) -> int:
    wanted = listing()
    if "--check" in argv:
        current = json.loads(TARGET.read_text()) if TARGET.exists() else None
        if current != wanted:
            print(f"{TARGET} differs from the GA worker's environment: run `npm run environment`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(json.dumps(wanted, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
