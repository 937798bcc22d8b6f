"""Sweep cells on a Ray cluster: the sweep's executor interface
(``evalbench.sweeps.executor.CellExecutor``: ``run(phases, work, timeout_s)`` yields one
``Finished`` per task as it finishes) with every task a Ray task.

A cell computes in a run folder. The driver stays the only writer of its folders: it locks
the cell's folder, sends the folder's files with the task, the worker computes in a private
copy (``work`` gets the job with ``folder`` pointing there) and sends every file back, and
the driver writes them into the cell's folder. So a cell resumes from what its folder holds
wherever it ran, and two sweeps never write one folder at once. Such a job is a
``NamedTuple`` with a ``folder`` field (the sweep's ``CellJob``); a job without one (the
sweep's comparisons of cells) is sent as it is and locks nothing.

Chains run their tasks one after another, chains of a phase in parallel (up to
``max_parallel``), phases one after another. A worker that dies is retried (as agent tasks
are, :data:`~evalbench.executors.ray_cluster.RETRIES`), then its task is ``Finished`` with
the reason; a task past ``timeout_s`` (counted from its submission) is cancelled on the
cluster and ``Finished`` as timed out; a worker that cannot run ``work`` at all (a module
missing there) raises :class:`~evalbench.executors.RemoteSetupError`. Stopping the iteration
cancels the tasks in flight.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from evalbench import processes
from evalbench.executors.base import RayHints, RemoteSetupError
from evalbench.executors.ray_cluster import RETRIES, RayExecutor, _first_line, _remote_error
from evalbench.runs import RunInUse, lock_run, release_run
from evalbench.settings import ENV_CACHE, ENV_EXECUTOR, ENV_HOME, ENV_MIRROR, ENV_OFFLINE

SHIPPED_ENV = (ENV_HOME, ENV_CACHE, ENV_MIRROR, ENV_OFFLINE)
"""Settings a cell needs as the driver has them (paths: same on the workers, or shared)."""
LOCK_POLL_S = 0.2
_SKIP = (".lock", ".lock.owner")  # the driver's lock files stay the driver's


class _Slot:
    """A chain in flight: its remaining tasks and the current task's Ray reference."""

    def __init__(self, chain: Sequence[Any]):
        self.chain = deque(chain)
        self.task: Any = None
        self.ref: Any = None
        self.submitted = 0.0
        self.lost: list[str] = []


class RayCells:
    """Runs a sweep's plan on the cluster (see the module docstring).

    Args:
        executor: the connected :class:`~evalbench.executors.ray_cluster.RayExecutor`.
        max_parallel: tasks in flight at once.
        finished: the sweep's ``Finished(cell, value, error, wall_s)`` type.
        hints: what one cell needs from the cluster (default: one CPU).
    """

    def __init__(
        self,
        executor: RayExecutor,
        max_parallel: int,
        finished: Callable[..., Any],
        hints: RayHints | None = None,
    ):
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, got {max_parallel}")
        self.executor, self.max_parallel, self.finished = executor, max_parallel, finished
        self.hints = hints or RayHints()
        self.nodes: set[str] = set()
        """The nodes that computed cells (for the manifest)."""
        self.retried = 0
        self.tasks = 0

    def manifest(self) -> dict[str, Any]:
        """What the sweep's ``manifest.json`` says of where its tasks ran."""
        return {**self.executor.manifest(), "tasks": self.tasks, "retried": self.retried,
                "nodes": sorted(self.nodes)}  # fmt: skip

    def run(
        self, phases: Sequence[Any], work: Callable[[Any], Any], *, timeout_s: float
    ) -> Iterator[Any]:
        """Every task of ``phases``, each ``Finished`` as it finishes."""
        for phase in phases:
            yield from self._phase([c for c in phase if c], work, timeout_s)

    def _phase(
        self, chains: list[Any], work: Callable[[Any], Any], timeout_s: float
    ) -> Iterator[Any]:
        pending = deque(_Slot(chain) for chain in chains)
        busy: list[_Slot] = []
        try:
            while pending or busy:
                while pending and len(busy) < self.max_parallel:
                    slot = pending.popleft()
                    yield from self._next(slot, work, timeout_s)
                    if slot.ref is not None:
                        busy.append(slot)
                for slot, done in self._wait(busy, work, timeout_s):
                    yield done
                    yield from self._next(slot, work, timeout_s)
                    if slot.ref is None:
                        busy.remove(slot)
        finally:
            for slot in busy:  # stopped early (or failed): nothing keeps running
                self._cancel(slot)

    def _next(self, slot: _Slot, work: Callable[[Any], Any], timeout_s: float) -> Iterator[Any]:
        """Send the chain's next task (``slot.ref`` stays ``None`` when the chain is done);
        a task whose folder another sweep holds past ``timeout_s`` ends at once, unsent."""
        slot.ref = None
        while slot.chain:
            slot.task, slot.lost = slot.chain.popleft(), []
            try:
                _lock(_folder(slot.task.job), time.monotonic() + timeout_s)
            except RunInUse as exc:
                yield self.finished(slot.task.cell, None, f"RunInUse: {exc}", timeout_s)
                continue
            self._submit(slot, work)
            return

    def _submit(self, slot: _Slot, work: Callable[[Any], Any]) -> None:
        job = slot.task.job
        files = _read_folder(_folder(job))
        settings = {name: os.environ[name] for name in SHIPPED_ENV if name in os.environ}
        slot.ref = self.executor.submit(compute_remotely, work, job, files, settings,
                                        hints=self.hints)  # fmt: skip
        slot.submitted = time.monotonic()

    def _wait(
        self, busy: list[_Slot], work: Callable[[Any], Any], timeout_s: float
    ) -> list[tuple[_Slot, Any]]:
        """The slots whose task ended (finished, lost for good, timed out), with their
        ``Finished``; lost tasks with attempts left are sent again."""
        ray = self.executor._ray
        deadline = min(slot.submitted + timeout_s for slot in busy)
        wait_s = max(0.0, min(1.0, deadline - time.monotonic()))
        ready, _ = ray.wait([slot.ref for slot in busy], num_returns=1, timeout=wait_s)
        out = []
        for slot in busy:
            if slot.ref in ready:
                done = self._collect(slot, work)
                if done is not None:
                    out.append((slot, done))
            elif time.monotonic() >= slot.submitted + timeout_s:
                self._cancel(slot)
                why = f"timed out after {timeout_s:g} s (sweep.cell_timeout_s); stopped"
                out.append((slot, self._end(slot, None, why, timeout_s)))
        return out

    def _collect(self, slot: _Slot, work: Callable[[Any], Any]) -> Any:
        """The task's ``Finished`` (its files written into its folder), or ``None`` when it
        was lost and sent again."""
        ray = self.executor._ray
        try:
            node, (value, error, wall, files) = ray.get(slot.ref)
        except self.executor.lost_errors as exc:
            slot.lost.append(_first_line(exc))
            if len(slot.lost) <= RETRIES:
                self.retried += 1
                self._submit(slot, work)
                return None
            why = (f"lost: the Ray worker running it died on all {len(slot.lost)} attempts "
                   f"(last: {slot.lost[-1]})")  # fmt: skip
            return self._end(slot, None, why, time.monotonic() - slot.submitted)
        except ray.exceptions.RayError as exc:
            _release(_folder(slot.task.job))
            raise RemoteSetupError(
                f"a Ray worker cannot compute sweep cells: {_remote_error(exc)}"
            ) from None
        self.nodes.add(node)
        self.tasks += 1
        if (folder := _folder(slot.task.job)) is not None:
            _write_folder(folder, files)
        return self._end(slot, value, error, wall)

    def _end(self, slot: _Slot, value: Any, error: str | None, wall: float) -> Any:
        _release(_folder(slot.task.job))
        return self.finished(slot.task.cell, value, error, wall)

    def _cancel(self, slot: _Slot) -> None:
        if slot.ref is not None:
            self.executor._ray.cancel(slot.ref, force=True)
            _release(_folder(slot.task.job))
            slot.ref = None


def _folder(job: Any) -> Path | None:
    """The run folder a job computes in (``None``: it has none)."""
    folder = getattr(job, "folder", None)
    return None if folder is None else Path(folder)


def _release(folder: Path | None) -> None:
    if folder is not None:
        release_run(folder)


def _lock(folder: Path | None, deadline: float) -> None:
    """The cell folder's lock for this process (waiting while another sweep holds it)."""
    while folder is not None:
        try:
            lock_run(folder)
            return
        except RunInUse:
            if time.monotonic() > deadline:
                raise
            time.sleep(LOCK_POLL_S)


def _read_folder(folder: Path | None) -> dict[str, bytes]:
    """Every file of a run folder by relative path (the driver's lock files left out)."""
    if folder is None or not folder.is_dir():
        return {}
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in _SKIP and not path.name.endswith(".tmp")
    }


def _write_folder(folder: Path, files: dict[str, bytes]) -> None:
    """Make ``folder`` hold exactly ``files`` (besides its lock files), each file replaced
    at once (a reader sees the old one or the new one)."""
    for stale in set(_read_folder(folder)) - set(files):
        (folder / stale).unlink(missing_ok=True)
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
        tmp.write_bytes(content)
        tmp.replace(path)


def compute_remotely(
    work: Callable[[Any], Any], job: Any, files: dict[str, bytes], settings: dict[str, str]
) -> tuple[Any, str | None, float, dict[str, bytes]]:
    """On a worker: ``work(job)`` in a private copy of the job's folder; returns its value
    (or its error, one line), the seconds it took and the folder's files afterwards."""
    os.environ.update(settings)
    os.environ[ENV_EXECUTOR] = "local"  # a cell's own agents run in this worker
    root = settings.get(ENV_HOME)
    if root and root not in sys.path:
        sys.path.insert(0, root)
    base = processes.scratch_dir("evalbench-cell-")  # goes with this worker, however it ends
    folder = None if _folder(job) is None else base / Path(job.folder).name
    try:
        if folder is not None:
            _write_folder(folder, files)
            job = job._replace(folder=folder)
        started = time.perf_counter()
        try:
            value, error = work(job), None
        except Exception as exc:  # the cell failed: its error is the result
            value, error = None, f"{type(exc).__name__}: {_first_line(exc)}"
        return value, error, time.perf_counter() - started, _read_folder(folder)
    finally:
        processes.discard(base)
