"""Where users' agents converse on BFCL's multi-turn items: here, or on a Ray cluster.

A Python or command agent's conversation is played whole in one place: the agent (its
function, or its process) and the item's backends, whose state persists across turns, stay
together. With the Ray executor (:func:`evalbench.executors.current`) each conversation is
one remote call (:func:`play_remote`) under the system's limits; the worker returns the
result and steps and the driver writes them, so the driver stays the only writer of the run
folder. A worker that dies is retried (:meth:`~evalbench.executors.ray_cluster.RayExecutor.call`),
then the conversation is an error record saying so; a worker that cannot run the agent at
all (its module or the official backends missing there) stops the study with one
:class:`~evalbench.agents.AgentConfigError`; an interrupt cancels the conversations in
flight on the cluster and leaves them unrecorded, for a rerun. An agent that cannot be sent
to a worker converses here, and the manifest (``executor.ran_here``) and stderr say why.
Chat models and the reference agent are not played here: their calls go through the
driver's client (:mod:`~.study`).
"""

from __future__ import annotations

import asyncio
import pickle
import shutil
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from evalbench import executors
from evalbench.agents import AgentConfigError
from evalbench.agents.runner import enter_project
from evalbench.agents.types import SystemSpec
from evalbench.settings import get_settings

from . import backends
from .command_agents import converse_command
from .conversation import Conversation, Finished
from .python_agents import converse
from .schema import MultiTurnItem

Agent = list[str] | Callable[..., Any]
"""A command agent's ``argv``, or a Python agent's function."""
Play = Callable[[MultiTurnItem], Awaitable[Finished | None]]
"""Plays one item's conversation; ``None``: an interrupt stopped it (not recorded)."""
TICK_S = 0.1  # on a worker, how often the conversation's event loop looks for a cancel


async def converse_here(agent: Agent, spec: SystemSpec, item: MultiTurnItem) -> Finished:
    """Play ``item`` with ``agent`` in this process, under ``spec.limits``."""
    talk = Conversation(item, "tools", model_name=spec.name, max_steps=spec.limits.max_steps)
    if isinstance(agent, list):
        await converse_command(agent, talk, spec.limits)
    else:
        await converse(agent, talk, spec.limits)
    return talk.finished()


async def play_all(
    play: Play,
    spec: SystemSpec,
    items: Sequence[MultiTurnItem],
    done: Callable[[Finished], None],
    stop: threading.Event,
) -> None:
    """Play every item, ``spec.max_concurrency`` conversations at once; ``done(finished)``
    as each one ends (the study records it there). After an interrupt (``stop`` set) none
    starts."""
    slots = asyncio.Semaphore(spec.concurrency_limit)

    async def one(item: MultiTurnItem) -> None:
        async with slots:
            if stop.is_set():
                return
            finished = await play(item)
            if finished is not None:
                done(finished)

    await asyncio.gather(*(one(item) for item in items))


def player(manifest: dict[str, Any], spec: SystemSpec, agent: Agent, stop: threading.Event) -> Play:
    """How ``spec``'s conversations are played: here, or on the cluster the run was asked
    to use (recorded in ``manifest``, the run's ``executor`` entry, as the agents runner
    records it); ``stop`` set cancels remote ones in flight."""
    executor = executors.current()
    if executor is None:
        manifest.setdefault("name", "local")
        return partial(converse_here, agent, spec)
    manifest.update(executor.manifest())
    try:
        return RemoteConversations(executor, manifest, spec, agent, stop)
    except TypeError as exc:
        reason = f"its agent cannot be sent to a worker ({exc})"
        manifest.setdefault("ran_here", {})[spec.name] = reason
        print(f"evalbench: system {spec.name!r} converses in this process, not on Ray: "
              f"{reason}", file=sys.stderr)  # fmt: skip
        return partial(converse_here, agent, spec)


class ConversationJob(NamedTuple):
    """One conversation as a worker gets it."""

    root: str
    """The driver's project root (users' agents import from it)."""
    spec: SystemSpec
    agent: list[str] | bytes
    """A command's ``argv``, or the Python agent serialized once per system."""
    item: MultiTurnItem


class Played(NamedTuple):
    """What a worker sends back of a conversation (:class:`Finished` without the item)."""

    result: list[list[Any]]
    events: list[dict[str, Any]]
    error: str | None
    state: dict[str, Any] | None = None
    """A memory conversation's memory at its end."""


class RemoteConversations:
    """Plays one system's conversations on the cluster (see the module docstring).

    Raises:
        TypeError: the agent cannot be sent to a worker.
        ExecutorError: no node could run a conversation with the system's ``ray:`` hints.
    """

    def __init__(
        self,
        executor: Any,
        manifest: dict[str, Any],
        spec: SystemSpec,
        agent: Agent,
        stop: threading.Event,
    ):
        self.executor, self.spec, self.stop = executor, spec, stop
        self.hints = spec.ray or executors.RayHints()
        executor.check_feasible(self.hints)
        self.agent = agent if isinstance(agent, list) else executor.pack(agent)
        self.root = str(get_settings().project_root)
        self.tally = executors.Tally(manifest, spec.name)

    async def __call__(self, item: MultiTurnItem) -> Finished | None:
        job = ConversationJob(self.root, self.spec, self.agent, item)
        try:
            done = await self.executor.call(play_remote, job, hints=self.hints, stop=self.stop)
        except executors.Stopped:
            return None
        except executors.RemoteLost as exc:
            self.tally.lost(exc.attempts)
            return Finished(item, [], [], f"worker_lost: {exc}")
        except executors.RemoteSetupError as exc:
            raise AgentConfigError(
                f"system {self.spec.name!r}: a Ray worker cannot run its conversations: {exc}. "
                "The workers need the agent's code and packages (see docs/ray.md)"
            ) from None
        self.tally.done(done.attempts, done.node)
        played: Played = done.value
        return Finished(item, played.result, played.events, played.error, state=played.state)


def play_remote(job: ConversationJob) -> Played:
    """On a worker: play one conversation as :func:`converse_here` does in the driver.

    Raises:
        Exception: the worker cannot run the agent (its module, its program or the
            official backends missing there); the driver stops the study on it.
    """
    enter_project(job.root)
    _check_backends(job.item)
    agent = _load_agent(job.agent)
    finished = asyncio.run(_ticking(converse_here(agent, job.spec, job.item)))
    return Played(finished.result, finished.events, finished.error, finished.state)


async def _ticking(conversation: Awaitable[Finished]) -> Finished:
    """``conversation``, with the event loop woken every :data:`TICK_S`: Ray cancels a task
    by interrupting the worker's main thread, which a loop asleep until the agent's next
    line (or ``max_time_s``) would not notice; awake, it ends the conversation at once (its
    cleanup kills the agent's process group) and the worker is not killed."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK_S)

    ticker = asyncio.ensure_future(tick())
    try:
        return await conversation
    finally:
        ticker.cancel()


def _check_backends(item: MultiTurnItem) -> None:
    memory = any(cls in backends.MEMORY_BACKENDS for cls in item.involved_classes)
    if not (backends.memory_available() if memory else backends.available()):
        raise backends.BackendUnavailable(f"the official BFCL backends: {backends.INSTALL_HINT}")


def _load_agent(agent: list[str] | bytes) -> Agent:
    if isinstance(agent, bytes):
        loaded: Callable[..., Any] = pickle.loads(agent)
        return loaded
    if shutil.which(agent[0]) is None and not Path(agent[0]).is_file():
        raise FileNotFoundError(f"program {agent[0]!r} not found on the worker")
    return agent
