"""What a run's code can import (docs/environment.md): the GA worker's ``GET /environment`` lists its own
environment; the API's copy (src/model/environment.json) is that listing, and both are requirements.txt's
pins, no more, no fewer."""

from __future__ import annotations

import importlib.util
import json
import platform
import re
import sys

from conftest import CONTAINER
from starlette.testclient import TestClient

from allele_worker.worker.environment import FEATURED, describe, normalized

API_COPY = CONTAINER.parent / "src" / "model" / "environment.json"


def pins() -> dict[str, str]:
    """requirements.txt's exact pins by normalized name."""
    found: dict[str, str] = {}
    for line in (CONTAINER / "requirements.txt").read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", text)
            assert match, f"not an exact pin: {line!r}"
            found[normalized(match[1])] = match[2]
    return found


def test_the_listing_is_requirements_txt_exactly():
    listed = {package["name"]: package["version"] for package in describe()["packages"]}
    assert listed == pins()


def test_the_apis_copy_is_the_workers_listing():
    """`npm run environment` rewrites it; this fails when a pin or the listing's code changed without it."""
    sys.path.insert(0, str(CONTAINER))
    try:
        import environment_json
    finally:
        sys.path.remove(str(CONTAINER))
    assert json.loads(API_COPY.read_text()) == environment_json.listing(), "run `npm run environment`"
    assert environment_json.main(["environment_json.py", "--check"]) == 0


def test_the_featured_packages_come_first_and_every_module_is_importable():
    packages = describe()["packages"]
    featured = [package["name"] for package in packages if package["featured"]]
    assert featured == list(FEATURED)
    assert packages[: len(featured)] == [package for package in packages if package["featured"]]
    assert {"sklearn", "scipy", "pandas", "tensorflow", "keras", "pygad"} <= {
        module for package in packages for module in package["modules"]
    }
    for package in packages:
        for module in package["modules"]:
            assert importlib.util.find_spec(module) is not None, (package["name"], module)


def test_the_workers_get_environment():
    from allele_worker.worker.app import create_app

    class Manager:  # the route reads nothing of the run manager
        pass

    with TestClient(create_app(Manager())) as client:
        answer = client.get("/environment")
    assert answer.status_code == 200
    body = answer.json()
    assert body["python"] == platform.python_version()
    assert body == {**json.loads(API_COPY.read_text()), "python": platform.python_version()}
    assert body["data_files"]["mount"] == "/data"
