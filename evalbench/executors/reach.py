"""Reaching the Ray cluster before anything runs, within a bounded time.

``ray.init`` on an address where no cluster answers retries for many minutes (Ray 2.60:
20 attempts of ~40 s each at ``127.0.0.1:1``), writing a ``gcs_client.cc`` line at every
attempt. ``evalbench run/report/watch --executor ray|auto`` first tries the connection the
study's driver will make, in a process of its own (:mod:`._ray_probe`), and gives up after
:data:`CONNECT_TIMEOUT_S` (``EVALBENCH_RAY_CONNECT_TIMEOUT_S``): one line, exit 2, nothing
run. Ray's own lines are discarded. The address reaches the probe on its stdin (never its
command line, which other users can read).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from evalbench import processes
from evalbench.executors.base import (
    RAY_EXTRA,
    Choice,
    ExecutorError,
    auth_hint,
    check_address,
    redact_address,
    without_credentials,
)

CONNECT_TIMEOUT_S = 30.0
"""How long evalbench waits for the Ray cluster to answer, by default."""
MAX_CONNECT_TIMEOUT_S = 3600.0
TIMEOUT_ENV = "EVALBENCH_RAY_CONNECT_TIMEOUT_S"
PROBE = Path(__file__).with_name("_ray_probe.py")


def connect_timeout_s() -> float:
    """:data:`CONNECT_TIMEOUT_S`, or ``EVALBENCH_RAY_CONNECT_TIMEOUT_S`` when set.

    Raises:
        ExecutorError: the variable is not a number of seconds in (0, 3600].
    """
    value = os.environ.get(TIMEOUT_ENV, "").strip()
    if not value:
        return CONNECT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT_S:  # NaN too
        raise ExecutorError(
            f"{TIMEOUT_ENV}={value!r}: expected seconds, more than 0 and at most "
            f"{MAX_CONNECT_TIMEOUT_S:g}"
        )
    return seconds


def reach(requested: Choice) -> None:
    """Make sure the cluster ``requested`` names answers, or fail within the connect timeout.

    Nothing to reach for ``local``, for ``ray`` without an address (Ray starts an instance
    of its own here), or without Ray installed (``auto`` then runs locally). ``auto``
    without an address finding no cluster on this machine is fine: the run is local.

    Raises:
        ExecutorError: a bad timeout or address; ``ray://`` without Ray Client; no answer
            within the timeout; the connection refused (one line, credentials left out).
    """
    if requested.name == "local":
        return
    timeout = connect_timeout_s()
    if importlib.util.find_spec("ray") is None:
        return
    target = _target(requested)
    if target is None:
        return
    if target.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise ExecutorError(f"ray:// addresses need Ray Client (grpcio): {RAY_EXTRA}")
    answer = _probe(target, timeout)
    if answer.get("ok") or (answer.get("found") is False and requested.address is None):
        return
    where = redact_address(target) or target
    if answer.get("timeout"):
        raise ExecutorError(
            f"no answer from the Ray cluster at {where} within {timeout:g} s "
            f"({TIMEOUT_ENV} sets how long to wait)"
        )
    reason = without_credentials(str(answer.get("error") or "no running cluster found"), target)
    hint = auth_hint(os.environ, Path.home())
    raise ExecutorError(f"cannot connect to the Ray cluster at {where}: {reason}{hint}")


def _target(requested: Choice) -> str | None:
    """The address ``ray.init`` will be given (``None``: it starts its own instance)."""
    if requested.address is not None:
        return requested.address
    from_ray = os.environ.get("RAY_ADDRESS", "").strip()
    if from_ray:
        check_address(from_ray, "RAY_ADDRESS")
        return from_ray
    return "auto" if requested.name == "auto" else None


def _probe(address: str, timeout_s: float) -> dict[str, object]:
    """The probe's answer, or ``{"timeout": True}`` when it had none within ``timeout_s``
    (it is killed then, with everything it started)."""
    argv = [sys.executable, str(PROBE)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    with processes.running(argv, grace_s=0, cwd="/", text=True, **pipes) as proc:
        try:
            out, _ = proc.communicate(address, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"timeout": True}
    try:
        answer = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"the connection check ended without an answer (exit {proc.returncode})"}
    return answer if isinstance(answer, dict) else {"error": "the connection check misspoke"}
