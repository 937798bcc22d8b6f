"""Where agent tasks and sweep cells run: in this process (``local``, the default) or on a
Ray cluster (``ray``; ``auto``: Ray when a cluster is found, as Ray's ``address="auto"``
finds one, else local).

The executor is not part of the params: a run keeps its folder (its params hash) whatever
runs its tasks, so a run started locally resumes on a cluster and the other way round.
The driver (the process that opened the run) stays the only writer of the run folder:
remote tasks get their inputs and return their records, and the driver writes them.

This module is light (no Ray import): :func:`choice` reads ``EVALBENCH_EXECUTOR`` /
``EVALBENCH_RAY_ADDRESS``, :func:`current` connects when Ray is asked for
(:mod:`evalbench.executors.ray_cluster`), :class:`RayHints` is a system's resource request.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from .base import (
    EXECUTORS,
    RAY_EXTRA,
    Choice,
    ExecutorError,
    ExecutorName,
    RayHints,
    RemoteLost,
    RemoteSetupError,
    Stopped,
    Tally,
    check,
    check_address,
    choice,
    redact_address,
    requested_manifest,
)

__all__ = [
    "EXECUTORS", "RAY_EXTRA", "Choice", "ExecutorError", "ExecutorName", "RayHints",
    "RemoteLost", "RemoteSetupError", "Stopped", "Tally", "check", "check_address", "choice",
    "current",
    "redact_address", "requested_manifest",
]  # fmt: skip


def current() -> Any:
    """The remote executor to use now, or ``None`` for this process (``local``; ``auto``
    without Ray or a cluster). Connects once per process and address.

    Raises:
        ExecutorError: a bad choice, Ray missing, or a cluster that cannot be reached.
    """
    requested = choice()
    check(requested)  # a malformed address, or ray without Ray: one line
    if requested.name == "local" or importlib.util.find_spec("ray") is None:
        return None  # auto without Ray: local
    from evalbench.executors.ray_cluster import connect

    return connect(requested.address, auto=requested.name == "auto")
