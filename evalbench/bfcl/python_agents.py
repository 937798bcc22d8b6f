"""Users' Python agents on BFCL's multi-turn items: turn by turn, each call run by evalbench.

A system ``provider: python`` with ``entrypoint: "package.module:function"`` is called once
per turn as ``function(turn, call)``:

- ``turn`` is a dict: ``id`` (the item), ``turn`` (0-based), ``messages`` (the conversation
  so far in OpenAI chat format, this turn's user message last; earlier calls as assistant
  ``tool_calls`` with their ``tool`` results) and ``functions`` (the function docs available
  in this turn, as in the BFCL data; a held-out function joins at its turn);
- ``call(name, arguments)`` runs one call in the item's backends (evalbench's, kept across
  turns) and returns its result as a string (``await call(...)`` in an ``async def`` agent).
  Each call is one step of the official result (``[{name: "<JSON arguments>"}]``) and
  two rows of ``records/steps.jsonl``;
- the function returns the turn's final message (a string, or None), which ends the turn.

Limits (the system's ``limits:``): a call past ``max_steps`` in one turn force-quits the
conversation (the official step limit; 20 by default) and ``call`` raises
:class:`ConversationOver`; past ``max_time_s`` for the whole conversation it is stopped the
same way. Either way the turns played so far are its result (officially
``multi_turn:force_terminated``). An exception the agent raises makes the conversation an
error record (``evalbench:call_failed``, left out of the result files), like a failed model
call. An ``async def`` agent is cancelled at its deadline; a plain function runs in a thread
of the process playing the conversation (evalbench's, or a Ray worker's: :mod:`~.remote`;
its calls execute there), so it is stopped at its next ``call``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from evalbench.agents.types import AgentLimits

from .conversation import Conversation, Reply, ToolCallReply

_NAME = re.compile(r"^[A-Za-z_][\w.]*$")


class ConversationOver(Exception):
    """Raised by ``call`` once the conversation was force-quit (step or time limit)."""


class _Turn:
    """One conversation's ``call`` for one turn (thread-safe: a sync agent calls from its
    thread while the event loop may stop the conversation at its deadline)."""

    def __init__(self, talk: Conversation, lock: threading.Lock, deadline: float):
        self.talk, self.lock, self.deadline, self.turn = talk, lock, deadline, talk.turn

    def __call__(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"call(name, arguments): {name!r} is not a function name")
        if not isinstance(arguments or {}, dict):
            raise TypeError(f"call({name!r}, arguments): arguments must be a dict")
        text = json.dumps(arguments or {})
        with self.lock:
            if time.monotonic() > self.deadline:
                self.talk.stop("max_time_s reached")
            if self.talk.done or self.talk.turn != self.turn:
                raise ConversationOver(f"the conversation on {self.talk.item.id} is over")
            self.talk.receive(Reply(None, (ToolCallReply(name, text),)))
            if self.talk.force_quit:
                raise ConversationOver(
                    f"more than {self.talk.max_steps} calls in turn {self.turn}: force-quit"
                )
            return str(self.talk.messages[-1]["content"])

    async def acall(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """``call`` for an ``async def`` agent."""
        return self(name, arguments)


def turn_input(talk: Conversation) -> dict[str, Any]:
    """What the agent receives for the turn ``talk`` is at (see the module docstring)."""
    messages, _ = talk.request()
    return {"id": talk.item.id, "turn": talk.turn, "messages": messages,
            "functions": talk.docs()}  # fmt: skip


async def converse(fn: Callable[..., Any], talk: Conversation, limits: AgentLimits) -> None:
    """Play every turn of ``talk`` with the agent ``fn`` under ``limits`` (see the module
    docstring); ``talk`` ends done, force-quit, stopped or failed."""
    deadline = time.monotonic() + limits.max_time_s
    lock = threading.Lock()
    for _ in range(len(talk.item.question)):  # one agent call per turn
        if talk.done:
            return
        call = _Turn(talk, lock, deadline)
        try:
            text = await _ask(fn, turn_input(talk), call, deadline)
        except ConversationOver:
            return
        except TimeoutError:
            with lock:
                talk.stop(f"no answer within max_time_s={limits.max_time_s:g}")
            return
        except Exception as exc:  # the agent's own failure: an error record
            talk.fail(f"{type(exc).__name__}: {exc}")
            return
        with lock:
            if not talk.done and talk.turn == call.turn:
                talk.receive(Reply("" if text is None else str(text)))


async def _ask(fn: Callable[..., Any], turn: dict[str, Any], call: _Turn, deadline: float) -> Any:
    remaining = max(deadline - time.monotonic(), 0.0)
    if inspect.iscoroutinefunction(fn):
        return await asyncio.wait_for(fn(turn, call.acall), remaining)
    return await asyncio.wait_for(_in_thread(fn, turn, call), remaining)


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a daemon thread (never joined: one that never returns is left
    behind, stopped at its next ``call``, rather than hanging the study or its exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled at the deadline
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result, error = fn(*args), None
        except Exception as exc:  # the agent's failure, handed to the loop
            result, error = None, exc
        except BaseException as exc:  # SystemExit too: still the agent's, not the study's
            result, error = None, RuntimeError(f"{type(exc).__name__}: {exc}")
        with contextlib.suppress(RuntimeError):  # a closed loop: the study has moved on
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, daemon=True, name="bfcl-python-agent").start()
    return await future
