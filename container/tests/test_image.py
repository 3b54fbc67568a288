"""The production image without Docker: the build context is assembled exactly as the Dockerfile's COPY
lines and .dockerignore say, installed into a fresh virtual environment as the image's RUN line does, and
started with the image's command and environment; then a real job runs on it (docs/deploy.md)."""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import CONTAINER, params

DOCKERFILE = CONTAINER / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def _ignored(relative: str) -> bool:
    """.dockerignore's verdict for a path of the context (last matching rule wins, `!` re-includes)."""
    verdict = False
    for rule in (CONTAINER / ".dockerignore").read_text().splitlines():
        rule = rule.strip()
        if not rule or rule.startswith("#"):
            continue
        negate = rule.startswith("!")
        pattern = rule[1:] if negate else rule
        pattern = pattern.rstrip("/")
        parts = Path(relative).parts
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        hit = (
            any(fnmatch.fnmatch(p, pattern) or fnmatch.fnmatch(p, pattern.replace("**/", "")) for p in prefixes)
            if "**" in pattern
            else any(fnmatch.fnmatch(p, pattern) for p in prefixes)
        )
        if hit:
            verdict = not negate
    return verdict


def _context_files() -> list[str]:
    files = []
    for root, _, names in os.walk(CONTAINER):
        for name in names:
            relative = os.path.relpath(os.path.join(root, name), CONTAINER)
            if not _ignored(relative):
                files.append(relative)
    return sorted(files)


def assemble(image_root: Path) -> dict[str, str]:
    """Copy what the COPY lines take from the context into ``image_root``; return ENV, WORKDIR and CMD."""
    context = set(_context_files())
    workdir, env, cmd = "/", {}, ""
    for word, rest in _instructions():
        if word == "WORKDIR":
            workdir = rest
        elif word == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
        elif word == "COPY":
            *sources, dest = shlex.split(rest)
            target = image_root / os.path.join(workdir, dest).lstrip("/")
            for source in sources:
                source = source.rstrip("/")
                if source in context:  # a file: into the destination directory, or as the destination
                    into_dir = dest.endswith("/") or dest == "." or len(sources) > 1
                    copies = [(source, target / os.path.basename(source) if into_dir else target)]
                else:  # a directory: its contents go into the destination
                    copies = [(f, target / f[len(source) + 1 :]) for f in context if f.startswith(source + "/")]
                assert copies, f"COPY {source}: nothing in the build context"
                for relative, out in copies:
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(CONTAINER / relative, out)
        elif word == "CMD":
            cmd = rest
    return {"workdir": workdir, "cmd": cmd, "env": json.dumps(env)}


@pytest.mark.slow
def test_the_build_context_holds_the_worker_and_nothing_else():
    files = _context_files()
    assert "requirements.txt" in files and "pyproject.toml" in files
    assert any(f.startswith("allele_worker/engine/") for f in files), "the engine is in the image"
    for f in files:
        assert f in ("requirements.txt", "pyproject.toml") or f.startswith("allele_worker/"), f
        assert "__pycache__" not in f and not f.startswith(("tests/", "bench")) and "quality" not in f, f


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the image runs as root with every sandbox measure required")
def test_the_image_runs_a_job(tmp_path: Path, fake_worker: Any) -> None:
    image = tmp_path / "image"
    facts = assemble(image)
    env_of_image: dict[str, str] = json.loads(facts["env"])
    assert json.loads(facts["cmd"]) == ["python", "-m", "allele_worker"]
    assert env_of_image["ALLELE_REQUIRE_ISOLATION"] == "all"
    # One run per instance: no second fork server with the stack (docs/decisions.md#scientific-stack).
    assert env_of_image["ALLELE_FORK_SERVER_STACK"] == "0"
    app = image / facts["workdir"].lstrip("/")

    # The image's RUN line: the pinned requirements (here: this machine's already installed copies,
    # offered to a fresh environment without the checkout's editable install), then the package itself.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.check_output([str(venv / "bin" / "python"), "-c", purelib], text=True).strip())
    (site / "requirements-of-the-image.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # `pip install .` of this pure-Python package puts allele_worker/ into site-packages (done offline
    # here by copying it there); the RUN line then removes the copy in /app.
    shutil.copytree(app / "allele_worker", site / "allele_worker")
    shutil.rmtree(app / "allele_worker")

    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = json.loads(facts["cmd"])
    # The default lock directory: this worker claims a uid block of its own beside the test session's.
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", **env_of_image, "HOST": "127.0.0.1", "PORT": str(port)}
    worker = subprocess.Popen([str(venv / "bin" / command[0]), *command[1:]], env=env, cwd=app, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        health = None
        while health is None:
            assert worker.poll() is None, worker.stderr.read().decode() if worker.stderr else ""
            assert time.monotonic() < deadline, "the image's worker did not start"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
                    health = json.load(answer)
            except OSError:
                time.sleep(0.2)
        assert health["isolation"]["notes"] == []  # every measure holds (else it would not have started)
        job = {
            "run_id": "runIMAGE0001",
            "submission_id": "sub123456789",
            "params": params(random_seed=1),
            "initial_population": None,
            "caps": {"time_seconds": 60, "memory_mb": 512},
            "report": {"url": f"{fake_worker.url}/internal/v1/runs/runIMAGE0001", "token": "ab" * 32},
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/runs",
            data=json.dumps(job).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).close()
        report = fake_worker.wait_for("/complete")["body"]
        assert report["status"] == "succeeded", (report["error"], report["output"])
        assert report["engine"].startswith("accelerated"), report["engine"]
        where = subprocess.check_output(
            [str(venv / "bin" / "python"), "-c", "import allele_worker; print(allele_worker.__file__)"],
            text=True,
            cwd="/",
        )
        assert where.startswith(str(venv)), where  # the installed package, not the checkout's
    finally:
        worker.terminate()
        worker.wait(10)
