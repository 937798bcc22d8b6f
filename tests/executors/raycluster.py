"""A real local Ray cluster for the tests and ``tests/bench_ray.py``: a head node on
127.0.0.1 only (``ray start --head --block`` in a session of its own, its own temp folder,
no dashboard, no log monitor, no usage stats, no token), stopped with everything it started.

Ray binds its servers to the machine's outward address unless told it is a single-machine
install (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes it use the loopback address, here on
Linux too); :data:`RAY_ENV` is set for the cluster and for the driver that connects to it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalbench import processes

RAY_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # loopback only (see the module docstring)
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",  # a cluster on 127.0.0.1 that lives as long as the tests
}
LEAN = Path(__file__).resolve().parent / "lean"
"""A folder first on the cluster's ``PYTHONPATH``: imports its processes skip."""
START_TIMEOUT_S = 120.0
STOP_GRACE_S = 2.0
WATCHDOG_WAIT_S = 15.0  # a watchdog's sweep is bounded at 10 s (evalbench._watchdog.SWEEP_S)


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster did not start (the reason is in the message)."""


class LocalCluster:
    """``ray start --head`` on 127.0.0.1 with ``num_cpus`` logical CPUs; :meth:`stop` ends
    every process of it (they all carry its temp folder on their command line)."""

    def __init__(self, num_cpus: int = 2, env: dict[str, str] | None = None):
        self.num_cpus = num_cpus
        self.env = {**os.environ, **RAY_ENV, **(env or {})}
        # its processes skip rfc3987_syntax (~0.9 s of CPU each: lean/rfc3987_syntax.py)
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(LEAN), self.env.get("PYTHONPATH", "")) if p
        )
        """The environment of the cluster's processes (its workers inherit it)."""
        self.temp = Path(tempfile.mkdtemp(prefix="ebray-", dir="/tmp"))  # short: socket paths
        self.proc: subprocess.Popen[bytes] | None = None
        self.address = ""

    def start(self) -> LocalCluster:
        """Start the head and wait until it accepts drivers.

        Raises:
            RayUnavailable: no ``ray`` command, or the head did not come up in time.
        """
        ray = shutil.which("ray", path=str(Path(sys.executable).parent))
        if ray is None:
            raise RayUnavailable("Ray is not installed (pip install -e '.[ray]')")
        argv = [ray, "start", "--head", "--block", "--node-ip-address=127.0.0.1", "--port=0",
                f"--num-cpus={self.num_cpus}", "--include-dashboard=false",
                "--include-log-monitor=false",  # drivers take no worker logs (log_to_driver)
                "--disable-usage-stats", f"--temp-dir={self.temp}"]  # fmt: skip
        with open(self.temp / "start.log", "wb") as log:
            # tied to this process (evalbench.processes): when pytest is killed, even with -9,
            # the cluster and every process carrying its mark (Ray's workers) die with it
            self.proc = processes.spawn(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.address = self._wait_for_address()
        return self

    def _wait_for_address(self) -> str:
        marker = self.temp / "ray_current_cluster"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                tail = self._log_tail()
                self.stop()
                raise RayUnavailable(f"ray start ended: {tail}")
            if marker.is_file() and marker.read_text().strip():
                return marker.read_text().strip()
            time.sleep(0.1)
        self.stop()
        raise RayUnavailable(f"the Ray head did not start in {START_TIMEOUT_S:.0f} s")

    def _log_tail(self) -> str:
        return (self.temp / "start.log").read_text(errors="replace")[-1000:]

    def processes(self) -> set[tuple[int, str]]:
        """Live processes of this cluster, as (pid, start time): descendants of ``ray
        start`` and anything with its temp folder on the command line."""
        table = _process_table()
        mark = str(self.temp).encode()
        found = {pid for pid, (_, _, cmdline) in table.items() if mark in cmdline}
        todo = [self.proc.pid] if self.proc is not None else []
        while todo:
            parent = todo.pop()
            children = [pid for pid, (ppid, _, _) in table.items() if ppid == parent]
            found.update(children)
            todo += children
        return {(pid, table[pid][1]) for pid in found}

    def stop(self) -> list[int]:
        """SIGTERM to every process of the cluster (Ray's servers stop cleanly on it), then
        SIGKILL to those still alive after :data:`STOP_GRACE_S`; returns the latter.

        Workers' evalbench watchdogs are left to end on their own once their worker is gone
        (they remove its temporary folders first), killed only if still there after
        :data:`WATCHDOG_WAIT_S`."""
        if self.proc is None:
            return []
        doomed, dogs = _watchdogs_apart(self.processes())
        _signal(doomed, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while _alive(doomed) and time.monotonic() < deadline:
            time.sleep(0.1)
        rest, more_dogs = _watchdogs_apart(self.processes())
        stubborn = _alive(doomed | rest)
        _signal(stubborn, signal.SIGKILL)
        dogs |= more_dogs
        deadline = time.monotonic() + WATCHDOG_WAIT_S
        while _alive(dogs) and time.monotonic() < deadline:
            time.sleep(0.1)
        stubborn |= _alive(dogs)
        _signal(stubborn, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        processes.untie(self.proc.pid)
        shutil.rmtree(self.temp, ignore_errors=True)
        return sorted(pid for pid, _ in stubborn)


def _watchdogs_apart(
    found: set[tuple[int, str]],
) -> tuple[set[tuple[int, str]], set[tuple[int, str]]]:
    """``found`` split into (other processes, evalbench watchdogs)."""
    table = _process_table()
    dogs = {p for p in found if b"_watchdog.py" in table.get(p[0], (0, "", b""))[2]}
    return found - dogs, dogs


def _alive(processes: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Those of ``processes`` still running (the same pid with the same start time)."""
    table = _process_table()
    return {(pid, start) for pid, start in processes if table.get(pid, (0, ""))[1] == start}


def _signal(processes: set[tuple[int, str]], signum: int) -> None:
    for pid, _ in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _process_table() -> dict[int, tuple[int, str, bytes]]:
    """Every live (not zombie) process: pid -> (parent pid, start time, command line)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                table[int(entry.name)] = (
                    int(fields[1]),
                    fields[19],
                    (entry / "cmdline").read_bytes(),
                )
    return table


def driver_env() -> None:
    """Set :data:`RAY_ENV` in this process (before Ray is imported: it reads them then)."""
    os.environ.update(RAY_ENV)
