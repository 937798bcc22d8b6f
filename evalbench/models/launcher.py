"""Start a server process that cannot outlive its starter, wait until it answers, stop it.

:func:`start` runs the server under a tiny guard process (:data:`GUARD`, plain Python,
no evalbench import) that leads a process group of its own:

- the guard holds the read end of a *lifeline* pipe whose write end only the starting
  process holds; when that process ends in any way (``kill -9`` included) the kernel closes
  the write end, the guard reads end-of-file and stops the whole group: SIGTERM, then
  SIGKILL after ``grace_s``;
- the server is the guard's child with ``PR_SET_PDEATHSIG`` = SIGKILL, so a guard killed
  with ``kill -9`` takes the server with it.

``PR_SET_PDEATHSIG`` alone is not enough in the starter: it fires when the *thread* that
forked the child ends, and evalbench starts servers from short-lived event-loop threads.
The lifeline follows the process. (A process forked from the starter without ``exec``
inherits the write end too: the server then also waits for it.)

:meth:`Launched.stop` closes the lifeline, waits for the guard, SIGKILLs whatever is left of
the group and waits (bounded) until /proc shows none of it running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from evalbench.processes import wait_group_gone

GUARD = r"""
import ctypes, os, signal, subprocess, sys, threading
grace, parent = float(sys.argv[1]), os.getpid()
def pdeathsig():  # in the server, before exec: SIGKILL when this guard dies
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
server = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, preexec_fn=pdeathsig)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the guard outlasts the group's SIGTERM
def stop_group():
    os.killpg(0, signal.SIGTERM)
    try:
        server.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    os.killpg(0, signal.SIGKILL)
def lifeline():
    while os.read(0, 4096):
        pass
    stop_group()
threading.Thread(target=lifeline, daemon=True).start()
code = server.wait()
os.killpg(0, signal.SIGTERM)  # what the server left behind
sys.exit(code if code >= 0 else 128 - code)
"""
"""The guard's code (``python -I -S -c GUARD grace_s argv...``; lifeline on stdin)."""

TAIL_LINES = 5
"""Lines of the server's output quoted when it fails to start."""
POLL_S = 0.1
"""Interval between readiness probes."""


class ServerFailed(RuntimeError):
    """The server exited, or did not answer in time; the message ends with its last lines."""


class Launched:
    """A started server: its guard process (the group leader), output log and lifeline."""

    def __init__(self, argv: Sequence[str], guard: subprocess.Popen[bytes], log: IO[bytes],
                 lifeline: int):  # fmt: skip
        self.argv = list(argv)
        self.guard = guard
        self.group = guard.pid
        self.log = log
        self._lifeline: int | None = lifeline
        self.startup_s: float | None = None
        """Seconds from start to the first good readiness probe."""

    def running(self) -> bool:
        """Whether the guard (and so the server) still runs."""
        return self.guard.poll() is None

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` lines of the server's output, joined by `` | ``."""
        with contextlib.suppress(OSError, ValueError):
            self.log.flush()
            size = os.fstat(self.log.fileno()).st_size
            text = os.pread(self.log.fileno(), 8192, max(0, size - 8192)).decode(errors="replace")
            kept = [line.strip() for line in text.splitlines() if line.strip()]
            return " | ".join(kept[-lines:]) or "(no output)"
        return "(no output)"

    def stop(self, grace_s: float = 5.0) -> None:
        """Stop the server's whole process group (bounded: SIGKILL after ``grace_s``)."""
        if self._lifeline is not None:
            os.close(self._lifeline)  # the guard stops the group: SIGTERM, then SIGKILL
            self._lifeline = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.guard.wait(grace_s + 2.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.group, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.guard.wait(2.0)
        wait_group_gone(self.group, timeout_s=5.0)
        with contextlib.suppress(OSError):
            self.log.close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(
    argv: Sequence[str], *, grace_s: float = 5.0, env: dict[str, str] | None = None
) -> Launched:
    """Start ``argv`` under the guard (see the module docstring); its output goes to an
    anonymous temporary file (:meth:`Launched.tail`).

    Raises:
        OSError: the guard could not be started.
    """
    log = tempfile.TemporaryFile(prefix="evalbench-server-")  # noqa: SIM115 (kept by Launched)
    read_end, write_end = os.pipe()  # both non-inheritable: only the guard gets read_end
    try:
        guard = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", GUARD, str(grace_s), *argv],
            stdin=read_end, stdout=log, stderr=subprocess.STDOUT, env=env,
            start_new_session=True,
        )  # fmt: skip
    except BaseException:
        os.close(write_end)
        log.close()
        raise
    finally:
        os.close(read_end)
    return Launched(argv, guard, log, write_end)


def wait_ready(
    launched: Launched, ready: Callable[[], bool], timeout_s: float, what: str,
    cancelled: Callable[[], bool] = lambda: False,
) -> None:  # fmt: skip
    """Probe ``ready()`` every :data:`POLL_S` until it is true (records ``startup_s``).

    Raises:
        ServerFailed: the server exited, ``timeout_s`` passed or ``cancelled()`` became true
            (then it is stopped); the message names ``what`` and ends with the server's last
            output lines.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    while True:
        if cancelled():
            launched.stop()
            raise ServerFailed(f"{what}: interrupted while it started")
        if not launched.running():
            code = launched.guard.returncode
            raise ServerFailed(f"{what} exited with status {code} before it answered: "
                               f"{launched.tail()}")  # fmt: skip
        if ready() and launched.running():
            launched.startup_s = time.monotonic() - started
            return
        if time.monotonic() >= deadline:
            tail = launched.tail()
            launched.stop()
            raise ServerFailed(f"{what} did not answer within {timeout_s:g} s (raise "
                               f"local.startup_timeout_s for a large model): {tail}")  # fmt: skip
        time.sleep(POLL_S)


def probe_models(base_url: str, model: str, timeout_s: float = 2.0) -> bool:
    """Whether ``GET <base_url>/models`` answers 200 with ``model`` among its ids (directly:
    never through a proxy, never following a redirect; the server is on this machine)."""
    import json
    import urllib.request  # here: 20 ms to import, and only a starting server needs it

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # then the 3xx is an HTTPError: not ready

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
    try:
        with opener.open(base_url.rstrip("/") + "/models", timeout=timeout_s) as response:
            if response.status != 200:
                return False
            body: Any = json.loads(response.read(1_000_000))
    except (OSError, ValueError, RecursionError):  # HTTPError (a redirect too) is an OSError
        return False
    data = body.get("data") if isinstance(body, dict) else None
    return isinstance(data, list) and any(
        isinstance(row, dict) and row.get("id") == model for row in data
    )
