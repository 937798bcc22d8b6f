"""Processes of a test, found in /proc: a process tree, and every process carrying a tag in
its environment (what descendants inherit even after their parent died and they were
re-parented). A process is identified by its id *and* start time, so an id reused later is
never taken for it. Waits poll, bounded; nothing here sleeps a fixed time."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple


class Proc(NamedTuple):
    """A process: its id and start time (clock ticks after boot)."""

    pid: int
    start: int


def _stat(pid: int | str) -> tuple[str, int, int] | None:
    """State letter, parent id and start time (``None``: gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def _live() -> dict[int, tuple[int, int]]:
    """Every live (not zombie) process: id -> (parent id, start time)."""
    found = {}
    for entry in os.listdir("/proc"):
        stat = _stat(entry) if entry.isdigit() else None
        if stat is not None and stat[0] not in "ZX":
            found[int(entry)] = (stat[1], stat[2])
    return found


def descendants(root: int) -> set[Proc]:
    """The live descendants of ``root`` now (by parent links)."""
    live = _live()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in live.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(Proc(child, live[child][1]))
            todo.append(child)
    return found


def tagged(name: str, value: str) -> set[Proc]:
    """The live processes whose environment holds ``name=value``."""
    entry = f"{name}={value}".encode()
    found = set()
    for pid, (_, start) in _live().items():
        with contextlib.suppress(OSError):
            if entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.add(Proc(pid, start))
    return found


def alive(procs: Iterable[Proc]) -> set[Proc]:
    """Those of ``procs`` still running (same id and start time, not a zombie)."""
    live = _live()
    return {p for p in procs if p.pid in live and live[p.pid][1] == p.start}


def cmdline(proc: Proc) -> str:
    """The process's command line, spaces between arguments ("" when gone)."""
    try:
        return Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_for(condition: Callable[[], object], timeout_s: float, pause_s: float = 0.05) -> bool:
    """Poll ``condition`` until it is true or ``timeout_s`` passed; whether it became true."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause_s)
    return True


def kill(procs: Iterable[Proc]) -> None:
    """SIGKILL those of ``procs`` still running (a test's cleanup)."""
    for proc in alive(procs):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGKILL)
