"""Start a server process that cannot outlive its starter, wait until it answers, stop it.

:func:`start` starts the server with :func:`evalbench.processes.spawn`, the one mechanism
for every process evalbench starts: the server leads a process group of its own, carries
the starting process's lifeline mark in its environment and is tied to that process's
watchdog. When the starting process ends in any way (``kill -9`` included), the watchdog
kills the server's group and every process carrying the mark, so also what the server
started outside its group (see :mod:`evalbench.processes`). The lifeline follows the
process, not the thread: evalbench starts servers from short-lived event-loop threads.

:meth:`Launched.stop` stops the group (SIGTERM, SIGKILL after ``grace_s``), reaps the
server and waits (bounded) until /proc shows none of its group running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from evalbench import processes

TAIL_LINES = 5
"""Lines of the server's output quoted when it fails to start."""
POLL_S = 0.1
"""Interval between readiness probes."""


class ServerFailed(RuntimeError):
    """The server exited, or did not answer in time; the message ends with its last lines."""


class Launched:
    """A started server: its process (the leader of its own process group) and output log."""

    def __init__(self, argv: Sequence[str], process: subprocess.Popen[bytes], log: IO[bytes]):
        self.argv = list(argv)
        self.process = process
        self.group = process.pid
        self.log = log
        self.startup_s: float | None = None
        """Seconds from start to the first good readiness probe."""

    def running(self) -> bool:
        """Whether the server still runs."""
        return self.process.poll() is None

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last ``lines`` lines of the server's output, joined by `` | ``."""
        with contextlib.suppress(OSError, ValueError):
            self.log.flush()
            size = os.fstat(self.log.fileno()).st_size
            text = os.pread(self.log.fileno(), 8192, max(0, size - 8192)).decode(errors="replace")
            kept = [line.strip() for line in text.splitlines() if line.strip()]
            return " | ".join(kept[-lines:]) or "(no output)"
        return "(no output)"

    def stop(self, grace_s: float = processes.STOP_GRACE_S) -> None:
        """Stop the server's whole process group (SIGTERM, SIGKILL after ``grace_s``; bounded)
        and close its log. Safe to call twice."""
        processes.stop(self.process, grace_s)
        processes.wait_group_gone(self.group, timeout_s=5.0)
        with contextlib.suppress(OSError):
            self.log.close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(argv: Sequence[str], *, env: dict[str, str] | None = None) -> Launched:
    """Start ``argv`` with :func:`evalbench.processes.spawn` (see the module docstring); its
    output goes to an anonymous temporary file (:meth:`Launched.tail`).

    Raises:
        OSError: the server could not be started.
    """
    log = tempfile.TemporaryFile(prefix="evalbench-server-")  # noqa: SIM115 (kept by Launched)
    try:
        process = processes.spawn(argv, stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, env=env)  # fmt: skip
    except BaseException:
        log.close()
        raise
    return Launched(argv, process, log)


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
            raise ServerFailed(f"{what} {ended_text(launched.process.returncode)} before it "
                               f"answered: {launched.tail()}")  # fmt: skip
        if ready() and launched.running():
            launched.startup_s = time.monotonic() - started
            return
        if time.monotonic() >= deadline:
            tail = launched.tail()
            launched.stop()
            raise ServerFailed(f"{what} did not answer within {timeout_s:g} s (raise "
                               f"local.startup_timeout_s for a large model): {tail}")  # fmt: skip
        time.sleep(POLL_S)


def ended_text(code: int) -> str:
    """How a process ended, from its exit status (negative: the signal that ended it)."""
    if code >= 0:
        return f"exited with status {code}"
    with contextlib.suppress(ValueError):
        return f"was killed by {signal.Signals(-code).name}"
    return f"was killed by signal {-code}"


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
