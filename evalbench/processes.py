"""Process groups, read from /proc: whether one still runs, and a bounded wait until it is gone
(SIGKILL is delivered asynchronously, so a group just killed may still run for a moment)."""

from __future__ import annotations

import time
from pathlib import Path

GONE_WAIT_S = 1.0
"""How long :func:`wait_group_gone` waits at most."""


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
