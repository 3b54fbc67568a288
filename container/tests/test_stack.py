"""The scientific stack inside the sandbox as it is (docs/environment.md): real user code — scikit-learn,
scipy, pandas, a GA-trained Keras network through pygad.kerasga — in real sandboxed children under the
syscall filter, the minimal root and the rlimits; thread pools held to the run's places and billed; the
fork servers a run is forked from; TensorFlow refused below its memory floor."""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import threading
from pathlib import Path

import pytest
from conftest import params, run_child

from allele_worker import sandbox
from allele_worker.child import libraries
from allele_worker.sandbox.forks import STACK_MODULES, names_the_stack
from allele_worker.sandbox.plan import (
    ADDRESS_SPACE_HEADROOM_MB,
    ADDRESS_SPACE_PER_PLACE_MB,
    NN_MIN_MEMORY_MB,
    THREAD_VARIABLES,
)

SITE_PACKAGES = Path(importlib.metadata.distribution("numpy").locate_file(""))


def once(body: str, *, head: str = "") -> dict:
    """params whose fitness runs ``body`` on its first call (``head`` at module level), printing what it
    returns as one ``REPORT <json>`` line; every call returns 1.0."""
    indented = "".join(f"        {line}\n" for line in body.strip().splitlines())
    source = (
        "import json, os, sys\n"
        + head.strip()
        + "\nDONE = []\ndef fitness(ga, solution, idx):\n    if not DONE:\n        DONE.append(1)\n"
        + indented
        + "    return 1.0\n"
    )
    return params(fitness_func=source, num_generations=1, sol_per_pop=4, num_parents_mating=2)


def reported(body: dict) -> dict:
    assert body["status"] == "succeeded", (body.get("error"), body.get("output"))
    lines = [line for line in body["output"].splitlines() if line.startswith("REPORT ")]
    assert lines, body["output"]
    return json.loads(lines[-1].removeprefix("REPORT "))


# --------------------------------------------------------------------------- pure


def test_runs_are_forked_from_the_stacks_server_when_their_code_names_it():
    assert names_the_stack({"fitness_func": "import sklearn.ensemble\n"})
    assert names_the_stack({"fitness_func": "from scipy import optimize\n"})
    assert names_the_stack({"fitness_func": "import numpy", "on_generation": "import pandas as pd"})
    assert not names_the_stack({"fitness_func": "import numpy\ndef fitness(ga, s, i):\n    return 1.0\n"})
    assert not names_the_stack({"fitness_func": "import scipyx, mypandas, sklearnish"})
    assert not names_the_stack({"name": "sklearn", "fitness_func": "import numpy"})  # code fields only
    assert {module.partition(".")[0] for module in STACK_MODULES} == {"scipy", "pandas", "sklearn"}


def test_the_stacks_fork_server_starts_with_the_first_run_that_names_the_stack(monkeypatch):
    """A worker that never sees such a run never pays its start (2 CPU-seconds); until it is ready, such
    runs are forked from the plain server."""
    lazy = sandbox.Host(isolation=sandbox.Isolation(), uids=None, cgroups=None)
    plain, stack = object(), object()
    lazy.forks = plain  # type: ignore[assignment]
    starts = threading.Semaphore(0)
    monkeypatch.setattr(lazy, "_start_stack_forks", starts.release)
    assert lazy.forks_for({"params": {"fitness_func": "import numpy"}}) is plain  # type: ignore[typeddict-item]
    assert not starts.acquire(timeout=0.2)
    assert lazy.forks_for({"params": {"fitness_func": "import sklearn"}}) is plain  # type: ignore[typeddict-item]
    assert starts.acquire(timeout=5)
    assert lazy.forks_for({"params": {"fitness_func": "import pandas"}}) is plain  # type: ignore[typeddict-item]
    assert not starts.acquire(timeout=0.2)  # once
    lazy.stack_forks = stack  # type: ignore[assignment]
    assert lazy.forks_for({"params": {"fitness_func": "import scipy"}}) is stack  # type: ignore[typeddict-item]
    assert lazy.forks_for({"params": {"fitness_func": "import numpy"}}) is plain  # type: ignore[typeddict-item]


def test_the_address_space_leaves_room_for_what_libraries_reserve():
    for places in (1, 2, 4):
        limits = sandbox.Limits.from_caps(time_seconds=60, memory_mb=1024, places=places)
        headroom = ADDRESS_SPACE_HEADROOM_MB + ADDRESS_SPACE_PER_PLACE_MB * places
        assert limits.address_space_mb == limits.hard_memory_mb + headroom
        # TensorFlow's measured reservation beyond its resident memory (sandbox/plan.py): 0.78 GB with one
        # thread a pool, 0.98 with two, 1.31 with four.
        assert headroom > {1: 780, 2: 980, 4: 1310}[places]


def test_the_childs_thread_pools_follow_its_places():
    for places in (1, 3):
        environment = sandbox.child_environment("/tmp", places)
        assert {name: environment[name] for name in THREAD_VARIABLES} == dict.fromkeys(THREAD_VARIABLES, str(places))


def test_tensorflow_is_refused_below_its_floor_and_nothing_else(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    floor = libraries.MemoryFloor(512)
    sys.meta_path.insert(0, floor)
    for name in ("tensorflow", "tensorflow.keras"):
        with pytest.raises(ImportError, match=f"at least {NN_MIN_MEMORY_MB} MB.*this run's is 512 MB"):
            floor.find_spec(name, None)
    assert floor.find_spec("numpy", None) is None
    assert floor.find_spec("tensorflowish", None) is None


# --------------------------------------------------------------------------- real children


@pytest.fixture(scope="module")
def stack_host(host: sandbox.Host) -> sandbox.Host:
    """The session's host once its stack's fork server is ready."""
    assert host.wait_for_stack() is not None, "the stack's fork server did not start"
    return host


@pytest.mark.slow
def test_a_scikit_learn_classifier_cross_validated_on_iris(stack_host):
    source = """
import numpy
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier
X, y = load_iris(return_X_y=True)
def fitness(ga, solution, idx):
    depth = 1 + int(abs(solution[0])) % 5
    model = DecisionTreeClassifier(max_depth=depth, random_state=0)
    return float(cross_val_score(model, X, y, cv=3, n_jobs=-1).mean())
"""
    body, _ = run_child(
        stack_host, params(fitness_func=source, num_genes=1, sol_per_pop=6, num_generations=3, random_seed=2)
    )
    assert body["status"] == "succeeded", body["error"]
    assert 0.9 < body["result"]["best_solution_fitness"] <= 1.0  # a tree of depth ≥ 2 on iris


@pytest.mark.slow
def test_scipy_optimize_inside_a_fitness_function(stack_host):
    source = """
import numpy
from scipy.optimize import minimize_scalar
def fitness(ga, solution, idx):
    # the best shift of a parabola, found by scipy for every solution
    found = minimize_scalar(lambda x: (x - solution[0]) ** 2 + solution[1] ** 2)
    return -float(found.fun)
"""
    body, _ = run_child(
        stack_host, params(fitness_func=source, num_genes=2, sol_per_pop=8, num_generations=5, random_seed=3)
    )
    assert body["status"] == "succeeded", body["error"]
    best = body["result"]["best_solution"]
    assert body["result"]["best_solution_fitness"] == pytest.approx(-(best[1] ** 2), abs=1e-6)


@pytest.mark.slow
def test_a_pandas_groupby_over_a_table_the_run_wrote(stack_host):
    body, _ = run_child(
        stack_host,
        once(
            """
table = pandas.read_csv("/tmp/jobs.csv")
totals = table.groupby("machine")["hours"].sum().to_dict()
print("REPORT " + json.dumps({"totals": totals, "cwd": os.getcwd()}))
""",
            head="""
import pandas
with open("/tmp/jobs.csv", "w") as handle:
    handle.write("job,machine,hours\\na,m1,2.5\\nb,m2,1\\nc,m1,4\\nd,m3,0.5\\ne,m2,3\\n")
""",
        ),
    )
    assert reported(body)["totals"] == {"m1": 6.5, "m2": 4.0, "m3": 0.5}


@pytest.mark.slow
def test_a_keras_network_trained_for_xor_by_pygad_kerasga(stack_host):
    """The trial plan's memory cap (1024 MB: TensorFlow's floor), so the floor is known to be enough."""
    source = """
import numpy
import tensorflow as tf
import pygad.kerasga
tf.keras.utils.set_random_seed(0)
MODEL = tf.keras.Sequential([
    tf.keras.Input((2,)),
    tf.keras.layers.Dense(4, activation="tanh"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
X = numpy.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype="float32")
Y = numpy.array([0, 1, 1, 0], dtype="float32")
def fitness(ga, solution, index):
    out = pygad.kerasga.predict(model=MODEL, solution=solution, data=X).ravel()
    # one point a right answer, plus up to one for closeness: 4.5 or more is all four right
    return float(numpy.sum((out > 0.5) == (Y > 0.5))) + 1.0 - float(numpy.mean((out - Y) ** 2))
"""
    genes = 2 * 4 + 4 + 4 * 1 + 1
    body, report = run_child(
        stack_host,
        params(
            fitness_func=source,
            num_genes=genes,
            sol_per_pop=10,
            num_generations=80,
            num_parents_mating=6,
            mutation_percent_genes=10,
            random_seed=1,
            stop_criteria="reach_4.5",
        ),
        time_seconds=300,
        memory_mb=NN_MIN_MEMORY_MB,
    )
    assert body["status"] == "succeeded", (body["error"], report.output[-2000:])
    assert body["result"]["best_solution_fitness"] >= 4.5  # XOR learnt: every answer right
    assert "cpu_feature_guard" not in body["output"]  # TensorFlow's informational lines stay out


@pytest.mark.slow
def test_tensorflow_below_its_floor_fails_with_a_clear_error(stack_host):
    body, _ = run_child(stack_host, once("import pygad.kerasga"), memory_mb=512)
    assert body["status"] == "failed"
    assert body["error"]["code"] == "code_error"
    assert f"TensorFlow needs a run memory cap of at least {NN_MIN_MEMORY_MB} MB" in body["error"]["message"]
    assert "this run's is 512 MB" in body["error"]["message"]


THREADS = """
from threadpoolctl import threadpool_info
import joblib, sklearn.ensemble
pools = sorted({(pool["internal_api"], pool["num_threads"]) for pool in threadpool_info()})
print("REPORT " + json.dumps({
    "environment": {name: os.environ.get(name) for name in NAMES},
    "pools": pools,
    "joblib": joblib.cpu_count(),
}))
""".replace("NAMES", repr(THREAD_VARIABLES))


@pytest.mark.slow
@pytest.mark.parametrize("places", [1, 2])
@pytest.mark.parametrize("forked", [True, False], ids=["forked", "fresh"])
def test_thread_pools_are_held_to_the_runs_places(stack_host, places, forked, monkeypatch):
    if not forked:
        monkeypatch.setattr(stack_host, "forks", None)
        monkeypatch.setattr(stack_host, "stack_forks", None)
    body, _ = run_child(stack_host, once(THREADS), places=places)
    seen = reported(body)
    assert seen["environment"] == dict.fromkeys(THREAD_VARIABLES, str(places))
    assert {api for api, _ in seen["pools"]} >= {"openblas", "openmp"}
    assert {threads for _, threads in seen["pools"]} == {places}
    assert seen["joblib"] == places


@pytest.mark.slow
def test_a_runs_threads_are_billed(stack_host):
    """Two places of BLAS threads: the CPU billed is the whole process's, every thread's, not its first
    thread's (the cgroup's, or what the init reaped)."""
    body, _ = run_child(
        stack_host,
        once(
            """
a = numpy.random.default_rng(0).random((900, 900))
for _ in range(12):
    a = numpy.tanh(a @ a)
def cpu(path):
    fields = open(path).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
tasks = os.listdir("/proc/self/task")
print("REPORT " + json.dumps({
    "threads": len(tasks),
    "all": cpu("/proc/self/stat"),
    "first": cpu(f"/proc/self/task/{os.getpid()}/stat"),
}))
""",
            head="import numpy",
        ),
        places=2,
    )
    seen = reported(body)
    assert seen["threads"] >= 2  # OpenBLAS's second thread
    assert seen["all"] > seen["first"]  # it worked
    assert body["metrics"]["cpu_seconds_used"] >= seen["all"] * 0.95


@pytest.mark.slow
def test_the_stacks_files_are_all_readable_by_a_run_and_none_is_written(stack_host):
    """Every file of every installed distribution (but an absent .pyc) is there and readable as the run's
    user inside the minimal root; after runs that import the whole stack (TensorFlow too), nothing in site-packages is
    newer than before them (it is bound read-only: no .pyc to write, no cache)."""
    before = max(path.stat().st_mtime for path in SITE_PACKAGES.rglob("*"))
    imports = ", ".join(STACK_MODULES)
    body, _ = run_child(
        stack_host,
        once(
            """
import importlib.metadata, tensorflow, keras, pygad.kerasga
files, unreadable = 0, []
for dist in importlib.metadata.distributions():
    for file in dist.files or ():
        path = str(file.locate())
        files += 1
        # A compiled cache (.pyc) a RECORD lists may be absent (pip install --no-compile, a cleaned cache).
        if not os.access(path, os.R_OK) and (os.path.exists(path) or not path.endswith(".pyc")):
            unreadable.append(path)
try:
    open(os.path.join(os.path.dirname(numpy.__file__), "written-by-a-run"), "w")
    wrote = True
except OSError:
    wrote = False
print("REPORT " + json.dumps({"files": files, "unreadable": unreadable[:20], "wrote": wrote}))
""",
            head=f"import numpy, {imports}",
        ),
        memory_mb=NN_MIN_MEMORY_MB,
        time_seconds=120,
    )
    seen = reported(body)
    assert seen["files"] > 5000 and seen["unreadable"] == [] and seen["wrote"] is False, seen
    assert max(path.stat().st_mtime for path in SITE_PACKAGES.rglob("*")) == before


@pytest.mark.slow
def test_the_fork_servers_hold_one_thread_and_their_runs_come_from_the_right_one(stack_host):
    """Fork with threads is unsafe: neither server may have started one (none of the stack's imports,
    nor the warm-up). A run is forked from the server its code names."""
    assert stack_host.forks is not None and stack_host.stack_forks is not None
    for server in (stack_host.forks, stack_host.stack_forks):
        assert os.listdir(f"/proc/{server.pid}/task") == [str(server.pid)]
    loaded = Path(f"/proc/{stack_host.stack_forks.pid}/maps").read_text()
    assert "sklearn" in loaded and "scipy" in loaded and "tensorflow" not in loaded
    assert "sklearn" not in Path(f"/proc/{stack_host.forks.pid}/maps").read_text()

    parents: dict[str, int] = {}
    for name, head in (("plain", "import numpy"), ("stack", "import sklearn.ensemble")):

        def started(process: sandbox.SandboxedProcess, name: str = name) -> None:
            assert process.pid is not None
            parents[name] = _parent_of(process.pid)

        body, _ = run_child(stack_host, once("pass", head=head), on_start=started)
        assert body["status"] == "succeeded", body["error"]
    assert parents == {"plain": stack_host.forks.pid, "stack": stack_host.stack_forks.pid}


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])
