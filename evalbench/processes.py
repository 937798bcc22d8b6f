"""Processes evalbench starts: they die with it, even when it is killed with ``kill -9``.

One mechanism for every process evalbench starts (sweep cell workers, model shards, the
publish pool, notebook kernels, agents' workers and command agents, the python sandbox, a
local model server): each evalbench process that starts one has a *watchdog*
(``_watchdog.py``, a small process in a session of its own) holding the read end of a pipe
whose only writer is that evalbench process. The pipe's end of file comes when the process
ends, however it ends; then the watchdog kills, with SIGKILL,

- every process group registered with :func:`tie` (a child started with
  ``start_new_session=True``, and whatever it started in its group), and
- every process whose environment carries this process's mark: :func:`lifeline` puts it in
  ``os.environ`` (``EVALBENCH_LIFELINES``, a list of tokens, one per evalbench process up the
  tree), so every child started afterwards and everything it starts inherit it, daemons that
  left their group included, and children started a moment before they could be tied.

Temporary files go the same way: :func:`scratch_dir` makes a temporary folder, and
:func:`remove_at_end` registers a path a library made (a kernel's connection file, a
forkserver's socket folder); the watchdog removes them once it has killed what was left, so
a run killed with ``kill -9`` leaves nothing in the temporary folder either.
:func:`discard` removes a scratch folder earlier and forgets it.

A parent-death signal (``PR_SET_PDEATHSIG``) is not used: it fires when the parent *thread*
ends (a child started from a worker thread would die early), a forkserver child's parent is
the forkserver, and it does not reach a child's own process group.

Use::

    lifeline()                                    # before starting: the child carries the mark
    proc = subprocess.Popen(argv, start_new_session=True)
    tie(proc.pid)                                 # its process group goes with this process
    ...                                           # stop it (kill its group), then
    untie(proc.pid)

or :func:`spawn` / :func:`stop` / :func:`running`, which do exactly that. Linux (``/proc``)
only; elsewhere :func:`lifeline` and :func:`tie` do nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalbench._watchdog import remove

GONE_WAIT_S = 1.0
"""How long :func:`wait_group_gone` waits at most."""
LIFELINE_ENV = "EVALBENCH_LIFELINES"
"""The environment variable carrying the marks of the evalbench processes up the tree."""
WATCHDOG = Path(__file__).with_name("_watchdog.py")
STOP_GRACE_S = 5.0
"""How long :func:`stop` waits after SIGTERM before SIGKILL."""

_LOCK = threading.RLock()
_WATCH: dict[str, Any] = {}
"""This process's watchdog: ``pid`` (the owner: a forked child has none), ``fd`` (the
lifeline's write end), ``token``, ``proc``."""
_TIED: dict[int, int] = {}
"""Tied process ids and their start times (sent again to a replaced watchdog)."""
_PATHS: set[str] = set()
"""Paths the watchdog removes when this process ends (sent again to a replaced watchdog)."""


def group_running(group: int) -> bool:
    """Whether a process of process group ``group`` is alive and not a zombie (one /proc scan;
    zombies run nothing, and an init that reaps orphans late keeps them)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _, pgrp = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if pgrp == str(group) and state != "Z":
            return True
    return False


def wait_group_gone(group: int, timeout_s: float = GONE_WAIT_S) -> bool:
    """Wait until no process of ``group`` runs, at most ``timeout_s``; whether it is gone."""
    deadline = time.monotonic() + timeout_s
    while group_running(group):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def lifeline() -> str | None:
    """Make sure this process has its watchdog and its mark is in ``os.environ``: every
    process started from here on (inheriting the environment) dies with this one.

    Cheap after the first call (which starts the watchdog, one small Python process); call
    it before starting a child. Idempotent; safe from any thread.

    Returns:
        This process's mark (``None``: not on Linux, nothing done).
    """
    if not _SUPPORTED:
        return None
    with _LOCK:
        if _WATCH.get("pid") != os.getpid():
            _start_watchdog()
        token: str = _WATCH["token"]
        os.environ[LIFELINE_ENV] = _with_mark(os.environ, token)
        return token


def marked(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus this process's mark, for a child started with an environment of its own
    (``env=``); starts the watchdog if needed."""
    token = lifeline()
    out = dict(env)
    if token is not None:
        out[LIFELINE_ENV] = _with_mark(env, token)
    return out


def _with_mark(env: Mapping[str, str], token: str) -> str:
    tokens = env.get(LIFELINE_ENV, "").split()
    return " ".join(tokens if token in tokens else [*tokens, token])


def tie(pid: int) -> None:
    """Kill process ``pid`` and its process group when this process ends, however it ends
    (until :func:`untie`). Call it as soon as the child is started, before it is reaped."""
    if not _SUPPORTED:
        return
    start = _start_time(pid)
    if start is None:
        return  # already gone (and reaped): nothing to kill later
    with _LOCK:
        _TIED[pid] = start
        _tell(f"+{pid} {start}\n")


def untie(pid: int) -> None:
    """Forget ``pid`` (call it once the child and its group are stopped)."""
    if not _SUPPORTED:
        return
    with _LOCK:
        if _TIED.pop(pid, None) is not None:
            _tell(f"-{pid}\n")


@contextlib.contextmanager
def tied(pid: int) -> Iterator[None]:
    """:func:`tie` ``pid`` for the block, :func:`untie` it after (stop it inside the block)."""
    tie(pid)
    try:
        yield
    finally:
        untie(pid)


SCRATCH_NAME = re.compile(r"^(?:evalbench|bfcl)-[a-z-]+?-(?P<pid>\d+)-(?P<start>\d+)-")
"""A :func:`scratch_dir` folder's name: its prefix, then its owner's process id and start."""


def scratch_dir(prefix: str, folder: Path | None = None) -> Path:
    """A new private temporary folder (``tempfile.mkdtemp``, in ``folder`` or the system's
    temporary folder), removed with everything in it when this process ends, however it
    ends (:func:`remove_at_end`); :func:`discard` it when done.

    Its name carries this process's id and start time. Where even the watchdog was killed
    (a Ray worker kills its child processes when it exits:
    ``RAY_kill_child_processes_on_worker_exit``), the next folder made in the same place
    removes the folders whose owner is gone (:func:`remove_orphans`; at most once a
    minute per folder and process).
    """
    where = Path(folder or tempfile.gettempdir())
    now = time.monotonic()
    if _SUPPORTED and now - _SWEPT.get(str(where), -ORPHANS_EVERY_S) >= ORPHANS_EVERY_S:
        _SWEPT[str(where)] = now
        remove_orphans(where)
    owner = f"{os.getpid()}-{_start_time(os.getpid())}-" if _SUPPORTED else ""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{owner}", dir=where))
    remove_at_end(path)
    return path


ORPHANS_EVERY_S = 60.0
"""How often (at most) a process looks for orphaned scratch folders in one folder."""
_SWEPT: dict[str, float] = {}
"""When this process last looked for orphaned scratch folders, by folder."""


def remove_orphans(folder: Path) -> list[str]:
    """Remove the :func:`scratch_dir` folders in ``folder`` whose owner has ended (its id is
    gone, or now another process's); returns their names. Only folders named as
    :func:`scratch_dir` names them, never a link."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            found = SCRATCH_NAME.match(entry.name)
            if found is None or not entry.is_dir(follow_symlinks=False):
                continue
            if _start_time(int(found["pid"])) != int(found["start"]):
                remove(entry.path)
                removed.append(entry.name)
    return removed


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """:func:`scratch_dir` for the block, discarded after it (an exception included)."""
    path = scratch_dir(prefix)
    try:
        yield path
    finally:
        discard(path)


def remove_at_end(path: Path | str) -> None:
    """Have this process's watchdog remove ``path`` (a file, or a folder with all it holds;
    a symbolic link is removed, never followed) when this process ends, ``kill -9``
    included; starts the watchdog if need be."""
    if not _SUPPORTED:
        return
    text = os.path.abspath(path)
    with _LOCK:
        lifeline()
        if text not in _PATHS:
            _PATHS.add(text)
            _tell(f"r{text.encode().hex()}\n")


SOCKET_PATH_MAX = 107
"""Bytes of a Unix socket's path (Linux's ``sun_path``, 108, less its terminating NUL)."""
_SOCKET_IN_FOLDER = len("/pymp-12345678/listener-12345678")
"""What multiprocessing adds to the temporary folder for its forkserver's socket."""


def socket_folder_base() -> str:
    """The folder multiprocessing's temporary folder (the forkserver's socket) goes in: the
    temporary folder (``TMPDIR``), or ``/tmp`` when a socket path there would be too long
    (Python 3.11 does not check: every worker failed with "AF_UNIX path too long")."""
    base = tempfile.gettempdir()
    if len(os.fsencode(base)) + _SOCKET_IN_FOLDER <= SOCKET_PATH_MAX:
        return base
    return "/tmp"


def before_forkserver() -> None:
    """Call before starting a worker from multiprocessing's forkserver: the forkserver and
    every worker carry this process's mark (:func:`lifeline`), and the forkserver's socket
    folder (multiprocessing's temporary folder of this process, made in
    :func:`socket_folder_base`) goes with this process, also when it is killed."""
    import multiprocessing.util

    lifeline()
    kept, tempfile.tempdir = tempfile.tempdir, socket_folder_base()
    try:  # made once per process, at its first use: here
        folder = multiprocessing.util.get_temp_dir()
    finally:
        tempfile.tempdir = kept
    remove_at_end(folder)


def discard(path: Path | str) -> None:
    """Remove a path of :func:`scratch_dir` or :func:`remove_at_end` now, if it is still
    there (errors ignored: it is temporary), and forget it: the watchdog will not touch that
    path again."""
    text = os.path.abspath(path)
    remove(text)
    with _LOCK:
        if text in _PATHS:
            _PATHS.discard(text)
            _tell(f"f{text.encode().hex()}\n")


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **popen)`` in a process group of its own, carrying this
    process's mark and tied to it: it (and its group) dies with this process. Stop it with
    :func:`stop`."""
    lifeline()
    if popen.get("env") is not None:
        popen["env"] = marked(popen["env"])
    proc = subprocess.Popen(list(argv), start_new_session=True, **popen)
    tie(proc.pid)
    return proc


def stop(proc: subprocess.Popen[Any], grace_s: float = STOP_GRACE_S) -> int:
    """Stop a process started with :func:`spawn`: SIGTERM to its group, SIGKILL to the group
    after ``grace_s`` (at once with ``grace_s=0``), reap it, wait (bounded) until nothing of
    the group runs, close our ends of its pipes, untie it. Safe to call twice.

    Returns:
        Its exit status (negative: the signal that ended it).
    """
    try:
        if proc.poll() is None and grace_s > 0:
            _signal_group(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace_s)
        _signal_group(proc.pid, signal.SIGKILL)  # the leader, or what it left in its group
        proc.wait()
        wait_group_gone(proc.pid)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    finally:
        untie(proc.pid)
    return proc.returncode


@contextlib.contextmanager
def running(
    argv: Sequence[str], grace_s: float = STOP_GRACE_S, **popen: Any
) -> Iterator[subprocess.Popen[Any]]:
    """:func:`spawn` for the block, :func:`stop` (with ``grace_s``) after it, an exception
    or an interrupt included."""
    proc = spawn(argv, **popen)
    try:
        yield proc
    finally:
        stop(proc, grace_s)


@contextlib.contextmanager
def unmarked() -> Iterator[None]:
    """Processes started in the block carry no mark of this process: they may outlive it.
    Only for what is started *for the user* (the browser ``--open`` starts), never for work
    evalbench waits on. Other threads' :func:`lifeline` calls wait for the block."""
    with _LOCK:
        saved = os.environ.pop(LIFELINE_ENV, None)
        try:
            yield
        finally:
            if saved is not None:
                os.environ[LIFELINE_ENV] = saved


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


_SUPPORTED = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, /proc), ``None`` when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _start_watchdog() -> None:
    """Start this process's watchdog (see the module docstring); it gets the lifeline's
    read end as stdin and no mark (no other watchdog kills it)."""
    _forget()
    token = f"{os.getpid()}-{secrets.token_hex(6)}"
    read_end, write_end = os.pipe()  # both close on exec: no other child holds them
    env = {k: v for k, v in os.environ.items() if k != LIFELINE_ENV}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", str(WATCHDOG), token],
            stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, cwd="/", start_new_session=True,
        )  # fmt: skip
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    _WATCH.update(pid=os.getpid(), fd=write_end, token=token, proc=proc)
    for pid, start in _TIED.items():  # a replaced watchdog: tell the new one
        os.write(write_end, f"+{pid} {start}\n".encode())
    for path in _PATHS:
        os.write(write_end, f"r{path.encode().hex()}\n".encode())


def _tell(line: str) -> None:
    """Send one line to the watchdog; a watchdog that died is replaced (and told again)."""
    if _WATCH.get("pid") != os.getpid():
        _start_watchdog()
        if line.startswith(("+", "r")):
            return  # _start_watchdog sent every tied process and path, this one included
    try:
        os.write(_WATCH["fd"], line.encode())
    except BrokenPipeError:
        _start_watchdog()


def _forget() -> None:
    """Drop the watchdog state (after a fork: the child is not the watchdog's owner, and
    must not keep the lifeline open)."""
    fd = _WATCH.pop("fd", None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
    proc = _WATCH.pop("proc", None)
    if proc is not None and _WATCH.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            proc.poll()  # reap a watchdog that died
    _WATCH.clear()


def _after_fork() -> None:
    """In a forked child: a lock of its own (another thread may have held the parent's),
    no watchdog, nothing tied, no path to remove (its parent's: its parent's watchdog removes
    them; its mark stays in the child's environment: the child dies with it)."""
    global _LOCK
    _LOCK = threading.RLock()
    _forget()
    _TIED.clear()
    _PATHS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


EXIT_POLL_S = 0.5
"""How often a worker under :func:`exit_with` looks for its parent."""


def exit_with(pid: int) -> None:
    """End this process as soon as process ``pid`` (the one that started it) is gone.

    A worker process (``make report``'s, a sweep's cell worker) is killed by its parent's
    watchdog; but ``kill -9`` of the parent *and* its watchdog (``pkill -9 -f evalbench``
    matches every watchdog, not a worker) left workers going on with their studies and
    cells, paying for requests. A daemon thread looks every :data:`EXIT_POLL_S`; when the
    parent is gone (or its id is another process's), it kills every process group this
    process tied, its own group if it leads one, then this process.
    """
    started = _start_time(pid)

    def watch() -> None:
        while started is not None and _start_time(pid) == started and not _zombie(pid):
            time.sleep(EXIT_POLL_S)
        with _LOCK:
            groups = list(_TIED)
        for group in groups:
            _signal_group(group, signal.SIGKILL)
        if os.getpgrp() == os.getpid():
            _signal_group(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, name="evalbench-exit-with", daemon=True).start()


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended and is not yet reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False
