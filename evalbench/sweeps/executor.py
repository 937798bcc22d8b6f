"""Where sweep cells run: a small executor interface and the local one (worker processes).

A sweep hands an executor a *plan* and a *work* function. The plan is a list of phases; a
phase is a list of chains; a chain is a list of tasks run one after another (cells that
may ask the same requests: the second finds the first's answers in the response cache).
Chains of a phase run in parallel; the next phase starts when the previous one is done.
Every task comes back exactly once as a :class:`Finished`, with ``work``'s return value or
why there is none (it raised, its process died, it timed out), in the order they finish.

:class:`CellExecutor` is the seam: :class:`LocalExecutor` runs tasks in worker processes on
this machine; another executor (a cluster's) implements the same ``run``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple, Protocol

from evalbench.processes import before_forkserver, exit_with, tie, untie, wait_group_gone


class Task(NamedTuple):
    """One unit of work: a cell id and the (picklable) input of the work function."""

    cell: int
    job: Any


class Finished(NamedTuple):
    """How a task ended: ``value`` returned by the work function, or ``error`` (one line)."""

    cell: int
    value: Any
    error: str | None
    wall_s: float


Chain = Sequence[Task]
Phase = Sequence[Chain]
Work = Callable[[Any], Any]


def plan(jobs: Sequence[Any], shared_cache: bool) -> list[list[list[Task]]]:
    """The executor's plan of a sweep's cell jobs (``job.cell``: its ``id``, ``config``,
    ``baseline``). Simulated and own-agent systems share nothing: one phase, each cell
    alone. Systems behind an endpoint share the response cache: the baseline configuration's
    cells first, one after another, then each configuration's cells one after another (its
    seeds often ask the same requests), configurations in parallel; so a request a cell shares
    with the baseline or with its own seeds is paid once."""
    tasks = [Task(job.cell.id, job) for job in jobs]
    if not shared_cache:
        return [[[task] for task in tasks]]
    chains: dict[int, list[Task]] = {}
    for job, task in zip(jobs, tasks, strict=True):
        chains.setdefault(job.cell.config, []).append(task)
    first = [chain for chain in chains.values() if chain[0].job.cell.baseline]
    rest = [chain for chain in chains.values() if not chain[0].job.cell.baseline]
    return [first, rest] if rest else [first]


class CellExecutor(Protocol):
    """Runs a plan of tasks (see the module docstring)."""

    def run(self, phases: Sequence[Phase], work: Work, *, timeout_s: float) -> Iterator[Finished]:
        """Run every task of ``phases`` with ``work`` (at most ``timeout_s`` seconds each),
        yielding each as it finishes; stopping the iteration early stops the tasks running."""
        ...


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message``."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".strip().rstrip(":")


STARTED = "started"
"""What a worker sends when it starts a task (then its ``Finished``)."""
START_LIMIT_S = 300.0
"""A worker that has not started its task this long after it was sent (a hung start) fails
the task."""


class Start(NamedTuple):
    """What a worker starts from: the parent's environment, folder and import path now (a
    forkserver's own are those of when it started), and the setup to call."""

    environ: dict[str, str]
    cwd: str
    path: list[str]
    setup: Callable[[], None] | None
    parent: int
    """The process that started the worker (not the forkserver): the worker ends with it."""


def _serve(conn: Connection, start: Start) -> None:
    """A worker: run tasks from ``conn`` until told to stop (``None``) or the pipe closes."""
    os.setsid()  # its own process group: a timeout kills it with whatever it started
    exit_with(start.parent)  # and so does its parent's end, even when its watchdog died too
    os.environ.clear()
    os.environ.update(start.environ)
    os.chdir(start.cwd)
    sys.path[:] = start.path
    if start.setup is not None:
        start.setup()
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        work, task = message
        conn.send(STARTED)  # the task's clock starts now, not while this worker was starting
        started = time.perf_counter()
        try:
            value, error = work(task.job), None
        except Exception as exc:  # the cell failed: its error is the result, the worker lives
            value, error = None, one_line(exc)
        wall = time.perf_counter() - started
        try:
            conn.send(Finished(task.cell, value, error, wall))
        except Exception as exc:  # an unpicklable value: say so instead of hanging the parent
            conn.send(Finished(task.cell, None, f"result not sendable: {one_line(exc)}", wall))


class _Slot:
    """A worker process and the chain it is working through."""

    def __init__(self, process: Any, conn: Connection):
        self.process, self.conn = process, conn
        self.chain: deque[Task] = deque()
        self.task: Task | None = None
        self.sent = 0.0
        self.started: float | None = None
        """When the worker started the task (``None``: sent, not started yet)."""

    def deadline(self, timeout_s: float) -> float:
        """When the task times out (or, not started yet, when its worker is given up on)."""
        if self.started is None:
            return self.sent + START_LIMIT_S
        return self.started + timeout_s


class LocalExecutor:
    """Up to ``max_parallel`` worker processes on this machine, reused for every task. They
    fork from Python's forkserver, which imports this module and ``preload`` once per process
    that uses it (the second sweep of a kernel starts its workers at once); each starts with this
    process's environment, folder and import path, then calls ``setup``. A task past its
    timeout, or whose process dies, is ``Finished`` with the reason and its worker replaced;
    the rest of its chain goes on. Workers die with this process, even when it is killed
    with ``kill -9`` (:mod:`evalbench.processes`)."""

    def __init__(
        self,
        max_parallel: int,
        setup: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
    ):
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, got {max_parallel}")
        self.max_parallel = max_parallel
        self.setup = setup
        self._context = multiprocessing.get_context("forkserver")
        # read only when the forkserver starts (its first use in this process); a worker runs
        # this module's _serve, so it is always among them
        self._context.set_forkserver_preload([__name__, *preload])

    def run(self, phases: Sequence[Phase], work: Work, *, timeout_s: float) -> Iterator[Finished]:
        """See :class:`CellExecutor`; workers are stopped when the iteration ends (killed at
        once when it ends early: an interrupt, or the consumer stopping)."""
        slots: list[_Slot] = []
        completed = False
        try:
            widest = max((sum(1 for chain in phase if chain) for phase in phases), default=0)
            for _ in range(min(self.max_parallel, widest)):  # all start (import) at once
                self._start(slots)
            for phase in phases:
                yield from self._phase(phase, work, timeout_s, slots)
            completed = True
        finally:
            _stop(slots, graceful=completed)

    def _phase(
        self, phase: Phase, work: Work, timeout_s: float, slots: list[_Slot]
    ) -> Iterator[Finished]:
        pending = deque(deque(chain) for chain in phase if chain)
        idle = list(slots)
        busy: list[_Slot] = []
        while pending or busy:
            while pending and len(busy) < self.max_parallel:
                slot = idle.pop() if idle else self._start(slots)
                slot.chain = pending.popleft()
                _next(slot, work)
                busy.append(slot)
            for slot, finished in _wait(busy, timeout_s):
                yield finished
                if finished.error is not None and slot.task is not None:  # died or timed out
                    busy.remove(slot)
                    slots.remove(slot)
                    _kill(slot)
                    if slot.chain:
                        pending.appendleft(slot.chain)
                elif slot.chain:
                    _next(slot, work)
                else:
                    busy.remove(slot)
                    idle.append(slot)

    def _start(self, slots: list[_Slot]) -> _Slot:
        main = sys.modules["__main__"]
        if not hasattr(main, "__spec__"):  # a kernel's namespace after %reset (make report's
            main.__spec__ = None  # warm kernels): multiprocessing reads it; None: no main to run
        before_forkserver()  # it and every worker carry this process's mark
        parent, child = self._context.Pipe()
        start = Start(dict(os.environ), os.getcwd(), list(sys.path), self.setup, os.getpid())
        process = self._context.Process(target=_serve, args=(child, start), daemon=False)
        process.start()
        assert process.pid is not None  # set by start()
        tie(process.pid)  # the worker and its group die with this process, even by kill -9
        child.close()
        slot = _Slot(process, parent)
        slots.append(slot)
        return slot


def _next(slot: _Slot, work: Work) -> None:
    slot.task = slot.chain.popleft()
    slot.sent, slot.started = time.monotonic(), None
    slot.conn.send((work, slot.task))


def _wait(busy: list[_Slot], timeout_s: float) -> list[tuple[_Slot, Finished]]:
    """The busy slots that finished a task, died or timed out (each with its ``Finished``;
    ``slot.task`` stays set for a slot whose worker must be replaced)."""
    deadline = min(slot.deadline(timeout_s) for slot in busy)
    ready = wait(
        [s.conn for s in busy] + [s.process.sentinel for s in busy],
        timeout=max(0.0, deadline - time.monotonic()),
    )
    out = []
    for slot in list(busy):
        task = slot.task
        assert task is not None
        if slot.conn in ready:
            with contextlib.suppress(EOFError, OSError):
                message = slot.conn.recv()
                if message == STARTED:
                    slot.started = time.monotonic()
                else:
                    slot.task = None
                    out.append((slot, message))
                continue
        wall = time.monotonic() - (slot.started or slot.sent)
        if slot.conn in ready or slot.process.sentinel in ready:
            slot.process.join(1.0)
            why = f"its worker process died (exit code {slot.process.exitcode})"
            out.append((slot, Finished(task.cell, None, why, wall)))
        elif time.monotonic() >= slot.deadline(timeout_s):
            why = f"timed out after {timeout_s:g} s (sweep.cell_timeout_s); stopped"
            if slot.started is None:
                why = f"its worker process did not start within {START_LIMIT_S:g} s"
            out.append((slot, Finished(task.cell, None, why, wall)))
    return out


def _kill(slot: _Slot) -> None:
    """Kill a worker and its process group (what its cell started), reap it and wait (briefly:
    SIGKILL lands asynchronously) until nothing of the group runs."""
    pid = slot.process.pid
    if pid is not None and slot.process.is_alive():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            slot.process.kill()
    slot.process.join(5.0)
    if pid is not None:
        wait_group_gone(pid)
        untie(pid)
    slot.conn.close()


def _stop(slots: list[_Slot], *, graceful: bool) -> None:
    """Stop every worker: ask idle ones to end (``graceful``), kill the rest."""
    if graceful:
        for slot in slots:
            with contextlib.suppress(OSError, ValueError):
                slot.conn.send(None)
        for slot in slots:
            slot.process.join(2.0)
    for slot in slots:
        _kill(slot)
