"""The warm fork server: a small job's billed CPU and wall time through the real sandbox, and what a
fresh fork server costs to start (its re-execution, issue 25).

    container/.venv/bin/python bench/forkserver.py                 # 3 rounds of 15 small jobs, 5 starts
    container/.venv/bin/python bench/forkserver.py --runs 31 --starts 0
    container/.venv/bin/python bench/forkserver.py --rotate-every 5  # runs while the server re-executes

The small job is ``bench/service.mjs``'s (100 generations of 50 solutions, 10 genes, a numpy fitness),
run as the worker runs it (``SandboxedProcess`` forked from the host's fork server, in its own uid,
cgroup and namespaces) but without HTTP: billed CPU is what the run's report would say, wall time is
from the spawn to the end of ``wait()``.  A start is ``ForkServer()``: until it answers ready, and the
CPU its process used to get there (imports and warm-up jobs).  Medians; one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from typing import Any

from allele_worker import sandbox
from allele_worker.sandbox.forks import ForkServer

FITNESS = "import numpy\n\ndef fitness(ga, solution, idx):\n    return -float(numpy.sum(solution ** 2))\n"
SMALL = {
    "num_generations": 100,
    "sol_per_pop": 50,
    "num_parents_mating": 4,
    "num_genes": 10,
    "fitness_func": FITNESS,
    "fitness_func_entry": "fitness",
}
TICKS = os.sysconf("SC_CLK_TCK")


def small_run(host: sandbox.Host, seed: int) -> tuple[float, float]:
    """(billed CPU seconds, wall seconds) of one small job."""
    limits = sandbox.Limits.from_caps(time_seconds=60, memory_mb=512)
    workdir = tempfile.mkdtemp(prefix="allele-bench-fs-")
    uid = host.take_uid()
    job: Any = {
        "params": {**SMALL, "random_seed": seed},
        "initial_population": None,
        "caps": {"time_seconds": 60, "memory_mb": 512},
    }
    try:
        process = sandbox.SandboxedProcess(
            job=job,
            limits=limits,
            isolation=host.isolation,
            workdir=workdir,
            uid=uid,
            cgroups=host.cgroups,
            forks=host.forks,
            group_name=host.group_name(uid, os.path.basename(workdir)),
        )
        started = time.monotonic()
        process.start()
        report = process.wait()
        wall = time.monotonic() - started
        if getattr(report, "store", None) is not None:  # main's build had no store
            report.store.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        host.give_uid(uid)
    if report.exit_code != 0 or report.killed:
        raise RuntimeError(f"the small job failed: {report}")
    return report.cpu_seconds, wall


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def server_start() -> tuple[float, float]:
    """(wall seconds to ready, CPU seconds of the new server) of one fork server start."""
    started = time.monotonic()
    server = ForkServer()
    wall = time.monotonic() - started
    try:
        return wall, cpu_of(server.pid)
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="small jobs per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--starts", type=int, default=5, help="fork server starts to time")
    parser.add_argument("--rotate-every", type=int, default=0, help="re-execute the fork server every N runs")
    args = parser.parse_args()
    if args.rotate_every:
        os.environ["ALLELE_FORK_SERVER_RUNS"] = str(args.rotate_every)
    host = sandbox.Host.setup()
    try:
        assert host.forks is not None, "no fork server"
        small_run(host, 0)  # the first run of a worker pays for its first touches
        cpu: list[float] = []
        wall: list[float] = []
        for round_ in range(args.rounds):
            for index in range(args.runs):
                billed, seconds = small_run(host, round_ * 1000 + index)
                cpu.append(billed)
                wall.append(seconds)
        print(
            json.dumps(
                {
                    "small_job_runs": len(cpu),
                    "billed_cpu_s_median": round(statistics.median(cpu), 4),
                    "billed_cpu_s_p90": round(statistics.quantiles(cpu, n=10)[-1], 4) if len(cpu) > 1 else None,
                    "wall_s_median": round(statistics.median(wall), 4),
                    "wall_s_p90": round(statistics.quantiles(wall, n=10)[-1], 4) if len(wall) > 1 else None,
                    "wall_s_max": round(max(wall), 4),
                    "rotate_every": args.rotate_every or None,
                    "rotations": getattr(host.forks, "rotations", None),
                }
            ),
            flush=True,
        )
    finally:
        host.close()
    if args.starts:
        starts = [server_start() for _ in range(args.starts)]
        print(
            json.dumps(
                {
                    "fork_server_starts": len(starts),
                    "ready_s_median": round(statistics.median(w for w, _ in starts), 3),
                    "cpu_s_median": round(statistics.median(c for _, c in starts), 3),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
