"""The Ray executor: one connection per process, functions run as Ray tasks with bounded
retries, and every failure sorted into what the caller can act on.

:meth:`RayExecutor.call` runs ``fn(*args)`` on a worker of the cluster. A worker (or node)
that dies mid-task is retried on another worker, :data:`RETRIES` times, then the call
raises :class:`~evalbench.executors.RemoteLost` saying so; a worker that cannot run the
function at all (a module missing there, a runtime environment that failed) raises
:class:`~evalbench.executors.RemoteSetupError` at once, never a hang; an interrupt cancels
the task on the cluster and raises :class:`~evalbench.executors.Stopped`. Ray's own task
retries are off (``max_retries=0``), so the caller sees every attempt and counts it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from evalbench import lean_imports
from evalbench.executors.base import (
    ExecutorError,
    RayHints,
    RemoteLost,
    RemoteSetupError,
    Stopped,
    auth_hint,
    redact_address,
)
from evalbench.processes import lifeline

RETRIES = 2
"""Attempts after the first when the worker running a task dies."""
POLL_S = 0.1  # how often a call in flight looks for an interrupt
CANCEL_GRACE_S = 5.0  # after a polite cancel, how long before the worker is killed
_STATE: dict[str, Any] = {}


class Done(NamedTuple):
    """A remote call's value, the node that computed it and the attempts it took."""

    value: Any
    node: str
    attempts: int


def connect(address: str | None, *, auto: bool) -> RayExecutor | None:
    """The executor for ``address`` (``None``: ``RAY_ADDRESS``, else a Ray instance started
    on this machine; ``auto``: a running cluster if one is found, else ``None``).

    A Ray session this process already has (``ray.init`` by the user or a test) is used
    as it is.

    Raises:
        ExecutorError: the cluster cannot be reached (``auto``: only a given address).
    """
    lean_imports.skip()  # Ray -> jsonschema: ~1 s of CPU (evalbench.lean_imports)
    import ray

    if ray.is_initialized() and _STATE.get("address", address) == address:
        return _executor(address)
    if ray.is_initialized() and "address" in _STATE:  # ours, to another cluster
        ray.shutdown()
    lifeline()  # a Ray instance started here (no address) dies with this process
    try:
        ray.init(
            address=address or ("auto" if auto else None),
            namespace="evalbench",
            log_to_driver=False,
            logging_level=logging.WARNING,
        )
    except ConnectionError as exc:
        if auto and address is None:
            return None
        where = redact_address(address) or "auto"
        hint = auth_hint(os.environ, Path.home())
        raise ExecutorError(f"cannot connect to the Ray cluster at {where}: {exc}{hint}") from None
    _STATE["address"] = address
    return _executor(address)


def _executor(address: str | None) -> RayExecutor:
    executor = _STATE.get("executor")
    if executor is None or executor.requested != address:
        executor = _STATE["executor"] = RayExecutor(address)
    return executor


def _invoke(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any]:
    """On the worker: ``fn(*args)`` and the node it ran on (``<ip>/<node id>``)."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    return f"{ray.util.get_node_ip_address()}/{node_id[:8]}", fn(*args)


class RayExecutor:
    """Runs functions as tasks of the connected Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(self, requested: str | None):
        import ray

        self.requested = requested
        self._ray = ray
        self._remotes: dict[tuple[Any, ...], Any] = {}
        self._in_flight: set[Any] = set()
        self._watchers: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self.lost_errors = _lost_errors(ray)
        """Ray's errors for a worker, node or object lost under a task (worth a retry)."""

    @property
    def address(self) -> str | None:
        """The cluster's address (its GCS), without credentials."""
        try:
            return redact_address(self._ray.get_runtime_context().gcs_address)
        except Exception:  # an older Ray or a client connection: the address asked for
            return redact_address(self.requested)

    def manifest(self) -> dict[str, Any]:
        """What ``manifest.json`` says of the executor (nodes are added by the caller)."""
        return {"name": "ray", "address": self.address, "ray_version": self._ray.__version__}

    def pack(self, value: Any) -> bytes:
        """``value`` serialized for a worker (closures included).

        Raises:
            TypeError: it cannot be sent (a live server, a lock, an open file...).
        """
        from ray import cloudpickle

        try:
            return bytes(cloudpickle.dumps(value))
        except Exception as exc:
            raise TypeError(f"{type(exc).__name__}: {exc}") from None

    def check_feasible(self, hints: RayHints) -> None:
        """Fail at once when no node of the cluster could ever run a task with ``hints``
        (Ray would queue it forever).

        Raises:
            ExecutorError: naming what is asked for and what the nodes have.
        """
        wanted = {"CPU": hints.num_cpus, **hints.resources}
        if hints.memory_mb is not None:
            wanted["memory"] = hints.memory_mb * 2**20
        nodes = [n["Resources"] for n in self._ray.nodes() if n.get("Alive")]
        if any(all(node.get(k, 0) >= v for k, v in wanted.items()) for node in nodes):
            return
        have = "; ".join(_resources_text(node) for node in nodes) or "no live node"
        raise ExecutorError(
            f"no node of the Ray cluster has {_resources_text(wanted)} (nodes: {have})"
        )

    async def call(
        self, fn: Callable[..., Any], *args: Any, hints: RayHints, stop: threading.Event
    ) -> Done:
        """``fn(*args)`` on a worker: retried when its worker dies (see the module docstring).

        Raises:
            RemoteLost: the worker died on every attempt.
            RemoteSetupError: the worker could not run ``fn`` (the remote error named).
            Stopped: ``stop`` was set while the call was in flight.
        """
        lost: list[str] = []
        for attempt in range(1, RETRIES + 2):
            try:
                node, value = await self._wait(self.submit(fn, *args, hints=hints), stop)
            except self.lost_errors as exc:
                if stop.is_set():  # its worker was killed to stop it
                    raise Stopped from None
                lost.append(_first_line(exc))
                continue
            except self._ray.exceptions.TaskCancelledError:
                raise Stopped from None
            except self._ray.exceptions.RayError as exc:
                raise RemoteSetupError(_remote_error(exc)) from None
            return Done(value, node, attempt)
        raise RemoteLost(
            f"the Ray worker running it died on all {len(lost)} attempts (last: {lost[-1]})",
            len(lost),
        )

    def submit(self, fn: Callable[..., Any], *args: Any, hints: RayHints) -> Any:
        """Start ``fn(*args)`` as a task of the cluster; its ``ObjectRef`` resolves to
        ``(node, value)`` (no retries: see :meth:`call`)."""
        return self._remote(hints).remote(fn, args)

    def _remote(self, hints: RayHints) -> Any:
        options = hints.options()
        key = tuple(sorted((k, str(v)) for k, v in options.items()))
        if key not in self._remotes:
            self._remotes[key] = self._ray.remote(_invoke).options(
                **options, max_retries=0, retry_exceptions=False
            )
        return self._remotes[key]

    async def _wait(self, ref: Any, stop: threading.Event) -> Any:
        """The task's result. One watcher per event loop looks for ``stop`` and cancels
        every task in flight (each waiting on its own flag would wake 10 times a second:
        at thousands in flight, more work than the tasks' records)."""
        self._watch(stop)
        self._in_flight.add(ref)
        try:
            return await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:  # the caller gave up (another task failed): stop it
            self._ray.cancel(ref, force=False, recursive=True)
            raise
        finally:
            self._in_flight.discard(ref)

    def _watch(self, stop: threading.Event) -> None:
        loop = asyncio.get_running_loop()
        if loop not in self._watchers:
            self._watchers[loop] = loop.create_task(self._cancel_on(stop))

    async def _cancel_on(self, stop: threading.Event) -> None:
        """Once ``stop`` is set: cancel the tasks in flight, politely, then by killing the
        workers of those still running after :data:`CANCEL_GRACE_S`."""
        while not stop.is_set():
            await asyncio.sleep(POLL_S)
        for ref in list(self._in_flight):
            self._ray.cancel(ref, force=False, recursive=True)
        deadline = time.monotonic() + CANCEL_GRACE_S
        while self._in_flight and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S)
        for ref in list(self._in_flight):
            self._ray.cancel(ref, force=True)


def _lost_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Ray's errors for a worker, node or object lost under a task (worth another try)."""
    names = ("WorkerCrashedError", "NodeDiedError", "ObjectLostError", "LocalRayletDiedError",
             "ObjectFetchTimedOutError")  # fmt: skip
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


def _remote_error(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return f"{type(cause).__name__}: {_first_line(cause)}"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _resources_text(resources: dict[str, float]) -> str:
    def amount(name: str, value: float) -> str:
        return f"{value / 2**20:,.0f} MiB" if name == "memory" else f"{value:g}"

    shown = {k: v for k, v in resources.items() if not k.startswith(("node:", "object_store"))}
    return ", ".join(f"{k} {amount(k, v)}" for k, v in sorted(shown.items()))
