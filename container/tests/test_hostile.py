"""Hostile user code against the real sandbox: one test per attack of the sandbox-hardening issue and
per measure (container/README.md, "Threat model").  Every run here is a real child of the real
sandbox; the tests that need root, namespaces or cgroups say why they skip where they cannot run."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import CONTAINER, IS_ROOT, live_children, params, run_child

from allele_worker import sandbox
from allele_worker.sandbox.host import DEFAULT_UID_BASE
from allele_worker.sandbox.uids import BLOCK_SIZE, pids_of_uids

needs_root = pytest.mark.skipif(not IS_ROOT, reason="namespaces, uids and cgroups need a root worker")


def hostile(body: str, *, returns: str = "0.0") -> dict[str, Any]:
    """Job parameters whose fitness function runs ``body`` once (first call), then returns."""
    source = (
        "import os, sys, time\nDONE = []\ndef fitness(ga, solution, idx):\n"
        "    if not DONE:\n        DONE.append(1)\n"
        + textwrap.indent(textwrap.dedent(body), "        ")
        + f"\n    return {returns}\n"
    )
    return params(
        fitness_func=source, fitness_func_entry="fitness", num_generations=1, sol_per_pop=4, num_parents_mating=2
    )


def requires(isolation: sandbox.Isolation, *measures: str) -> None:
    missing = [m for m in measures if not getattr(isolation, m)]
    if missing:
        pytest.skip(f"this machine does not enforce {', '.join(missing)}: {'; '.join(isolation.notes)}")


# --------------------------------------------------------------------------- secrets and other runs


@pytest.mark.slow
@needs_root
def test_proc_shows_no_other_process(host, isolation):
    """A process of the host with a secret on its command line and in its environment (as wrangler
    once had ADMIN_TOKEN) is invisible: the run's /proc lists its own processes only."""
    requires(isolation, "pid_namespace")
    secret = f"SECRET-{os.getpid()}-{time.time_ns()}"
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", secret], env={"ADMIN_TOKEN": secret})
    try:
        body, _ = run_child(
            host,
            hostile("""
            found, pids = [], []
            for entry in os.listdir('/proc'):
                if entry.isdigit():
                    pids.append(int(entry))
                    for name in ('cmdline', 'environ'):
                        try:
                            found.append(open(f'/proc/{entry}/{name}', 'rb').read().decode('latin-1'))
                        except OSError:
                            pass
            print('PIDS', sorted(pids))
            print('SEEN', '|'.join(found))
        """),
        )
    finally:
        decoy.kill()
        decoy.wait()
    assert body["status"] == "succeeded", body
    assert secret not in body["output"]
    pids = json.loads(body["output"].split("PIDS ")[1].splitlines()[0])
    assert set(pids) <= {1, 2}, pids  # the namespace's init and the job itself


@pytest.mark.slow
@needs_root
def test_no_other_run_is_discoverable(host, isolation):
    """While another run is live, nothing a run can read names it (no run id in /proc, no directory)."""
    requires(isolation, "pid_namespace", "minimal_root")
    started = threading.Event()
    other: dict[str, Any] = {}

    def other_run() -> None:
        # Lives until the scan below is over (then cancelled), so the scan always has it to find.
        other["body"], other["report"] = run_child(
            host,
            hostile("time.sleep(120)"),
            time_seconds=180,
            on_start=lambda process: (other.update(workdir=process.workdir, process=process), started.set()),
        )

    thread = threading.Thread(target=other_run)
    thread.start()
    assert started.wait(20)
    try:
        marker = os.path.basename(other["workdir"])
        body, _ = run_child(
            host,
            hostile("""
            hits = []
            for top in ('/proc', '/tmp', '/', '/dev', '/etc'):
                for root, dirs, files in os.walk(top):
                    if root.startswith('/proc/') and root.count('/') > 3:
                        dirs[:] = []
                    for name in dirs + files:
                        hits.append(os.path.join(root, name))
                    if len(hits) > 200000:
                        break
            for entry in os.listdir('/proc'):
                if entry.isdigit():
                    try:
                        hits.append(open(f'/proc/{entry}/cmdline', 'rb').read().decode('latin-1'))
                    except OSError:
                        pass
            print('LISTING', '\\n'.join(h for h in hits if 'run-' in h or 'allele-test' in h))
        """),
            time_seconds=30,
        )
    finally:
        other["process"].kill("cancel")
        thread.join()
    assert body["status"] == "succeeded", body
    assert marker not in body["output"]
    assert other["report"].killed == "cancel"  # it was alive during the whole scan


@pytest.mark.slow
@needs_root
def test_service_files_are_not_readable(host, isolation, tmp_path_factory):
    """A checkout outside /tmp with world-readable state files (the worst case), the service user's
    HOME and the real checkout: the run cannot open any of them."""
    requires(isolation, "minimal_root")
    checkout = Path(tempfile.mkdtemp(prefix="allele-checkout-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    state = checkout / ".wrangler"
    (state / "state" / "v3" / "d1").mkdir(parents=True)
    secrets = {
        state / "allele-local.json": '{"adminToken": "admin-secret", "runTokenSecret": "run-secret"}',
        state / "state" / "v3" / "d1" / "db.sqlite": "webhook secrets, key hashes, other tenants' code",
        checkout / ".dev.vars": "ADMIN_TOKEN=admin-secret",
    }
    for path, text in secrets.items():
        path.write_text(text)
        path.chmod(0o644)
    for directory in (checkout, state, state / "state", state / "state" / "v3", state / "state" / "v3" / "d1"):
        directory.chmod(0o755)
    targets = [
        *map(str, secrets),
        str(CONTAINER.parent / "package.json"),
        str(CONTAINER / "pyproject.toml"),
        os.path.expanduser("~/.bashrc"),
        os.path.expanduser("~"),
        "/etc/shadow",
        "/etc/hostname",
    ]
    try:
        body, _ = run_child(
            host,
            hostile(f"""
            for path in {targets!r}:
                try:
                    if os.path.isdir(path):
                        print('LISTED', path, os.listdir(path))
                    else:
                        print('READ', path, open(path).read()[:40])
                except OSError as exc:
                    print('DENIED', path, type(exc).__name__)
        """),
        )
    finally:
        shutil.rmtree(checkout, ignore_errors=True)
    assert body["status"] == "succeeded", body
    assert "READ" not in body["output"] and "secret" not in body["output"], body["output"]
    # A directory on the way to the Python installation or the worker package shows that way only.
    on_the_way = {
        part
        for path in (sys.base_prefix, sys.prefix, str(CONTAINER / "allele_worker"))
        for part in Path(os.path.realpath(path)).parts
    }
    for line in body["output"].splitlines():
        if line.startswith("LISTED"):
            listed = eval(line.split(" ", 2)[2])  # the repr of a list of names, printed above
            assert set(listed) <= on_the_way, line


@pytest.mark.slow
@needs_root
def test_home_and_tmpdir_are_private_and_writable(host, isolation):
    requires(isolation, "minimal_root")
    body, _ = run_child(
        host,
        hostile("""
        import tempfile
        home = os.environ['HOME']
        open(os.path.join(home, 'a.txt'), 'w').write('x')
        with tempfile.NamedTemporaryFile() as handle:
            handle.write(b'y')
        print('WROTE', home, tempfile.gettempdir(), sorted(os.listdir('/')))
        for path in ('/usr/x', '/x', '/etc/x'):
            try:
                open(path, 'w')
                print('ESCAPED', path)
            except OSError:
                pass
    """),
    )
    assert body["status"] == "succeeded", body
    assert "WROTE /tmp /tmp" in body["output"] and "ESCAPED" not in body["output"]


@pytest.mark.slow
@needs_root
def test_no_namespaces_or_kernel_interfaces_beyond_the_sandbox(host, isolation):
    """Unprivileged user namespaces (on by default in most kernels) would give the run every capability
    inside a namespace of its own (mounts, nf_tables through a network namespace of its own: the
    kernel's most exploited surface), and io_uring, bpf, userfaultfd, perf events and keyrings are more
    of it: the run's syscall filter refuses them, while threads and processes still start."""
    requires(isolation, "syscall_filter")
    body, _ = run_child(
        host,
        hostile("""
        import ctypes, threading, subprocess
        libc = ctypes.CDLL(None, use_errno=True)
        NEWUSER, NEWNS, NEWNET, NEWPID = 0x10000000, 0x00020000, 0x40000000, 0x20000000
        for name, flags in (('user', NEWUSER), ('user+mount', NEWUSER | NEWNS), ('user+net', NEWUSER | NEWNET),
                            ('pid', NEWPID), ('mount', NEWNS)):
            print('UNSHARE', name, libc.unshare(flags), ctypes.get_errno())
        # clone(2) with a namespace flag, straight through syscall(): a fork into a user namespace
        pid = libc.syscall(56 if os.uname().machine == 'x86_64' else 220, NEWUSER | 17, 0, 0, 0, 0)
        if pid == 0:
            os._exit(0)
        print('CLONE', 'user', -1 if pid < 0 else 0, ctypes.get_errno())
        if pid > 0:
            os.waitpid(pid, 0)
        number = {'x86_64': {'io_uring_setup': 425, 'bpf': 321, 'userfaultfd': 323, 'perf_event_open': 298,
                             'keyctl': 250, 'setns': 308},
                  'aarch64': {'io_uring_setup': 425, 'bpf': 280, 'userfaultfd': 282, 'perf_event_open': 241,
                              'keyctl': 219, 'setns': 268}}[os.uname().machine]
        params = ctypes.create_string_buffer(256)
        for name, args in (('io_uring_setup', (8, params)), ('bpf', (0, params, 72)), ('userfaultfd', (1,)),
                           ('perf_event_open', (params, 0, -1, -1, 0)), ('keyctl', (0, -3, 0)), ('setns', (0, 0))):
            print('SYSCALL', name, libc.syscall(number[name], *args), ctypes.get_errno())
        threads = [threading.Thread(target=time.sleep, args=(0.01,)) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        if os.fork() == 0:
            os._exit(0)
        os.wait()
        print('SPAWNED', subprocess.run(['/bin/true']).returncode)
    """),
    )
    assert body["status"] == "succeeded", body
    lines = [line.split() for line in body["output"].splitlines() if line.startswith(("UNSHARE", "CLONE", "SYSCALL"))]
    assert len(lines) == 12, body["output"]
    for line in lines:
        assert line[-2] == "-1" and line[-1] == str(errno.EPERM), (line, body["output"])
    assert "SPAWNED 0" in body["output"], body["output"]


@pytest.mark.slow
@needs_root
def test_socket_families_a_run_does_not_need_and_file_watches_are_refused(host, isolation):
    """``AF_VSOCK`` reaches the host (a virtual machine's hypervisor) past the network namespace, and
    netlink, packet, the kernel's crypto sockets and the rest are kernel surface a GA never needs:
    only ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` sockets are created (``socketpair`` ``AF_UNIX``).
    inotify on the shared read-only Python tree would show, live, what other runs import; fanotify
    more: both refused.  What numpy, multiprocessing and the parallel pools use still works."""
    requires(isolation, "syscall_filter")
    body, _ = run_child(
        host,
        hostile("""
        import ctypes, socket, multiprocessing, multiprocessing.connection
        libc = ctypes.CDLL(None, use_errno=True)
        STREAM, DGRAM, RAW, SEQPACKET = 1, 2, 3, 5
        for name, family, kind in (('vsock', 40, STREAM), ('netlink', 16, RAW), ('packet', 17, DGRAM),
                                   ('alg', 38, SEQPACKET), ('tipc', 30, DGRAM), ('rds', 21, SEQPACKET),
                                   ('xdp', 44, RAW), ('bluetooth', 31, STREAM), ('kcm', 41, DGRAM)):
            ctypes.set_errno(0)
            print('REFUSED socket', name, min(libc.socket(family, kind, 0), 0), ctypes.get_errno())
        pair = (ctypes.c_int * 2)()
        ctypes.set_errno(0)
        print('REFUSED socketpair vsock', libc.socketpair(40, STREAM, 0, pair), ctypes.get_errno())
        numbers = {'x86_64': {'inotify_init1': 294, 'inotify_init': 253, 'fanotify_init': 300},
                   'aarch64': {'inotify_init1': 26, 'fanotify_init': 262}}[os.uname().machine]
        for name, args in (('inotify_init1', (0,)), ('inotify_init', ()), ('fanotify_init', (0x200, 0))):
            if name in numbers:
                ctypes.set_errno(0)
                print('DENIED', name, min(libc.syscall(numbers[name], *args), 0), ctypes.get_errno())
        for family, kind in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_DGRAM),
                             (socket.AF_INET6, socket.SOCK_STREAM)):
            socket.socket(family, kind).close()
        left, right = socket.socketpair()
        left.sendall(b'x'); assert right.recv(1) == b'x'
        left.close(); right.close()
        reader, writer = multiprocessing.Pipe()
        writer.send({'a': 1}); assert reader.recv() == {'a': 1}
        listener = multiprocessing.connection.Listener(family='AF_UNIX')
        listener.close()
        import numpy
        print('ALLOWED', float(numpy.linalg.inv(numpy.eye(3)).sum()))
    """),
    )
    assert body["status"] == "succeeded", body
    lines = body["output"].splitlines()
    refused = [line.split() for line in lines if line.startswith("REFUSED")]
    assert len(refused) == 10, body["output"]
    for line in refused:
        assert line[-2:] == ["-1", str(errno.EAFNOSUPPORT)], (line, body["output"])
    denied = [line.split() for line in lines if line.startswith("DENIED")]
    assert len(denied) == (3 if os.uname().machine == "x86_64" else 2), body["output"]
    for line in denied:
        assert line[-2:] == ["-1", str(errno.EPERM)], (line, body["output"])
    assert "ALLOWED 3.0" in body["output"], body["output"]


@pytest.mark.slow
@needs_root
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32 ABI exists on x86-64 only")
def test_a_syscall_of_another_abi_kills_the_process(host, isolation):
    """The x32 ABI's numbers (bit 30 set) would reach the same kernel code past a filter that checks
    the x86-64 numbers only: the filter kills the process that tries one."""
    requires(isolation, "syscall_filter")
    body, _ = run_child(
        host,
        hostile("""
        import ctypes, signal
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL(None).syscall(0x40000000 | 272, 0x10000000)  # unshare(CLONE_NEWUSER), x32
            os._exit(0)
        print('ENDED BY', signal.Signals(-os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])).name)
    """),
    )
    assert body["status"] == "succeeded", body
    assert "ENDED BY SIGSYS" in body["output"], body["output"]


# --------------------------------------------------------------------------- the whole process tree


@pytest.mark.slow
@needs_root
def test_fork_tree_memory_is_capped_as_a_whole(host, isolation):
    """3 forked children of 200 MB each against a 256 MB cap: the run ends at the cap."""
    requires(isolation, "cgroup")
    body, _ = run_child(
        host,
        hostile("""
        for _ in range(3):
            if os.fork() == 0:
                block = bytearray(200 * 2**20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(30)
                os._exit(0)
        time.sleep(30)
    """),
        memory_mb=256,
        time_seconds=20,
    )
    assert body["status"] == "failed"
    assert body["error"]["code"] == "memory_limit_exceeded", body["error"]
    assert body["metrics"]["hit_memory_cap"] is True
    assert body["metrics"]["execution_duration_ms"] < 20000  # stopped at the cap, not at the time cap


@pytest.mark.slow
@needs_root
def test_every_process_of_a_run_is_in_its_group_in_every_hierarchy(host, isolation):
    """The relay joins the run's group before it forks anything (through v1's ``tasks`` as a
    single-threaded process, or ``cgroup.procs``): the job and a process it forks are in the run's
    group of every controller, none left in the worker's."""
    requires(isolation, "cgroup")
    body, _ = run_child(
        host,
        hostile("""
        import json
        r, w = os.pipe()
        if os.fork() == 0:
            os.write(w, open("/proc/self/cgroup").read().encode())
            os._exit(0)
        os.wait()
        print("JOB", json.dumps(open("/proc/self/cgroup").read()))
        print("FORKED", json.dumps(os.read(r, 65536).decode()))
    """),
    )
    assert body["status"] == "succeeded", body
    prefix = host.uids.group_prefix() if host.uids else "allele-p"
    for who in ("JOB", "FORKED"):
        line = next(line for line in body["output"].splitlines() if line.startswith(who + " "))
        groups = {
            controller: path
            for _, controllers, path in (entry.split(":", 2) for entry in json.loads(line[len(who) + 1 :]).splitlines())
            for controller in (controllers.split(",") if controllers else [""])
        }
        for controller in host.cgroups.bases:
            assert os.path.basename(groups[controller]).startswith(prefix), (who, controller, groups)


def test_a_single_threaded_process_joins_through_tasks_else_through_cgroup_procs(tmp_path):
    """``join_cgroup`` writes "0" to a v1 group's ``tasks`` for a process of one thread (this
    pytest process has more, so a forked child is used), and the pid to ``cgroup.procs`` where there
    is no ``tasks`` (v2) or the process has several threads."""
    from allele_worker.sandbox.confine import join_cgroup

    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    for group in (v1, v2):
        group.mkdir()
        (group / "cgroup.procs").write_text("")
    (v1 / "tasks").write_text("")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            join_cgroup(str(v1 / "cgroup.procs"))
            join_cgroup(str(v2 / "cgroup.procs"))
            code = 0
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert (v1 / "tasks").read_text() == "0" and (v1 / "cgroup.procs").read_text() == ""
    assert (v2 / "cgroup.procs").read_text() == str(pid)
    threading.Thread(target=time.sleep, args=(0.5,), daemon=True).start()  # several threads here
    (v1 / "tasks").write_text("")
    join_cgroup(str(v1 / "cgroup.procs"))
    assert (v1 / "tasks").read_text() == "" and (v1 / "cgroup.procs").read_text() == str(os.getpid())


@pytest.mark.slow
@needs_root
def test_cpu_of_double_forked_processes_is_billed(host, isolation):
    """4 double-forked busy loops (each re-parented away from the job) are billed their CPU."""
    requires(isolation, "cgroup")
    body, _ = run_child(
        host,
        hostile("""
        done_r, done_w = os.pipe()
        for _ in range(4):
            if os.fork() == 0:
                if os.fork() == 0:
                    os.close(done_r)
                    end = time.process_time() + 1.0
                    while time.process_time() < end:
                        pass
                    os._exit(0)  # closes its end of the pipe
                os._exit(0)
        os.close(done_w)
        os.read(done_r, 1)  # EOF once every loop has burnt its second and exited
    """),
        time_seconds=60,
    )
    assert body["status"] == "succeeded", body
    # Each loop burns exactly 1 CPU-second of its own; the job itself waits on a pipe. Without accounting
    # over the whole tree this was billed ≈ 0.2.
    assert body["metrics"]["cpu_seconds_used"] >= 3.9, body["metrics"]


def _busy(processes: int, seconds: float) -> dict[str, Any]:
    """A job that keeps ``processes`` processes (itself and forks) busy for ``seconds`` of wall time."""
    return hostile(f"""
        end = time.time() + {seconds}
        children = []
        for _ in range({processes - 1}):
            pid = os.fork()
            if pid == 0:
                os.setsid()  # a session (and so a scheduler autogroup) of its own, if the kernel has them
                while time.time() < end:
                    pass
                os._exit(0)
            children.append(pid)
        while time.time() < end:
            pass
        for pid in children:
            os.waitpid(pid, 0)
    """)


@pytest.mark.slow
@needs_root
def test_a_run_of_many_processes_does_not_take_a_neighbours_cpu_share(host, isolation):
    """Each run's group has the same CPU weight (cgroup v1 ``cpu.shares``, v2 ``cpu.weight``), so the
    scheduler shares the CPUs between runs, not between processes (nor sessions: the kernel's
    autogroups): a run of 60 busy processes beside one of 2 leaves it about half of the CPU time the
    two use (0.44–0.49 here; 0.08 without a weight).  Shares of CPU time billed over the same
    seconds, not wall time."""
    requires(isolation, "cgroup")
    results: dict[str, Any] = {}

    def run(name: str, processes: int) -> None:
        results[name] = run_child(host, _busy(processes, 4.0), time_seconds=30)[0]

    threads = [threading.Thread(target=run, args=args) for args in (("hog", 60), ("neighbour", 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for body in results.values():
        assert body["status"] == "succeeded", body
    hog, neighbour = (results[name]["metrics"]["cpu_seconds_used"] for name in ("hog", "neighbour"))
    share = neighbour / (hog + neighbour)
    assert share > 0.3, (share, hog, neighbour)


DOUBLE_FORK_SLEEPER = textwrap.dedent("""\
    if os.fork() == 0:
        if os.fork() == 0:
            os.setsid()
            while True:
                time.sleep(0.05)
        os._exit(0)
""")


def _wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.slow
@needs_root
def test_double_forked_process_dies_with_the_run(host, isolation):
    requires(isolation, "user")
    uids: list[int] = []
    body, _ = run_child(
        host, hostile(DOUBLE_FORK_SLEEPER + "time.sleep(0.5)"), on_start=lambda process: uids.append(process.uid)
    )
    assert body["status"] == "succeeded", body
    assert pids_of_uids(uids[0], 1) == []


@pytest.mark.slow
@needs_root
def test_double_forked_process_dies_with_a_cancel(host, isolation):
    requires(isolation, "user")
    uids: list[int] = []

    def cancel_when_forked(process: sandbox.SandboxedProcess) -> None:
        uids.append(process.uid)
        assert _wait_for(lambda: len(pids_of_uids(process.uid, 1)) >= 2)
        process.kill("cancel")

    _, report = run_child(
        host, hostile(DOUBLE_FORK_SLEEPER + "time.sleep(30)"), time_seconds=60, on_start=cancel_when_forked
    )
    assert report.killed == "cancel"
    assert pids_of_uids(uids[0], 1) == []


def _start_worker(port: int, run_dir: str) -> subprocess.Popen[bytes]:
    # The default lock directory: the worker claims a uid block of its own beside the test session's.
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "ALLELE_RUN_DIR": run_dir,
        "LOG_LEVEL": "INFO",
    }
    worker = subprocess.Popen([sys.executable, "-m", "allele_worker"], env=env, stderr=subprocess.PIPE, cwd=run_dir)
    assert _wait_for(lambda: _health(port) is not None, 30), "the worker did not start"
    return worker


def _health(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
            result: dict[str, Any] = json.load(answer)
            return result
    except OSError:
        return None


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.slow
@needs_root
def test_processes_and_groups_do_not_outlive_a_worker_crash(isolation, fake_worker, tmp_path):
    """SIGKILL the worker mid-run: the run's whole tree dies with it (death signals through the
    relay and the namespace's init); the next worker on the block removes the group left behind."""
    requires(isolation, "user", "pid_namespace")
    run_dir = str(tmp_path / "runs")
    os.makedirs(run_dir)
    port = _free_port()
    worker = _start_worker(port, run_dir)
    first_uid = None
    try:
        job = {
            "run_id": "runCRASH0001",
            "submission_id": "sub123456789",
            "params": hostile(DOUBLE_FORK_SLEEPER + "time.sleep(60)"),
            "initial_population": None,
            "caps": {"time_seconds": 120, "memory_mb": 512},
            "report": {"url": f"{fake_worker.url}/internal/v1/runs/runCRASH0001", "token": "ab" * 32},
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/runs",
            data=json.dumps(job).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(request, timeout=10).close()
        first_uid = _block_first(worker)  # the worker logs its block; its runs' uids are the block's
        assert _wait_for(lambda: len(pids_of_uids(first_uid, BLOCK_SIZE)) >= 2)
        fork_servers = [pid for pid in live_children(worker.pid) if b"allele_worker.child.forkserver" in _cmdline(pid)]
        # The plain fork server, and (started in the background once it is ready) the stack's, which
        # pre-imports the scientific stack (`--import`; docs/environment.md).
        assert len([pid for pid in fork_servers if b"--import" not in _cmdline(pid)]) == 1
        assert len(fork_servers) <= 2
    finally:
        worker.kill()
        worker.wait()
    assert first_uid is not None
    for server in fork_servers:  # each dies with the worker
        assert _wait_for(lambda server=server: not os.path.exists(f"/proc/{server}"), 10)
    assert _wait_for(lambda: pids_of_uids(first_uid, BLOCK_SIZE) == [], 10)
    # The crashed worker's block only: other workers on this machine (other test sessions) have live
    # runs' groups of their own, which no sweep may touch.
    prefix = f"allele-{(first_uid - DEFAULT_UID_BASE) // BLOCK_SIZE}-"
    groups = _groups_named(prefix)
    assert groups, "the crashed run's group should be left for the sweep"
    restarted = _start_worker(port, run_dir)
    try:
        assert _wait_for(lambda: not (_groups_named(prefix) & groups))
    finally:
        restarted.terminate()
        restarted.wait(10)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _block_first(worker: subprocess.Popen[bytes]) -> int:
    assert worker.stderr is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = worker.stderr.readline().decode()
        if "sandbox uids: block" in line:
            return int(line.split("(")[1].split("..")[0])
    raise AssertionError("the worker did not log its uid block")


def _groups_named(prefix: str) -> set[str]:
    found: set[str] = set()
    for base in Path("/sys/fs/cgroup").rglob(f"{prefix}*"):
        if base.is_dir():
            found.add(base.name)
    return found


@pytest.mark.slow
@needs_root
def test_two_workers_never_touch_each_others_runs(host, isolation, tmp_path):
    """A second worker on the host gets another uid block; its start-up sweep and its runs' cleanup
    leave the first worker's live run alone."""
    requires(isolation, "user")
    result: dict[str, Any] = {}
    started = threading.Event()
    thread = threading.Thread(
        target=lambda: result.update(
            body=run_child(host, hostile("time.sleep(3)"), on_start=lambda p: started.set())[0]
        )
    )
    thread.start()
    assert started.wait(20)
    second = sandbox.Host.setup()
    try:
        assert second.uids is not None and host.uids is not None
        assert second.uids.index != host.uids.index
        assert abs(second.uids.first - host.uids.first) >= BLOCK_SIZE  # disjoint uid ranges
        body, _ = run_child(second, hostile(DOUBLE_FORK_SLEEPER))
        assert body["status"] == "succeeded"
    finally:
        second.close()
        thread.join()
    assert result["body"]["status"] == "succeeded", result["body"]


@pytest.mark.slow
def test_a_flood_of_messages_stops_the_run(host):
    """The child's message channel (progress and the outcome; the real child sends at most 4 a second)
    is open to user code. Flooding it with small progress lines cost the run's parent — the worker,
    which supervises every run — over a CPU-second per second while the run was billed 0.06 CPU-s for
    5 s of it: the parent stops a run that sends more than its message budget."""
    body, _ = run_child(
        host,
        hostile("""
        import stat
        line = b'{"type":"progress","generations_completed":1,"best_solution_fitness":1.0}\\n' * 100
        channels = [int(fd) for fd in os.listdir('/proc/self/fd') if int(fd) > 2
                    and os.path.exists(f'/proc/self/fd/{fd}') and stat.S_ISFIFO(os.fstat(int(fd)).st_mode)]
        end = time.time() + 10
        while time.time() < end:
            for fd in channels:
                os.write(fd, line)
    """),
        time_seconds=30,
    )
    assert body["status"] == "failed", body
    assert body["error"]["code"] == "resource_limit_exceeded", body["error"]
    assert "messages" in body["error"]["message"]
    assert body["metrics"]["execution_duration_ms"] < 10000  # stopped, not run to its end


# --------------------------------------------------------------------------- numbers a report cannot carry


@pytest.mark.slow
def test_fitness_too_large_for_a_float_is_a_code_error(host):
    body, _ = run_child(host, hostile("pass", returns="10**400"))
    assert body["status"] == "failed" and body["error"]["code"] == "code_error", body["error"]
    assert "64-bit float" in body["error"]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("value,shown", [("float('inf')", "inf"), ("-float('inf')", "-inf")])
def test_infinite_fitness_is_reported_as_text(host, value, shown):
    """PyGAD allows an infinite scalar fitness; JSON has none, so the report says it in text."""
    body, _ = run_child(host, hostile("pass", returns=value))
    assert body["status"] == "succeeded", body["error"]
    assert body["result"]["best_solution_fitness"] == shown
    assert set(body["result"]["best_solutions_fitness"]) == {shown}


@pytest.mark.slow
def test_infinite_objective_is_a_code_error(host):
    """Objective vectors must be finite (PyGAD refuses them: Pareto distances need finite ranges)."""
    body, _ = run_child(host, hostile("pass", returns="[1.0, float('inf')]"))
    assert body["status"] == "failed" and body["error"]["code"] == "code_error", body["error"]


@pytest.mark.slow
@pytest.mark.parametrize("value", ["numpy.nan", "numpy.inf"])
def test_population_of_nan_or_inf_is_a_code_error(host, value):
    job = params(
        num_generations=3,
        on_generation=f"import numpy\ndef cb(ga):\n    ga.population[:] = {value}\n",
        on_generation_entry="cb",
    )
    body, _ = run_child(host, job)
    assert body["status"] == "failed" and body["error"]["code"] == "code_error", body["error"]


@pytest.mark.slow
def test_a_million_objectives_fail_at_the_first_call(host):
    body, _ = run_child(host, hostile("pass", returns="[1.0] * 1_000_000"))
    assert body["status"] == "failed" and body["error"]["code"] == "code_error", body["error"]
    assert "1000000 values" in body["error"]["message"]
    assert body["metrics"]["cpu_seconds_used"] < 5  # one call, not a whole run of them


@pytest.mark.slow
def test_startup_refuses_when_isolation_is_required_and_missing(monkeypatch):
    """ALLELE_REQUIRE_ISOLATION=all (the image's setting) makes a worker that cannot enforce every
    measure refuse to start instead of running less confined."""
    from allele_worker.sandbox import host as host_module

    weak = sandbox.Isolation(
        user=True,
        network=True,
        pid_namespace=True,
        minimal_root=False,
        syscall_filter=True,
        cgroup="v1",
        rlimits=["cpu", "as", "fsize", "nofile", "nproc", "core"],
        notes=["minimal root unavailable: test"],
    )
    monkeypatch.setattr(host_module, "probe_isolation", lambda **_: weak)
    with pytest.raises(sandbox.IsolationMissing, match="minimal_root"):
        sandbox.Host.setup(require="all")
    assert weak.missing() == ["minimal_root"]
    # A one-run-per-instance deployment may name the measures it goes without (docs/deploy.md); only those.
    with pytest.raises(sandbox.IsolationMissing, match="minimal_root"):
        sandbox.Host.setup(require="all-except:cgroup,pid_namespace")
    sandbox.Host.setup(require="all-except:minimal_root").close()


@pytest.mark.slow
def test_health_reports_every_measure(host):
    health = host.isolation.health()
    if IS_ROOT:
        assert host.isolation.missing() == [], host.isolation.notes
    assert {
        "pid_namespace",
        "minimal_root",
        "syscall_filter",
        "network",
        "user",
        "cgroup",
        "memory_tree",
        "cpu_tree",
        "pids",
    } <= set(health)
