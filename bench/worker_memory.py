"""The GA worker's own peak memory while a run sends it the most it can (issue 25): a real worker
process (``python -m allele_worker``) with a stand-in for the Worker's report endpoints that reads and
discards every body, and one run per worker process, so each peak (``VmHWM``) is that run's.

    container/.venv/bin/python bench/worker_memory.py                  # both cases, ≈ 1–2 minutes
    container/.venv/bin/python bench/worker_memory.py --case outcome   # one of them

Cases, both at the plan's largest population (Premium: ``sol_per_pop`` 5000 × ``num_genes`` 1000,
src/admission/limits.ts and docs/api.md "Parameter caps"):

- ``progress``: user code writes one 200 MiB progress line (a list ``x`` of 52 million numbers) to every
  pipe it holds above stderr;
- ``outcome``: a normal run (one generation) whose outcome carries that population.

Prints, per case, the worker's resident memory when idle (after its start and one small run), its
peak over the run, the difference, and how the run ended.  ``--python`` runs another interpreter (e.g.
one whose ``allele_worker`` is another checkout's, to measure before and after a change).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LARGEST = {"sol_per_pop": 5000, "num_genes": 1000}  # Premium's largest population (src/admission/limits.ts)
FLOOD = """\
import os, stat
DONE = []
def fitness(ga, solution, index):
    if not DONE:
        DONE.append(1)
        head = b'{"type":"progress","generations_completed":1,"best_solution_fitness":1.0,"x":[1.5'
        line = head + b',1.5' * ((200 * 2**20 - len(head) - 3) // 4) + b']}\\n'  # 200 MiB, 52 M numbers
        for fd in range(3, 64):
            try:
                if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                    continue
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view):]
            except OSError:
                pass
    return 0.0
"""
SUM = "import numpy\ndef fitness(ga, solution, index):\n    return -float(numpy.sum(solution ** 2))\n"
CASES: dict[str, dict[str, Any]] = {
    "progress": {**LARGEST, "num_generations": 1, "num_parents_mating": 2, "fitness_func": FLOOD},
    "outcome": {**LARGEST, "num_generations": 1, "num_parents_mating": 2, "fitness_func": SUM, "random_seed": 1},
}
SMALL = {"num_generations": 5, "sol_per_pop": 10, "num_parents_mating": 2, "num_genes": 3, "fitness_func": SUM}


class Sink:
    """The Worker's report endpoints: every body read in 1 MiB pieces and dropped (its size kept);
    the completion report parsed."""

    def __init__(self) -> None:
        self.completes: dict[str, Any] = {}
        self.sizes: dict[str, int] = {}
        self.done = threading.Condition()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                kept = bytearray() if self.path.endswith("/complete") else None
                left = length
                while left:
                    piece = self.rfile.read(min(left, 1 << 20))
                    if not piece:
                        break
                    left -= len(piece)
                    if kept is not None:
                        kept += piece
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with sink.done:
                    sink.sizes[self.path] = length
                    if kept is not None:
                        sink.completes[self.path.split("/")[-2]] = json.loads(kept)
                    sink.done.notify_all()

            do_PUT = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def complete(self, run_id: str, timeout: float) -> Any:
        with self.done:
            assert self.done.wait_for(lambda: run_id in self.completes, timeout), f"{run_id}: no completion report"
            return self.completes[run_id]


def status_kb(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak resident memory) of ``pid``, in KiB."""
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(value.split()[0])
    return values


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_worker(python: str, run_dir: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "ALLELE_RUN_DIR": run_dir,
        "LOG_LEVEL": "WARNING",
    }
    worker = subprocess.Popen([python, "-m", "allele_worker"], env=env, cwd=run_dir, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return worker, port
        except OSError:
            if time.monotonic() > deadline or worker.poll() is not None:
                worker.kill()
                raise RuntimeError("the worker did not start") from None
            time.sleep(0.1)


def post_run(port: int, sink: Sink, run_id: str, params: dict[str, Any], memory_mb: int = 2048) -> None:
    body = {
        "run_id": run_id,
        "submission_id": "subBENCH0001",
        "params": {**params, "fitness_func_entry": "fitness"},
        "initial_population": None,
        "caps": {"time_seconds": 600, "memory_mb": memory_mb},
        "report": {"url": f"{sink.url}/internal/v1/runs/{run_id}", "token": "ab" * 32},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/runs",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=30).close()


def measure(python: str, case: str, timeout: float = 600.0) -> dict[str, Any]:
    """One worker process: a small run first (so idle means warm), then the case's run."""
    sink = Sink()
    with tempfile.TemporaryDirectory(prefix="allele-bench-mem-") as run_dir:
        worker, port = start_worker(python, run_dir)
        try:
            post_run(port, sink, "runWARM00001", SMALL)
            sink.complete("runWARM00001", 60)
            time.sleep(0.5)
            idle = status_kb(worker.pid)
            started = time.monotonic()
            post_run(port, sink, "runCASE00001", CASES[case])
            report = sink.complete("runCASE00001", timeout)
            seconds = time.monotonic() - started
            peak = status_kb(worker.pid)
        finally:
            worker.terminate()
            worker.wait(10)
    sink.server.shutdown()
    return {
        "case": case,
        "idle_rss_mb": round(idle["VmRSS"] / 1024, 1),
        "peak_rss_mb": round(peak["VmHWM"] / 1024, 1),
        "above_idle_mb": round((peak["VmHWM"] - idle["VmRSS"]) / 1024, 1),
        "status": report["status"],
        "error": (report.get("error") or {}).get("code"),
        "uploaded_mb": round(sum(v for k, v in sink.sizes.items() if "runCASE" in k) / 2**20, 1),
        "run_peak_memory_mb": report["metrics"]["peak_memory_mb"],
        "run_cpu_seconds": report["metrics"]["cpu_seconds_used"],
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--python", default=sys.executable, help="the worker's interpreter")
    args = parser.parse_args()
    for case in args.case or ["progress", "outcome"]:
        print(json.dumps(measure(args.python, case)), flush=True)


if __name__ == "__main__":
    main()
