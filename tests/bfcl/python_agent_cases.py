"""Tiny Python agents for the multi-turn agent tests (imported by entrypoint, as users' are)."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

SCRIPT: dict[tuple[str, int], tuple[list[tuple[str, dict[str, Any]]], str]] = {
    # the hand-made miss_func item of test_conversation: make a folder; then read the notes
    ("multi_turn_miss_func_990", 0): ([("mkdir", {"dir_name": "out"})], "Made it."),
    ("multi_turn_miss_func_990", 1): ([("cat", {"file_name": "notes.txt"})], "Read it."),
    # multi_turn_base_3 (pinned data): find the test files; copy two of them to backup_tests
    ("multi_turn_base_3", 0): ([("find", {"path": ".", "name": "test"})], "Found them."),
    ("multi_turn_base_3", 1): (
        [("cd", {"folder": "projects"}), ("cd", {"folder": "photography"}),
         ("cp", {"source": "test_image1.jpg", "destination": "backup_tests"}),
         ("cp", {"source": "test_document.txt", "destination": "backup_tests"})],
        "Copied.",
    ),
}  # fmt: skip
SEEN: list[dict[str, Any]] = []
"""Every turn input an agent here received (tests clear it)."""
RESULTS: list[str] = []
"""Every call result an agent here received."""


def _plan(turn: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    SEEN.append(turn)
    return SCRIPT.get((turn["id"], turn["turn"]), ([], "I cannot do that."))


async def scripted(turn: dict[str, Any], call: Any) -> str:
    """Makes the scripted calls of its item and turn (an ``async def`` agent)."""
    calls, text = _plan(turn)
    for name, arguments in calls:
        RESULTS.append(await call(name, arguments))
    return text


def scripted_sync(turn: dict[str, Any], call: Any) -> str:
    """The same as a plain function (it runs in a thread)."""
    calls, text = _plan(turn)
    for name, arguments in calls:
        RESULTS.append(call(name, arguments))
    return text


def busy(turn: dict[str, Any], call: Any) -> str:
    """Lists the folder until evalbench stops it."""
    SEEN.append(turn)
    for _ in range(100):
        RESULTS.append(call("ls", {}))
    return "never reached: the step limit stops it"


LATE = threading.Event()
"""Set by :func:`slow` once its late call was refused."""


def slow(turn: dict[str, Any], call: Any) -> str:
    """Thinks past its time limit, then tries a call."""
    time.sleep(0.3)
    try:
        call("ls", {})
    finally:
        LATE.set()
    return "too late"


async def slow_async(turn: dict[str, Any], call: Any) -> str:
    import asyncio

    await asyncio.sleep(30)  # cancelled at max_time_s
    return "never"


def broken(turn: dict[str, Any], call: Any) -> str:
    raise KeyError("my agent's own bug")


async def kills_its_worker(turn: dict[str, Any], call: Any) -> str:
    """Kills the process running it (on Ray: its worker), every time."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    return "unreachable"


class _Locked:
    """A plain-function agent that cannot be sent to a Ray worker: it holds a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __call__(self, turn: dict[str, Any], call: Any) -> str:
        with self.lock:
            return scripted_sync(turn, call)


locked = _Locked()


def remembers(turn: dict[str, Any], call: Any) -> str:
    """A memory agent: keeps the user's first name in core memory when told it; answers a
    memory question with the core memory its system prompt shows."""
    SEEN.append(turn)
    system, said = turn["messages"][0]["content"], turn["messages"][-1]["content"]
    if "For your final answer" not in system:  # a prerequisite conversation
        name = re.search(r"My name is (\w+)", said)
        if name:
            RESULTS.append(call("core_memory_add", {"key": "first_name", "value": name[1]}))
        return "Noted."
    shown = system.split("Core Memory from previous interactions:\n", 1)[1]
    return str({"answer": shown.split("For your final answer")[0].strip(), "context": "memory"})
