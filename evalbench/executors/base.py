"""What every executor shares: the choice (``EVALBENCH_EXECUTOR``), its errors, a
system's resource hints for a cluster, addresses without credentials (no Ray import)."""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalbench.settings import ENV_EXECUTOR, ENV_RAY_ADDRESS, get_settings

ExecutorName = Literal["local", "ray", "auto"]
EXECUTORS: tuple[ExecutorName, ...] = ("local", "ray", "auto")
RAY_EXTRA = "pip install -e '.[ray]'"


class ExecutorError(ValueError):
    """The executor asked for cannot be used (a bad name, Ray missing or unreachable)."""


class RemoteSetupError(RuntimeError):
    """A worker cannot run the task at all (a module or package missing there, a runtime
    environment that failed to build): every task would fail the same way."""


class RemoteLost(RuntimeError):
    """The worker (or node) running a task died on every attempt (``attempts`` of them)."""

    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


class Stopped(Exception):
    """An interrupt stopped a remote call in flight (it was cancelled on the cluster)."""


class Choice(NamedTuple):
    """The executor asked for and the cluster address (``None``: Ray's own default)."""

    name: ExecutorName
    address: str | None


class RayHints(BaseModel):
    """What one task of a system needs from the cluster (``ray:`` in a system's params)."""

    model_config = ConfigDict(extra="forbid")

    num_cpus: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """Logical CPUs per task (Ray schedules by them; fractions down to 0.0001 allowed)."""
    memory_mb: int | None = Field(default=None, ge=1)
    """Memory reserved per task, in MiB (``None``: none reserved)."""
    resources: dict[str, float] = Field(default_factory=dict)
    """Custom resources per task, e.g. ``{browser: 1}`` (nodes declare what they have)."""

    @field_validator("num_cpus")
    @classmethod
    def _cpus_in_ray_units(cls, value: float) -> float:
        why = _amount_problem(value)
        if why:
            raise ValueError(f"num_cpus: {why}")
        return value

    @field_validator("resources")
    @classmethod
    def _resources_in_ray_units(cls, value: dict[str, float]) -> dict[str, float]:
        for name, amount in value.items():
            why = _amount_problem(amount)
            if why:
                raise ValueError(f"resources.{name}: {why}")
        return value

    def options(self) -> dict[str, Any]:
        """The Ray options of a task with these needs."""
        options: dict[str, Any] = {"num_cpus": self.num_cpus}
        if self.memory_mb is not None:
            options["memory"] = self.memory_mb * 2**20
        if self.resources:
            options["resources"] = dict(self.resources)
        return options


RAY_UNITS = 10_000
"""Ray counts a resource in 1/10,000 units (``RESOURCE_UNIT_SCALING``); a non-zero amount
under one unit is refused when the task is sent (``ray_option_utils``)."""


def _amount_problem(amount: float) -> str:
    """Why Ray would refuse ``amount`` of a resource per task (``""``: it would not)."""
    if not math.isfinite(amount):
        return f"{amount} is not a finite amount"
    if amount < 0:
        return f"{amount} is negative"
    if amount and int(amount * RAY_UNITS) == 0:
        return f"{amount} is finer than Ray's unit, {1 / RAY_UNITS}"
    return ""


def choice() -> Choice:
    """The executor from the environment (``--executor`` / ``--ray-address`` set it).

    Raises:
        ExecutorError: ``EVALBENCH_EXECUTOR`` is none of local, ray, auto.
    """
    settings = get_settings()
    if settings.executor not in EXECUTORS:
        raise ExecutorError(
            f"{ENV_EXECUTOR}={settings.executor!r}: expected one of {', '.join(EXECUTORS)}"
        )
    return Choice(cast(ExecutorName, settings.executor), settings.ray_address)


def check(requested: Choice) -> None:
    """Fail fast, without importing Ray, when the choice cannot work here.

    Raises:
        ExecutorError: an address that is none of the forms Ray takes (naming where it came
            from), or ``ray`` asked for without Ray installed.
    """
    if requested.name != "local" and requested.address is not None:
        check_address(requested.address, ENV_RAY_ADDRESS)
    if requested.name == "ray" and importlib.util.find_spec("ray") is None:
        raise ExecutorError(f"--executor ray needs Ray on this machine: {RAY_EXTRA}")


ADDRESS_FORMS = "host:port, auto, or ray://host:port"
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
_ADDRESS = re.compile(rf"(?:ray://(?:[^@/\s]+@)?)?{_HOST}:(?P<port>[0-9]{{1,5}})")


def check_address(address: str, where: str) -> None:
    """Refuse an address that is none of the forms ``ray.init`` takes: ``host:port`` (a
    cluster's GCS, e.g. ``10.0.0.5:6379``), ``auto`` (the cluster running on this machine),
    ``ray://host:port`` (Ray Client, e.g. ``ray://head:10001``); the port 1-65535.

    Raises:
        ExecutorError: ``<where> '<address>': expected ...`` (credentials left out).
    """
    found = _ADDRESS.fullmatch(address)
    if address == "auto" or (found and 1 <= int(found["port"]) <= 65535):
        return
    shown = redact_address(address) or ""
    left_out = " (shown without its credentials or query)" if shown != address else ""
    if len(shown) > 80:  # a line, whatever was given
        shown, left_out = f"{shown[:60]}…", f" ({len(address):,d} characters)"
    raise ExecutorError(f"{where} {shown!r}{left_out}: expected {ADDRESS_FORMS}")


def requested_manifest() -> dict[str, Any]:
    """What the run was asked to use (for ``manifest.json`` when a run starts)."""
    requested = choice()
    address = None if requested.name == "local" else redact_address(requested.address)
    return {"requested": requested.name, "address": address}


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def redact_address(address: str | None) -> str | None:
    """``address`` without credentials: nothing up to its last ``@`` (a password may hold
    ``@``, ``/``, ``?`` or ``#``), no query or fragment after it (where tokens travel)."""
    if not address:
        return None
    found = _SCHEME.match(address)
    scheme = found[0] if found else ""
    host_on = address[len(scheme) :].rpartition("@")[2]
    return scheme + re.split(r"[?#]", host_on, maxsplit=1)[0]


def without_credentials(text: str, address: str) -> str:
    """``text`` (a message that may quote ``address``) with the address shown as
    :func:`redact_address` shows it, and its credentials gone in every other form too: the
    user and password (before the last ``@``), each part of them, and the query or fragment
    (parts shorter than 4 characters are left: they would cut words, and name little)."""
    shown = redact_address(address) or ""
    text = text.replace(address, shown)
    found = _SCHEME.match(address)
    rest = address[len(found[0]) if found else 0 :]
    userinfo, _, host_on = rest.rpartition("@")
    hidden = [userinfo, *re.split(r"[?#]", host_on, maxsplit=1)[1:]]
    parts = [p for h in hidden for p in [h, *re.split(r"[:?#&=]", h)] if len(p) >= 4]
    for part in sorted(set(parts), key=len, reverse=True):
        text = text.replace(part, "…")
    return text


def auth_hint(environ: Mapping[str, str], home: Path) -> str:
    """What to try when a cluster refuses this driver: Ray's ``ray start`` turns token
    authentication on by itself when ``~/.ray/auth_token`` exists, and a driver without
    ``RAY_AUTH_MODE=token`` is then refused with only "Failed to connect" ("" when that
    cannot be the reason)."""
    if environ.get("RAY_AUTH_MODE") == "token" or not (home / ".ray" / "auth_token").is_file():
        return ""
    return (
        "; if the cluster uses token authentication (ray start turns it on when "
        "~/.ray/auth_token exists), set RAY_AUTH_MODE=token"
    )


class Tally:
    """One system's remote work in a run's manifest ``executor`` entry: the tasks done, the
    retries they took and the nodes that ran them (also listed for the whole run)."""

    def __init__(self, manifest: dict[str, Any], system: str):
        self.manifest = manifest
        self.stats = manifest.setdefault("systems", {}).setdefault(
            system, {"tasks": 0, "retried": 0, "nodes": []}
        )

    def done(self, attempts: int, node: str) -> None:
        """A task came back, after ``attempts`` tries, from ``node``."""
        self.stats["tasks"] += 1
        self.lost(attempts)
        for nodes in (self.stats["nodes"], self.manifest.setdefault("nodes", [])):
            if node not in nodes:
                nodes.append(node)

    def lost(self, attempts: int) -> None:
        """``attempts`` tries of a task (all but the first are retries)."""
        self.stats["retried"] += attempts - 1
