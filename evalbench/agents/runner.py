"""Run an agent over a study's tasks: resumable, bounded, every step recorded as it happens.

:func:`run_agents` is the one entry point a study calls for an agent system. It writes
``records/steps.jsonl`` (one line per step, flushed as the step ends) and
``records/agent_runs.jsonl`` (one line per task: end state, answer, counts, time, tokens,
cost). A rerun skips tasks that ended; a task whose last run ended in ``error`` (a crash, a
failed model call) is run again, and a task left half-done by a killed or interrupted run
(Ctrl-C and SIGTERM stop the tasks in flight at once) loses its partial steps first, so
every task has exactly one record and one trajectory.

With the Ray executor (:mod:`evalbench.executors`) each task runs on a worker of the cluster
(:func:`run_remote`: the task's inputs and attachment copies travel with it, the same limits
apply there) and returns its record and steps, which this process writes: the driver stays
the only writer of the run folder, so resume, usage and the progress bar are unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pickle
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from evalbench import executors, processes
from evalbench.measured import TRUNCATED
from evalbench.models.client import run_sync
from evalbench.models.progress import STOP, NotSent, progress_bar
from evalbench.models.types import ChatResponse, Usage
from evalbench.runs import Run
from evalbench.settings import ENV_HOME, get_settings

from .types import AgentRunRecord, AgentTask, EndState, StepRecord, SystemSpec

CLIP = 2000  # characters of arguments / results kept per step record
STOP_POLL_S = 0.1  # how often a task in flight looks for an interrupt


class TaskInput(NamedTuple):
    """One task for an agent, with what only the harness (and the simulator) may see."""

    task: AgentTask
    files: dict[str, Path]
    """Attachment name -> the original file (the agent gets copies)."""
    attempt: int = 0
    level: Any = None
    """The task's level/slice (the simulator's knobs depend on it)."""
    truth: Any = None
    """The expected answer: for the simulator only, never sent to an agent."""

    @property
    def key(self) -> str:
        """``<task id>#<attempt>``: the record key."""
        return f"{self.task.id}#{self.attempt}"


class Outcome(NamedTuple):
    """How a backend ended one task."""

    state: EndState
    answer: str | None = None
    error: str | None = None
    detail: str | None = None
    cost_usd: float | None = None
    cached: bool = False
    wall_s: float | None = None
    """Simulated agents: the simulated wall time (else the measured one is recorded)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    """Task totals a user's agent reported (else the sums over its steps)."""


class Recorder:
    """Collects one task's steps and appends each to ``steps.jsonl`` as it ends."""

    def __init__(self, store: Any, system: str, item: TaskInput):
        self.store, self.system, self.item = store, system, item
        self.steps: list[StepRecord] = []

    def step(self, kind: Literal["model", "tool"], **fields: Any) -> StepRecord:
        """Record one step (arguments, result and error clipped to :data:`CLIP` characters)."""
        for name in ("arguments", "result", "error"):
            if fields.get(name) is not None:
                fields[name] = clip(str(fields[name]))
        record = StepRecord(
            system=self.system,
            task_id=self.item.task.id,
            attempt=self.item.attempt,
            step=len(self.steps),
            kind=kind,
            **fields,
        )
        self.store.append(record)
        self.steps.append(record)
        return record

    def tokens(self) -> tuple[int, int]:
        """Prompt and completion tokens of the steps so far."""
        prompt = sum(s.prompt_tokens or 0 for s in self.steps)
        return prompt, sum(s.completion_tokens or 0 for s in self.steps)


Backend = Callable[[TaskInput, Recorder, Path], Any]
"""``async backend(item, recorder, workdir) -> Outcome``."""
Execute = Callable[[TaskInput], Awaitable[AgentRunRecord | None]]
"""Runs one task and writes its steps; its record (``None``: interrupted, not recorded)."""


class AgentConfigError(ValueError):
    """An agent system that cannot start (entrypoint not importable, program not found,
    or a worker of the cluster that cannot run it)."""


def clip(text: str, limit: int = CLIP) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]} … [{len(text) - limit} more chars]"


def run_agents(
    run: Run,
    spec: SystemSpec,
    items: Sequence[TaskInput],
    *,
    backend: Backend,
    progress: bool = True,
) -> dict[str, AgentRunRecord]:
    """Run ``spec`` on every task not done yet; returns task key -> its record, for all.

    Args:
        run: the open :class:`evalbench.runs.Run`.
        spec: the agent system.
        items: its tasks (keys unique).
        backend: how the agent runs one task (:func:`evalbench.agents.backend_for`).
        progress: show a progress bar (tasks, errors, timeouts).
    """
    runs = run.store("agent_runs", ("system", "key"))
    steps = run.store("steps", ("system", "task_id", "attempt", "step"))
    wanted = {item.key for item in items}
    if len(wanted) != len(items):
        raise ValueError(f"{spec.name}: task keys are not unique")
    runs.drop_where(lambda r: r["system"] == spec.name and r["state"] == "error")
    done = {r["key"] for r in runs.rows() if r["system"] == spec.name}
    steps.drop_where(  # partial trajectories of tasks a killed run left unfinished
        lambda r: r["system"] == spec.name and f"{r['task_id']}#{r['attempt']}" not in done
    )
    todo = [item for item in items if item.key not in done]
    if todo:
        execute = _executor_for(run, spec, backend, steps)
        run_sync(_run_all(spec, todo, execute, backend, runs, progress))
    rows = [r for r in runs.rows() if r["system"] == spec.name and r["key"] in wanted]
    return {r["key"]: AgentRunRecord.model_validate(r) for r in rows}


async def _run_all(
    spec: SystemSpec,
    todo: Sequence[TaskInput],
    execute: Execute,
    backend: Backend,
    runs: Any,
    progress: bool,
) -> None:
    bar = progress_bar()(total=len(todo), desc=spec.name, disable=not progress)
    states: dict[str, int] = {}
    pending = iter(todo)

    async def worker() -> None:
        for item in pending:
            if STOP.is_set():  # interrupted: start no new task
                return
            record = await execute(item)
            if record is None:  # interrupted mid-task: not recorded, a rerun runs it again
                return
            runs.append(record)
            states[record.state] = states.get(record.state, 0) + 1
            bar.set_postfix(**states, refresh=False)
            bar.update(1)

    try:
        limit = spec.concurrency_limit  # an int; `auto` resolves to its ceiling
        await asyncio.gather(*(worker() for _ in range(min(len(todo), limit))))
    finally:
        bar.close()
        close = getattr(backend, "aclose", None)  # the reference agent's HTTP client
        if close is not None:
            await close()


async def run_one(
    spec: SystemSpec, item: TaskInput, backend: Backend, recorder: Recorder
) -> AgentRunRecord | None:
    """Run one task under its time limit in a private working dir; never raises for the
    agent's failures (they end ``error``, with the exception's type and message). An
    interrupt (:data:`STOP`) stops the task at once and returns None: it is not recorded."""
    from .tools import prepare_workdir

    limits = item.task.limits
    started = time.perf_counter()
    workdir, copies = prepare_workdir(item.files)
    task = item.task.model_copy(update={"attachments": [str(p) for p in copies.values()]})
    try:
        outcome = await _bounded(backend(item._replace(task=task), recorder, workdir), limits)
    except TimeoutError:
        outcome = Outcome("timeout", detail=f"no answer within max_time_s={limits.max_time_s:g}")
    except Interrupted:
        return None
    except Exception as exc:  # the agent's own failure: an error record, nothing else lost
        outcome = Outcome("error", error=f"{type(exc).__name__}: {exc}")
    finally:
        processes.discard(workdir)
    wall = outcome.wall_s if outcome.wall_s is not None else time.perf_counter() - started
    return _record(spec, item, _within_limits(outcome, recorder, limits), recorder, wall)


class Interrupted(Exception):
    """An interrupt (Ctrl-C, SIGTERM) stopped a task in flight."""


async def _bounded(coro: Any, limits: Any) -> Outcome:
    """``coro``'s outcome; TimeoutError past ``max_time_s``, :class:`Interrupted` once
    :data:`STOP` is set. Either way it is cancelled first (which kills an agent's process)."""
    task, watch = asyncio.ensure_future(coro), asyncio.ensure_future(_until_stop())
    try:
        done, _ = await asyncio.wait(
            {task, watch}, timeout=limits.max_time_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for future in (task, watch):
            future.cancel()
        await asyncio.gather(task, watch, return_exceptions=True)
    if task in done:
        try:
            return task.result()
        except NotSent:  # its model call was stopped before it left: the interrupt
            raise Interrupted from None
    raise Interrupted if watch in done else TimeoutError


async def _until_stop() -> None:
    while not STOP.is_set():
        await asyncio.sleep(STOP_POLL_S)


def _within_limits(outcome: Outcome, recorder: Recorder, limits: Any) -> Outcome:
    """A reported trajectory over the step or token budget ends ``step_limit``."""
    if outcome.state != "answered":
        return outcome
    model_steps = sum(s.kind == "model" for s in recorder.steps) or len(recorder.steps)
    if model_steps > limits.max_steps:
        return outcome._replace(state="step_limit", detail=f"{model_steps} steps > max_steps")
    used = sum(recorder.tokens())
    if outcome.prompt_tokens is not None or outcome.completion_tokens is not None:
        used = (outcome.prompt_tokens or 0) + (outcome.completion_tokens or 0)
    if limits.max_tokens is not None and used > limits.max_tokens:
        return outcome._replace(state="step_limit", detail=f"{used} tokens > max_tokens")
    return outcome


def _record(
    spec: SystemSpec, item: TaskInput, outcome: Outcome, recorder: Recorder, wall: float
) -> AgentRunRecord:
    tools = [s for s in recorder.steps if s.kind == "tool"]
    counts: dict[str, int] = {}
    for step in tools:
        counts[step.tool or "?"] = counts.get(step.tool or "?", 0) + 1
    prompt, completion = recorder.tokens()
    if outcome.prompt_tokens is not None or outcome.completion_tokens is not None:
        prompt, completion = outcome.prompt_tokens or 0, outcome.completion_tokens or 0
    return AgentRunRecord(
        system=spec.name,
        key=item.key,
        task_id=item.task.id,
        attempt=item.attempt,
        state=outcome.state,
        answer=outcome.answer,
        error=outcome.error,
        detail=outcome.detail,
        steps=len(recorder.steps),
        tool_calls=len(tools),
        tool_counts=counts,
        tool_errors=sum(s.error is not None for s in tools),
        truncated_steps=sum(s.finish_reason == TRUNCATED for s in recorder.steps),
        wall_s=round(wall, 4),
        prompt_tokens=prompt or None,
        completion_tokens=completion or None,
        cost_usd=outcome.cost_usd,
        cached=outcome.cached,
        simulated=spec.simulated,
    )


# --- where tasks run: this process, or workers of a Ray cluster ------------------------------


def _executor_for(run: Run, spec: SystemSpec, backend: Backend, steps: Any) -> Execute:
    """How this system's tasks run: in this process, or on the cluster the run was asked
    to use (:func:`evalbench.executors.current`). A backend that cannot be sent to a worker
    (the browse suite's local web lives in this process) runs here, and the manifest and a
    line on stderr say so."""

    def local(item: TaskInput) -> Awaitable[AgentRunRecord | None]:
        return run_one(spec, item, backend, Recorder(steps, spec.name, item))

    executor = executors.current()
    if executor is None:
        run.executor.setdefault("name", "local")
        return local
    run.executor.update(executor.manifest())
    try:
        return RemoteTasks(executor, run, spec, backend, steps)
    except TypeError as exc:
        reason = f"its backend cannot be sent to a worker ({exc})"
        run.executor.setdefault("ran_here", {})[spec.name] = reason
        print(f"evalbench: system {spec.name!r} runs in this process, not on Ray: {reason}",
              file=sys.stderr)  # fmt: skip
        return local


class RemoteJob(NamedTuple):
    """One task as a worker gets it: its inputs, never the driver's state."""

    root: str
    """The driver's project root (user agents import from it)."""
    spec: SystemSpec
    backend: bytes
    """The backend, serialized once per system (:meth:`RayExecutor.pack`)."""
    task: AgentTask
    attachments: dict[str, bytes]
    """Attachment name -> its content (the worker makes the agent's copies)."""
    attempt: int
    level: Any
    truth: Any


class RemoteResult(NamedTuple):
    """What a worker sends back: the task's record and steps (as dicts), or why it could
    not run the task at all."""

    record: dict[str, Any] | None
    steps: list[dict[str, Any]]
    setup_error: str | None = None


class RemoteTasks:
    """Runs one system's tasks on the cluster; writes what comes back (steps, then the
    record, as a local task would), so the run folder has one writer.

    Raises:
        TypeError: the backend cannot be sent to a worker.
        ExecutorError: no node could run a task with the system's ``ray:`` hints.
    """

    def __init__(self, executor: Any, run: Run, spec: SystemSpec, backend: Backend, steps: Any):
        self.executor, self.run, self.spec, self.steps = executor, run, spec, steps
        self.hints = getattr(spec, "ray", None) or executors.RayHints()
        executor.check_feasible(self.hints)
        self.backend = executor.pack(backend)
        self.root = str(get_settings().project_root)
        self.tally = executors.Tally(run.executor, spec.name)

    async def __call__(self, item: TaskInput) -> AgentRunRecord | None:
        attachments = {name: Path(path).read_bytes() for name, path in item.files.items()}
        job = RemoteJob(self.root, self.spec, self.backend, item.task, attachments,
                        item.attempt, item.level, item.truth)  # fmt: skip
        started = time.perf_counter()
        try:
            done = await self.executor.call(run_remote, job, hints=self.hints, stop=STOP)
        except executors.Stopped:
            return None
        except executors.RemoteLost as exc:
            self.tally.lost(exc.attempts)
            outcome = Outcome("error", error=f"worker_lost: {exc}")
            recorder = Recorder([], self.spec.name, item)
            return _record(self.spec, item, outcome, recorder, time.perf_counter() - started)
        except executors.RemoteSetupError as exc:
            raise self._setup_error(str(exc)) from None
        result: RemoteResult = done.value
        if result.setup_error is not None:
            raise self._setup_error(f"{result.setup_error} (on node {done.node})")
        self.tally.done(done.attempts, done.node)
        if result.record is None:  # interrupted on the worker: not recorded
            return None
        self.steps.extend(result.steps)
        if self.spec.provider == "agent":
            _count_model_calls(self.run, self.spec, result.steps)
        return AgentRunRecord.model_validate(result.record)

    def _setup_error(self, reason: str) -> AgentConfigError:
        return AgentConfigError(
            f"system {self.spec.name!r}: a Ray worker cannot run its tasks: {reason}. The "
            "workers need the agent's code and packages (see docs/ray.md)"
        )


def _count_model_calls(run: Run, spec: SystemSpec, steps: list[dict[str, Any]]) -> None:
    """The reference agent's model calls made on a worker, in this run's usage ledger."""
    chat = spec.chat_spec()
    for step in (s for s in steps if s["kind"] == "model"):
        usage = Usage(
            prompt_tokens=step["prompt_tokens"], completion_tokens=step["completion_tokens"]
        )
        cached = bool(step["cached"])
        response = ChatResponse(
            system=chat.name, usage=usage, cached=cached, error=step["error"],
            latency_s=step["latency_s"] or 0.0, attempts=int(not cached),
        )  # fmt: skip
        run.ledger.record(chat, response)


_BACKENDS: dict[str, Backend] = {}  # on a worker: backends already unpacked, by digest
_KEEP_BACKENDS = 16


def run_remote(job: RemoteJob) -> RemoteResult:
    """On a worker: run one task as :func:`run_one` does here, in a private folder with
    copies of its attachments, under its limits. A backend that cannot be loaded there (a
    module missing on the worker) is a ``setup_error``, not a record."""
    enter_project(job.root)
    try:
        backend = _load_backend(job.backend)
    except Exception as exc:  # the worker lacks what the agent needs: the caller stops
        return RemoteResult(None, [], f"{type(exc).__name__}: {exc}")
    inputs = processes.scratch_dir("evalbench-inputs-")  # goes with this worker, however
    try:
        files = {}
        for index, (name, content) in enumerate(job.attachments.items()):
            files[name] = inputs / str(index)
            files[name].write_bytes(content)
        item = TaskInput(job.task, files, job.attempt, job.level, job.truth)
        steps: list[StepRecord] = []
        record = asyncio.run(
            _run_closing(job.spec, item, backend, Recorder(steps, job.spec.name, item))
        )
    finally:
        processes.discard(inputs)
    rows = [s.model_dump(mode="json") for s in steps]
    return RemoteResult(None if record is None else record.model_dump(mode="json"), rows)


async def _run_closing(
    spec: SystemSpec, item: TaskInput, backend: Backend, recorder: Recorder
) -> AgentRunRecord | None:
    try:
        return await run_one(spec, item, backend, recorder)
    finally:
        close = getattr(backend, "aclose", None)  # its HTTP client belongs to this loop
        if close is not None:
            await close()


def enter_project(root: str) -> None:
    """The driver's project root as this process's (its agents import from it)."""
    os.environ[ENV_HOME] = root
    if root not in sys.path:
        sys.path.insert(0, root)


def _load_backend(blob: bytes) -> Backend:
    digest = hashlib.sha256(blob).hexdigest()
    if digest not in _BACKENDS:
        if len(_BACKENDS) >= _KEEP_BACKENDS:
            _BACKENDS.pop(next(iter(_BACKENDS)))
        _BACKENDS[digest] = pickle.loads(blob)
    return _BACKENDS[digest]
