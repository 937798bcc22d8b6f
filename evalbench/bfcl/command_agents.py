"""Users' command agents on BFCL's multi-turn items: one process per conversation, JSON lines.

A system ``provider: command`` with ``argv: [program, args...]`` is started once per
multi-turn item (no shell, in a private temporary folder, in a process group of its own and,
where PID namespaces are available, a PID namespace of its own, as GAIA's command agents) and
converses over stdin/stdout, one JSON object per line:

- evalbench writes ``{"turn": {...}}`` at the start of each turn (the same dict a Python
  agent receives: ``id``, ``turn``, ``messages``, ``functions``; see :mod:`~.python_agents`);
- the agent writes ``{"call": name, "arguments": {...}}`` to run one call in the item's
  backends (evalbench's, kept across turns); evalbench answers ``{"result": "<string>"}``;
- the agent writes ``{"answer": text}`` (a string or null) to end the turn;
- after the last turn, or when the conversation is stopped, evalbench closes stdin and
  kills the process group (and with it the namespace: descendants that called setsid() too).

Limits (the system's ``limits:``) are the Python agents': a call past ``max_steps`` in one
turn force-quits the conversation (evalbench writes ``{"over": reason}`` first), and past
``max_time_s`` for the whole conversation it is stopped; either way the turns played so far
are its result (officially ``multi_turn:force_terminated``). A line that is not such an
object, a line longer than :data:`MAX_LINE_BYTES`, or the program exiting before it answered
makes the conversation an error record naming it (``evalbench:call_failed``, left out of the
result files, played again on a rerun). Whatever the agent writes to stderr is kept only to
explain an exit (its last :data:`STDERR_TAIL` characters).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
from typing import Any

from evalbench import processes
from evalbench.agents.backends import contained
from evalbench.agents.types import AgentLimits
from evalbench.processes import group_running

from .conversation import Conversation, Reply, ToolCallReply
from .python_agents import turn_input

MAX_LINE_BYTES = 1_000_000
"""The longest line an agent may write (a call's arguments, an answer)."""
STDERR_TAIL = 500
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_EXPECTED = '(expected {"call": name, "arguments": {...}} or {"answer": text})'


class AgentOutputError(Exception):
    """The agent broke the protocol or exited: the conversation's error."""


class _Lines:
    """The agent's stdout, one validated message at a time (lines counted for messages)."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc, self.count = proc, 0

    async def next(self, turn: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        try:
            raw = await self.proc.stdout.readline()
        except ValueError:  # asyncio: the line is past the stream's limit
            number = self.count + 1
            raise AgentOutputError(
                f"invalid_output: line {number} of the agent's stdout is longer than "
                f"{MAX_LINE_BYTES:,d} bytes"
            ) from None
        if not raw:
            status = await _exit_status(self.proc)
            raise AgentOutputError(f"exit_status {status} before answering turn {turn}")
        self.count += 1
        return _message(raw.decode(errors="replace").strip(), self.count)


def _message(line: str, number: int) -> dict[str, Any]:
    """One line -> ``{"call", "arguments"}`` or ``{"answer"}``, else the error naming it."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    where = f"invalid_output: line {number} of the agent's stdout"
    shown = line if len(line) <= 200 else line[:200] + "…"
    if not isinstance(message, dict):
        raise AgentOutputError(f"{where} is not a JSON object: {shown!r} {_EXPECTED}")
    if set(message) == {"answer"} and isinstance(message["answer"], (str, type(None))):
        return message
    if set(message) <= {"call", "arguments"} and "call" in message:
        name, arguments = message["call"], message.get("arguments", {})
        if isinstance(name, str) and _NAME.match(name) and isinstance(arguments, dict):
            return {"call": name, "arguments": arguments}
    raise AgentOutputError(f"{where} is not a call or an answer: {shown!r} {_EXPECTED}")


async def _exit_status(proc: asyncio.subprocess.Process) -> str:
    """The agent's exit status, once its stdout closed (bounded: it may close stdout and
    live on, then it is killed by the caller)."""
    try:
        code = await asyncio.wait_for(proc.wait(), 2.0)
    except TimeoutError:
        return "(stdout closed, still running)"
    return str(code)


async def _send(proc: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    """One line to the agent; an agent gone meanwhile is noticed at the next read."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        await proc.stdin.drain()


async def _play(proc: asyncio.subprocess.Process, talk: Conversation) -> None:
    """Every turn of ``talk`` with the started agent (bounded by the turns and steps)."""
    lines = _Lines(proc)
    for _ in range(len(talk.item.question)):
        if talk.done:
            return
        turn = talk.turn
        await _send(proc, {"turn": turn_input(talk)})
        for _ in range(talk.max_steps + 1):  # the (max_steps + 1)th call force-quits
            message = await lines.next(turn)
            if "answer" in message:
                talk.receive(Reply("" if message["answer"] is None else message["answer"]))
                break
            text = json.dumps(message["arguments"])
            talk.receive(Reply(None, (ToolCallReply(message["call"], text),)))
            if talk.force_quit:
                reason = f"more than {talk.max_steps} calls in turn {turn}: force-quit"
                await _send(proc, {"over": reason})
                return
            await _send(proc, {"result": str(talk.messages[-1]["content"])})


async def converse_command(argv: list[str], talk: Conversation, limits: AgentLimits) -> None:
    """Play ``talk`` with one process of ``argv`` under ``limits`` (see the module
    docstring); ``talk`` ends done, force-quit, stopped or failed, and nothing the agent
    started in its process group is left running."""
    if shutil.which(argv[0]) is None:  # in a namespace, exec fails inside unshare instead
        talk.fail(f"cannot start {argv[0]!r}: not an executable program")
        return
    with processes.scratch("bfcl-command-agent-") as workdir:
        processes.lifeline()
        try:
            proc = await asyncio.create_subprocess_exec(
                *contained(argv), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=workdir, start_new_session=True,
                limit=MAX_LINE_BYTES,
            )  # fmt: skip
        except OSError as exc:  # e.g. not executable
            talk.fail(f"cannot start {argv[0]!r}: {exc}")
            return
        assert proc.stderr is not None
        errors = asyncio.ensure_future(_tail(proc.stderr))
        failure = None
        try:
            processes.tie(proc.pid)  # its group dies with evalbench (kill -9 too)
            await asyncio.wait_for(_play(proc, talk), limits.max_time_s)
        except TimeoutError:
            talk.stop(f"no answer within max_time_s={limits.max_time_s:g}")
        except AgentOutputError as exc:
            failure = str(exc)
        finally:
            await _kill_group(proc)
            processes.untie(proc.pid)
            stderr = await _stderr(errors)
        if failure is not None:
            talk.fail(f"{failure}: {stderr}" if failure.startswith("exit_status") else failure)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the agent's process group, close our pipe ends, reap it (bounded)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.stdin is not None:
        proc.stdin.close()
    # asyncio's wait() also waits for the pipes to close, which a process that left the
    # group (setsid) could hold open: close ours and bound the wait.
    transport = getattr(proc, "_transport", None)
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd) if transport is not None else None
        if pipe is not None:
            pipe.close()
    with contextlib.suppress(ProcessLookupError, TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), 5.0)
    await _group_gone(proc.pid)


async def _group_gone(group: int) -> None:
    """Wait (at most ~1 s) until no process of the killed group runs: SIGKILL is delivered
    asynchronously. Zombies are not waited for (they run nothing; the agent's children are
    not ours to reap, and an init that reaps late keeps them)."""
    for _ in range(100):
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not group_running(group):
            return
        await asyncio.sleep(0.01)


async def _tail(stream: asyncio.StreamReader) -> bytes:
    """Read ``stream`` to its end (the agent never blocks on a full stderr pipe), keeping
    its last bytes."""
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-4 * STDERR_TAIL :]
    return kept


async def _stderr(reading: asyncio.Future[bytes]) -> str:
    """The last :data:`STDERR_TAIL` characters the agent wrote to stderr."""
    try:
        data = await asyncio.wait_for(reading, 1.0)
    except (TimeoutError, ConnectionError, ValueError):
        reading.cancel()
        return "(no stderr)"
    text = data.decode(errors="replace").strip()[-STDERR_TAIL:]
    return text or "(no stderr)"
