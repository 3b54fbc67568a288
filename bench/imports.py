"""The scientific stack's imports: what a run pays to import scipy, pandas, scikit-learn or TensorFlow when
it is forked from the stack's fork server (the stack pre-imported) and from the plain one (numpy, PyGAD
and the engine only), side by side; and each server's own memory and start (issue 27).

    container/.venv/bin/python bench/imports.py               # 7 rounds, TensorFlow 3 times
    container/.venv/bin/python bench/imports.py --rounds 3 --tensorflow 0
    container/.venv/bin/python bench/imports.py --smoke       # one round of everything: proves it runs

A run is ``bench/service.mjs``'s small job (100 generations of 50 solutions, 10 genes, a numpy fitness)
whose fitness source first imports one library, run as the worker runs it (``SandboxedProcess`` forked
from a fork server, in its own uid, cgroup and namespaces) but without HTTP. Its wall time, billed CPU
and peak memory are the run's metrics exactly as the completion report carries them
(``worker.completion.metrics``: ``execution_duration_ms`` is the wall time the service stores). The two
fork servers take turns run by run, every library in every round, so the machine's load moves both
alike. The worker forks a run from the stack's server when its code names scipy, pandas or sklearn
(``Host.forks_for``), else from the plain one: "− numpy only" is each run's wall time less a numpy-only
run's from the plain server, the issue's target being ≤ 50 ms for the stack's server's rows.
TensorFlow is imported by a run with the premium plan's caps (2048 MB) — its floor is the trial plan's
1024 MB (docs/environment.md) — and also timed in a plain interpreter.
Prints a markdown table and one JSON object (the raw figures) last.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from allele_worker import sandbox
from allele_worker.sandbox.forks import STACK_MODULES, ForkServer
from allele_worker.sandbox.plan import child_environment
from allele_worker.worker import completion

FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n"
SMALL = {
    "num_generations": 100,
    "sol_per_pop": 50,
    "num_parents_mating": 4,
    "num_genes": 10,
    "fitness_func_entry": "fitness",
}
IMPORTS = {
    "numpy only": "",
    "scipy.optimize": "import scipy.optimize\n",
    "pandas": "import pandas\n",
    "sklearn.ensemble": "import sklearn.ensemble\n",
    "sklearn (cv on iris)": (
        "from sklearn.datasets import load_iris\nfrom sklearn.model_selection import cross_val_score\n"
        "from sklearn.tree import DecisionTreeClassifier\n"
    ),
}
TENSORFLOW = "import tensorflow\nimport pygad.kerasga\n"
TICKS = os.sysconf("SC_CLK_TCK")


def run(host: sandbox.Host, forks: ForkServer, source: str, seed: int, memory_mb: int = 512) -> dict[str, Any]:
    """One small job whose fitness source starts with ``source``: its metrics as the service gets them."""
    limits = sandbox.Limits.from_caps(time_seconds=120, memory_mb=memory_mb)
    workdir = tempfile.mkdtemp(prefix="allele-bench-imports-")
    uid = host.take_uid()
    job: Any = {
        "params": {**SMALL, "fitness_func": source + FITNESS, "random_seed": seed},
        "initial_population": None,
        "caps": {"time_seconds": 120, "memory_mb": memory_mb},
    }
    try:
        process = sandbox.SandboxedProcess(
            job=job,
            limits=limits,
            isolation=host.isolation,
            workdir=workdir,
            uid=uid,
            cgroups=host.cgroups,
            forks=forks,
            group_name=host.group_name(uid, os.path.basename(workdir)),
        )
        process.start()
        report = process.wait()
        done = completion.fold(report, limits)
        if report.store is not None:
            report.store.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        host.give_uid(uid)
    if done.body["status"] != "succeeded":
        raise RuntimeError(f"the job failed: {done.body['error']} {report.output[-2000:]}")
    metrics = done.body["metrics"]
    return {
        "wall_ms": metrics["execution_duration_ms"],
        "cpu_s": metrics["cpu_seconds_used"],
        "peak_mb": metrics["peak_memory_mb"],
    }


def server_memory(pid: int) -> dict[str, Any]:
    """A fork server's memory (MB) and threads, from /proc: resident (anonymous, file-backed), its
    proportional share (PSS), address space."""
    status: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmSize", "Threads"):
                status[key] = int(value.split()[0])
    pss = 0
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return {
        "rss_mb": round(status["VmRSS"] / 1024),
        "anon_mb": round(status["RssAnon"] / 1024),
        "file_mb": round(status["RssFile"] / 1024),
        "pss_mb": round(pss / 1024),
        "vm_mb": round(status["VmSize"] / 1024),
        "threads": status["Threads"],
        "tasks": len(os.listdir(f"/proc/{pid}/task")),
    }


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start(stack: bool) -> tuple[ForkServer, float, float]:
    """A fork server: (it, wall seconds to ready, its CPU seconds to get there)."""
    started = time.monotonic()
    forks = ForkServer(modules=STACK_MODULES if stack else ())
    return forks, time.monotonic() - started, cpu_of(forks.pid)


def plain_tensorflow() -> dict[str, Any]:
    """``import tensorflow`` (and pygad.kerasga) in a plain interpreter with the runs' environment:
    seconds, and resident memory (MB) and address space before and after."""
    code = (
        "import time, numpy\n"
        "def status():\n"
        "    fields = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "    return {k: int(fields[k].split()[0]) // 1024 for k in ('VmRSS', 'RssAnon', 'RssFile', 'VmSize')}\n"
        "before = status()\n"
        "t = time.perf_counter()\n"
        "import tensorflow, pygad.kerasga\n"
        "print(__import__('json').dumps({'seconds': time.perf_counter() - t, 'before': before, 'after': status()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], env=child_environment("/tmp"), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def median(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(row[key] for row in rows), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tensorflow", type=int, default=3, help="TensorFlow runs per server (0: none)")
    parser.add_argument("--smoke", action="store_true", help="one round, one TensorFlow run: proves it runs")
    args = parser.parse_args()
    rounds, tf_runs = (1, 1) if args.smoke else (args.rounds, args.tensorflow)
    os.environ["ALLELE_FORK_SERVER"] = "0"  # the host's own servers are not used: the two below are
    host = sandbox.Host.setup()
    servers: dict[str, ForkServer] = {}
    try:
        starts: dict[str, dict[str, Any]] = {}
        for name, stack in (("the stack's", True), ("plain", False)):
            forks, ready_s, cpu_s = start(stack)
            servers[name] = forks
            starts[name] = {"ready_s": round(ready_s, 2), "cpu_s": round(cpu_s, 2), **server_memory(forks.pid)}
        for forks in servers.values():
            run(host, forks, "", 0)  # a server's first run pays its first touches
        rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for round_ in range(rounds):
            for label, source in IMPORTS.items():
                for name, forks in servers.items():
                    rows.setdefault((label, name), []).append(run(host, forks, source, round_))
        for round_ in range(tf_runs):
            for name, forks in servers.items():
                rows.setdefault(("tensorflow + pygad.kerasga (2048 MB)", name), []).append(
                    run(host, forks, TENSORFLOW, round_, memory_mb=2048)
                )
        load = os.getloadavg()[0]
    finally:
        for forks in servers.values():
            forks.close()
        host.close()
    plain = plain_tensorflow() if tf_runs else None

    print(f"\n## The scientific stack's imports (load average {load:.1f})\n")
    columns = "ready (s) | its CPU (s) | resident (MB) | anonymous | file | PSS | address space | threads"
    print(f"| fork server | {columns} |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, start_ in starts.items():
        print(
            f"| {name} | {start_['ready_s']} | {start_['cpu_s']} | {start_['rss_mb']} | {start_['anon_mb']} | "
            f"{start_['file_mb']} | {start_['pss_mb']} | {start_['vm_mb']} | {start_['threads']} |"
        )
    names = list(servers)
    print(
        "\n| the run's fitness imports | "
        + " | ".join(f"{n}: wall (ms) | − numpy only | billed CPU (s) | peak (MB)" for n in names)
        + " |"
    )
    print("|---|" + "---|---|---|---|" * len(names))
    table: dict[str, Any] = {}
    for label in [*IMPORTS, "tensorflow + pygad.kerasga (2048 MB)"]:
        cells = []
        for name in names:
            measured = rows.get((label, name))
            if not measured:
                continue
            base = median(rows[("numpy only", "plain")], "wall_ms")
            wall = median(measured, "wall_ms")
            figures = {
                "wall_ms": wall,
                "over_numpy_ms": round(wall - base),
                "cpu_s": median(measured, "cpu_s"),
                "peak_mb": median(measured, "peak_mb"),
                "runs": len(measured),
            }
            table.setdefault(label, {})[name] = figures
            cells.append(
                f"{wall:.0f} | {figures['over_numpy_ms']:+d} | {figures['cpu_s']:.3f} | {figures['peak_mb']:.0f}"
            )
        if cells:
            print(f"| {label} | " + " | ".join(cells) + " |")
    if plain is not None:
        print(
            f"\nTensorFlow in a plain interpreter: `import tensorflow, pygad.kerasga` {plain['seconds']:.1f} s, "
            f"resident {plain['before']['VmRSS']} → {plain['after']['VmRSS']} MB "
            f"(anonymous {plain['after']['RssAnon']}, file-backed {plain['after']['RssFile']}), "
            f"address space {plain['before']['VmSize']} → {plain['after']['VmSize']} MB"
        )
    print(json.dumps({"load": load, "servers": starts, "runs": table, "tensorflow_plain": plain}), flush=True)


if __name__ == "__main__":
    main()
