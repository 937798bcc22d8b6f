"""The watchdog of one evalbench process: ``python -I _watchdog.py TOKEN``, started by
:func:`evalbench.processes.lifeline`. Standard library only, never imported by evalbench.

Its stdin is the lifeline: a pipe whose only writer is the evalbench process. Over it come
lines ``+PID START`` (kill process group PID, and process PID, when evalbench goes; START is
the process's start time in /proc, so a process id reused since is never taken for it) and
``-PID`` (forget it: evalbench stopped it), ``rHEX`` and ``fHEX`` (remove, or forget, the
path whose UTF-8 bytes are HEX: a temporary file or folder). End of file means the evalbench
process has ended, however (``kill -9`` included); then the watchdog kills, with SIGKILL:

- every process group it was told of (and the process of that id, in case it had not yet
  made its own group), and
- every process whose environment carries ``EVALBENCH_LIFELINES=... TOKEN ...`` (what
  evalbench's children and their descendants inherit: daemons that left their group too,
  and children started a moment before evalbench could tell the watchdog), with its group
  when it leads one,

and scans again until a scan finds none of them alive (at most :data:`SWEEP_S`); then it
removes the paths it was told of (a folder with all it holds; a symbolic link itself, never
what it points to) and exits.
It runs in a session of its own and ignores SIGINT, SIGHUP and SIGTERM, so the kill of
evalbench's process group or terminal, or a SIGTERM to every process of a tree, does not take
it along before it has done its work (it ends right after; SIGKILL still ends it at once).
"""

import contextlib
import os
import shutil
import signal
import sys
import time

MARK_ENV = b"EVALBENCH_LIFELINES="
SWEEP_S = 10.0  # how long the watchdog keeps killing what is left (a fork bomb: bounded)
PAUSE_S = 0.02  # between scans: SIGKILL lands asynchronously


def _read_lifeline() -> tuple[dict[int, int], set[bytes]]:
    """The process groups to kill (each with its leader's start time) and the paths to
    remove, read from stdin until its end."""
    groups: dict[int, int] = {}
    paths: set[bytes] = set()
    pending = b""
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            return groups, paths
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            if line[:1] == b"+":
                pid, start = line[1:].split()
                groups[int(pid)] = int(start)
            elif line[:1] == b"-":
                groups.pop(int(line[1:]), None)
            elif line[:1] == b"r":
                paths.add(bytes.fromhex(line[1:].decode()))
            elif line[:1] == b"f":
                paths.discard(bytes.fromhex(line[1:].decode()))


def remove(path: bytes | str) -> None:
    """Remove a file, a symbolic link (not what it points to) or a folder and all it holds;
    errors ignored (also :func:`evalbench.processes.discard`'s)."""
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def _stat(pid: int | str) -> tuple[str, int, int] | None:
    """A process's state letter, process group and start time (``None``: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[2]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _ours(groups: dict[int, int]) -> set[int]:
    """The registered groups that are still the ones registered: the leader runs with its
    start time, or is gone (its group may outlive it; while it has members its id is not
    given to a new process). A leader id now held by another process means the group ended
    and the id was reused: not ours."""
    found = set()
    for pid, start in groups.items():
        stat = _stat(pid)
        if stat is None or stat[2] == start:
            found.add(pid)
    return found


def _marked(pid: str, token: bytes) -> bool:
    """Whether the process's environment carries ``token`` among its lifelines."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    for entry in environ.split(b"\0"):
        if entry.startswith(MARK_ENV):
            return token in entry[len(MARK_ENV) :].split()
    return False


def _kill(pid: int, group: bool) -> None:
    """SIGKILL the process, and its group when it leads one."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
        if group:
            os.killpg(pid, signal.SIGKILL)


def _scan(token: bytes, registered: dict[int, int]) -> int:
    """Kill every live process of the registered groups or carrying ``token``; how many
    there were."""
    groups = _ours(registered)
    found = 0
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        stat = _stat(name)
        if stat is None or stat[0] in "ZX":
            continue  # gone, or a zombie (it runs nothing; its reaper is not us)
        pid, pgrp = int(name), stat[1]
        if pid in groups or pgrp in groups or _marked(name, token):
            _kill(pid, group=pgrp == pid)
            found += 1
    return found


def main() -> None:
    """Wait for the end of the lifeline, then kill what evalbench left (see the docstring)."""
    # a signal to evalbench's group, its terminal, or to every process of a tree (SIGTERM: a
    # Ray cluster stopped with its workers) must not take the watchdog before it has cleaned
    for ignored in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(ignored, signal.SIG_IGN)
    token = sys.argv[1].encode()
    groups, paths = _read_lifeline()
    deadline = time.monotonic() + SWEEP_S
    while _scan(token, groups) and time.monotonic() < deadline:
        time.sleep(PAUSE_S)
    for path in paths:
        remove(path)


if __name__ == "__main__":
    main()
