"""evalbench.processes: a process group's liveness from /proc and the bounded wait after a kill;
every process evalbench starts dies with it (kill -9 included), through one watchdog."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import proctree
import pytest

from evalbench import processes
from evalbench.processes import LIFELINE_ENV, WATCHDOG, group_running, wait_group_gone


def test_a_killed_group_is_gone_after_the_wait_and_a_live_one_is_not():
    # a shell and its background sleep: one process group of their own
    leader = subprocess.Popen(["sh", "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        assert group_running(leader.pid)
        started = time.monotonic()
        # alive: False once the bound has passed (returning at all shows it is bounded: the
        # group lives 30 s, and then the wait would say True)
        assert not wait_group_gone(leader.pid, timeout_s=0.2)
        assert time.monotonic() - started >= 0.2
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(5)  # the sleep is orphaned: a zombie until init reaps it counts as gone
        assert wait_group_gone(leader.pid) and not group_running(leader.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(5)


# --------------------------------------------------------------------- dying with evalbench

TAG = "EVALBENCH_TEST_TAG"
DRIVER = """
import subprocess, sys, threading
from evalbench import processes
processes.spawn(["sh", "-c", "sleep 600 & sleep 600"])  # a tied group: sh and 2 sleeps
# from a thread that then ends (a parent-death signal would kill this one at once)
thread = threading.Thread(target=processes.spawn, args=(["sleep", "600"],))
thread.start()
thread.join()
subprocess.Popen(["setsid", "sleep", "600"])  # left every group of ours: found by its mark
bare = subprocess.Popen(["env", "-i", "sleep", "600"], start_new_session=True)  # no mark
processes.tie(bare.pid)
sys.stdin.read()  # until killed
"""


def _sleeps(procs: set[proctree.Proc]) -> set[proctree.Proc]:
    return {p for p in procs if proctree.cmdline(p).startswith("sleep 600")}


@pytest.mark.slow
def test_what_a_process_started_dies_when_it_is_killed_9(tmp_path):
    tag = tmp_path.name
    env = {**os.environ, TAG: tag}
    env.pop(LIFELINE_ENV, None)  # this test process's own mark: not the driver's business
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, env=env,
                              start_new_session=True)  # fmt: skip
    started: set[proctree.Proc] = set()
    try:
        # 5 sleeps: 2 in the tied group + 1 from the ended thread + the daemon + the bare one
        assert proctree.wait_for(lambda: len(_sleeps(proctree.descendants(driver.pid))) == 5, 60)
        started = proctree.descendants(driver.pid) | proctree.tagged(TAG, tag)
        watchdogs = [p for p in started if "_watchdog.py" in proctree.cmdline(p)]
        assert len(watchdogs) == 1  # one per evalbench process, however many children
        os.kill(driver.pid, signal.SIGKILL)  # only the driver: no cleanup code of it runs
        driver.wait(30)
        gone = lambda: not proctree.alive(started) and not proctree.tagged(TAG, tag)  # noqa: E731
        assert proctree.wait_for(gone, 30), [proctree.cmdline(p) for p in proctree.alive(started)]
    finally:
        driver.kill()
        driver.wait(30)
        proctree.kill(started | proctree.tagged(TAG, tag))


def _watchdog_told(line: str) -> None:
    """A watchdog told ``line``, its lifeline then closed; returns once it has exited."""
    dog = subprocess.Popen([sys.executable, "-I", str(WATCHDOG), "no-such-token"],
                           stdin=subprocess.PIPE)  # fmt: skip
    dog.communicate(line.encode(), timeout=30)


def test_the_watchdog_kills_a_tied_process_only_while_its_id_is_still_that_process():
    victim = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        (me,) = [p for p in proctree.descendants(os.getpid()) if p.pid == victim.pid]
        # the id with another start time (an id reused since it was tied): not killed
        _watchdog_told(f"+{victim.pid} {me.start + 1}\n")
        assert victim.poll() is None
        # tied, then untied: not killed
        _watchdog_told(f"+{victim.pid} {me.start}\n-{victim.pid}\n")
        assert victim.poll() is None
        # tied with its own start time: killed when the lifeline ends
        _watchdog_told(f"+{victim.pid} {me.start}\n")
        assert victim.wait(30) == -signal.SIGKILL
    finally:
        victim.kill()
        victim.wait(30)


def test_running_stops_the_whole_group_and_unties_it():
    with processes.running(["sh", "-c", "sleep 600 & wait"]) as proc:
        assert proctree.wait_for(lambda: len(proctree.descendants(proc.pid)) == 1, 30)
        assert group_running(proc.pid) and proc.pid in processes._TIED
    # SIGTERM to the group ends both the shell and its sleep (no SIGKILL needed)
    assert proc.returncode == -signal.SIGTERM
    assert not group_running(proc.pid) and proc.pid not in processes._TIED


REPLACED = """
import subprocess, sys
from evalbench import processes
first = subprocess.Popen(["env", "-i", "sleep", "600"], start_new_session=True)  # no mark
processes.tie(first.pid)
dog = processes._WATCH["proc"]
dog.kill()  # someone killed this process's watchdog
dog.wait()
second = subprocess.Popen(["env", "-i", "sleep", "600"], start_new_session=True)
processes.tie(second.pid)  # the write fails (broken pipe): a new watchdog, told of both
print(first.pid, second.pid, flush=True)
sys.stdin.read()  # until killed
"""


@pytest.mark.slow
def test_a_watchdog_that_died_is_replaced_and_told_every_tied_process_again(tmp_path):
    driver = subprocess.Popen([sys.executable, "-c", REPLACED], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, start_new_session=True)  # fmt: skip
    tied: set[proctree.Proc] = set()
    try:
        assert driver.stdout is not None
        pids = {int(p) for p in driver.stdout.readline().split()}  # after both ties
        tied = {p for p in proctree.descendants(driver.pid) if p.pid in pids}
        assert len(tied) == 2
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(30)
        # neither carries a mark: only the new watchdog, told of both, can have killed them
        assert proctree.wait_for(lambda: not proctree.alive(tied), 30)
    finally:
        driver.kill()
        driver.wait(30)
        proctree.kill(tied)


def test_a_browser_opened_for_the_user_carries_no_mark_and_outlives_evalbench(
    tmp_path, monkeypatch
):
    """``evalbench report --open``: the browser must stay open after evalbench exits, so it
    is started without this process's mark (the watchdog kills marked processes)."""
    import webbrowser

    from evalbench.summary import audience_pages

    processes.lifeline()  # as evalbench run/report has, by then
    seen: list[str | None] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: seen.append(os.environ.get(LIFELINE_ENV)))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "report.html").write_text("<html></html>")
    assert audience_pages([run_dir], "full", open_pages=True) == [f"full: {run_dir}/report.html"]
    assert seen == [None]  # no mark while the browser starts
    assert LIFELINE_ENV in os.environ  # and this process's mark is back for what follows


WORKER = """
import sys, time
from evalbench import processes
processes.exit_with(int(sys.argv[1]))  # the parent that started this worker
processes.spawn(["sleep", "600"])  # what the worker started (tied to its own watchdog)
time.sleep(600)  # its work: a study, a cell
"""
PARENT = """
import subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())],
                          stdin=subprocess.PIPE)
sys.stdin.read()  # until killed
"""


@pytest.mark.slow
def test_a_worker_ends_with_its_parent_even_when_the_parents_watchdog_died_too(tmp_path):
    # kill -9 of evalbench *and* its watchdog (as `pkill -9 -f evalbench` does: the
    # watchdog's command line names evalbench/_watchdog.py, a report worker's and a kernel's
    # do not). Before: `evalbench report -j 2`'s workers went on with their studies, and a
    # sweep's cell workers with their cells, paying for requests. Here the parent has no
    # watchdog at all; its worker uses processes.exit_with.
    tag = tmp_path.name
    env = {**os.environ, TAG: tag}
    env.pop(LIFELINE_ENV, None)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, WORKER], stdin=subprocess.PIPE,
                              env=env, start_new_session=True)  # fmt: skip
    started: set[proctree.Proc] = set()
    try:
        assert proctree.wait_for(lambda: len(_sleeps(proctree.tagged(TAG, tag))) == 1, 60)
        started = proctree.tagged(TAG, tag) - {p for p in proctree.tagged(TAG, tag)
                                               if p.pid == parent.pid}  # fmt: skip
        workers = [p for p in started if "exit_with" in proctree.cmdline(p)]
        assert len(workers) == 1
        dogs = [p for p in started if "_watchdog.py" in proctree.cmdline(p)]
        os.kill(parent.pid, signal.SIGKILL)
        for dog in dogs:  # the worker's own watchdog dies too (pkill -f evalbench)
            os.kill(dog.pid, signal.SIGKILL)
        parent.wait(30)
        gone = lambda: not proctree.alive(started - set(dogs))  # noqa: E731
        assert proctree.wait_for(gone, 30), [proctree.cmdline(p) for p in proctree.alive(started)]
    finally:
        parent.kill()
        parent.wait(30)
        proctree.kill(started | proctree.tagged(TAG, tag))


# ------------------------------------------------------------- temporary files die with it too

SCRATCH = """
import multiprocessing.util, sys
from pathlib import Path
from evalbench import processes
made = processes.scratch_dir("evalbench-test-")      # our own: a task's working dir
(made / "answer.txt").write_text("x")
(made / "sub").mkdir()
pymp = Path(multiprocessing.util.get_temp_dir())      # a library's (the forkserver's socket)
processes.remove_at_end(pymp)
let_go = processes.scratch_dir("evalbench-test-")    # removed here, then made again by hand:
processes.discard(let_go)                            # no longer ours, it stays
let_go.mkdir()
print(made, pymp, let_go, flush=True)
sys.stdin.read()  # until told to end (stdin closed), or killed
"""


@pytest.mark.parametrize("end", ["kill", "exit", "terminate_all"])
def test_temporary_files_a_process_made_go_with_it_however_it_ends(tmp_path, end):
    """A scratch dir of evalbench's own, and a library's temporary folder registered with
    :func:`processes.remove_at_end`, are removed by the watchdog when the process ends, also
    with kill -9 (no cleanup code of it runs) and when SIGTERM reaches its watchdog too (a
    Ray cluster stopped with every process of it); a dir given back
    (:func:`processes.discard`) is not touched again."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop(LIFELINE_ENV, None)
    proc = subprocess.Popen([sys.executable, "-c", SCRATCH], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        made, pymp, let_go = map(Path, proc.stdout.readline().split())  # type: ignore[union-attr]
        assert made.parent == tmp_path and (made / "answer.txt").is_file() and pymp.is_dir()
        if end == "kill":
            os.kill(proc.pid, signal.SIGKILL)  # no cleanup code of it runs
        if end == "terminate_all":
            (dog,) = proctree.descendants(proc.pid)  # its watchdog, once it ignores SIGTERM
            assert proctree.wait_for(lambda: _ignores(dog.pid, signal.SIGTERM), 30)
            os.kill(dog.pid, signal.SIGTERM)
            os.kill(proc.pid, signal.SIGTERM)
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(30)
        assert proctree.wait_for(lambda: not made.exists() and not pymp.exists(), 30)
        assert let_go.is_dir()
    finally:
        proc.kill()
        proc.wait(30)


def _ignores(pid: int, signum: int) -> bool:
    """Whether process ``pid`` ignores signal ``signum`` (its SigIgn mask in /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(
        next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn")), 16
    )
    return bool(mask >> (signum - 1) & 1)


def test_the_watchdog_removes_registered_paths_but_never_follows_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    link = tmp_path / "link"
    link.symlink_to(outside)
    gone = tmp_path / "scratch"
    (gone / "deep").mkdir(parents=True)
    single = tmp_path / "kernel.json"
    single.write_text("{}")
    told = "".join(f"r{str(p).encode().hex()}\n" for p in (gone, single, link))
    _watchdog_told(told + f"r{str(tmp_path / 'never_made').encode().hex()}\n")
    assert not gone.exists() and not single.exists()
    assert (outside / "keep.txt").read_text() == "kept"  # the link itself may go, never its target


def test_scratch_folders_whose_owner_ended_are_removed_by_the_next_one_made_there(tmp_path):
    """The backstop for a watchdog killed too (a Ray worker's children are killed with it):
    folders named for an ended process, or for an id now another process's, are removed
    when the next scratch folder is made there; a live owner's, a link and other names stay."""
    me = os.getpid()
    start = processes._start_time(me)
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        other = processes._start_time(sleeper.pid)
        names = {
            "ended": f"evalbench-task-{sleeper.pid}-{other}-x",  # its owner is killed below
            "reused": f"evalbench-inputs-{me}-{start + 1}-x",  # my id, another start: reused
            "agent": f"bfcl-command-agent-{sleeper.pid}-{other}-y",
            "live": f"evalbench-cell-{me}-{start}-x",  # this process: alive
            "foreign": "evalbench-task-abc",  # not named by scratch_dir
        }
        for name in names.values():
            (tmp_path / name / "deep").mkdir(parents=True)
        target = tmp_path / "target"
        target.mkdir()
        (tmp_path / f"evalbench-task-{sleeper.pid}-{other}-link").symlink_to(target)
    finally:
        sleeper.kill()
        sleeper.wait(30)
    made = processes.scratch_dir("evalbench-task-", tmp_path)
    left = {p.name for p in tmp_path.iterdir()}
    assert made.name.startswith(f"evalbench-task-{me}-{start}-") and made.name in left
    assert names["ended"] not in left and names["reused"] not in left
    assert names["agent"] not in left
    assert {names["live"], names["foreign"], "target"} <= left
    assert f"evalbench-task-{sleeper.pid}-{other}-link" in left  # a link is never followed
    processes.discard(made)


FORKSERVER_CHILD = """
import multiprocessing, multiprocessing.util, os, sys
from evalbench import processes
processes.before_forkserver()
folder = multiprocessing.util.get_temp_dir()
context = multiprocessing.get_context("forkserver")
child = context.Process(target=sys.exit, args=(7,))
child.start()
child.join(30)
print(child.exitcode, folder, flush=True)
"""


@pytest.mark.slow
def test_a_long_tmpdir_still_starts_forkserver_workers_and_their_folder_goes(tmp_path):
    """A forkserver's socket must fit in a Unix socket path (107 bytes): with a TMPDIR too long
    for it (here 160 characters), sweeps and sharded systems failed with "AF_UNIX path too
    long". The socket folder moves to a short one, and is removed at the end."""
    long = tmp_path / ("d" * 80) / ("e" * 80)
    long.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", FORKSERVER_CHILD], env={**os.environ,
                          "TMPDIR": str(long)}, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    code, folder = done.stdout.split()
    assert code == "7" and len(folder) + len("/listener-12345678") <= 107
    assert not Path(folder).exists()


def test_a_short_tmpdir_is_kept_for_the_forkserver(tmp_path, monkeypatch):
    from evalbench.processes import socket_folder_base

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert socket_folder_base() == str(tmp_path)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / ("x" * 100)))
    assert socket_folder_base() == "/tmp"
