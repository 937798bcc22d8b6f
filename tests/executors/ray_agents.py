"""Agents for the Ray executor tests (entrypoints ``tests.executors.ray_agents:<name>``).

They run on workers of a local Ray cluster, which share nothing with the test but the
filesystem: a task's question carries the path of the file it reports through.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


async def killed_once(task: dict) -> dict:
    """First run: writes its process id (the Ray worker's: an async agent runs in it) to
    the file named last in the question, then waits to be killed; later runs answer."""
    mark = Path(task["question"].split()[-1])
    if not mark.exists():
        mark.write_text(str(os.getpid()))
        await asyncio.sleep(60)
        return {"answer": "never killed"}
    return {"answer": "survived", "steps": [{"kind": "tool", "tool": "look"}]}


async def kills_its_worker(task: dict) -> str:
    """Kills the Ray worker running it, every time (counting the attempts in the file)."""
    mark = Path(task["question"].split()[-1])
    with open(mark, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), 9)
    return "unreachable"


def steady(task: dict) -> dict:
    """A sync agent (its own process) that takes a second per task and reports two steps."""
    time.sleep(1.0)
    steps = [{"kind": "model", "prompt_tokens": 10}, {"kind": "tool", "tool": "sleep"}]
    return {"answer": task["question"].split()[-1].rstrip("?"), "steps": steps}


def quick(task: dict) -> dict:
    """A sync agent that answers at once with one step (per-task overhead)."""
    return {"answer": task["id"], "steps": [{"kind": "tool", "tool": "none"}]}


async def quick_async(task: dict) -> str:
    """An async agent that answers at once, in the worker itself (per-task overhead)."""
    return task["id"]


def busy(task: dict) -> str:
    """A sync agent (its own process): 0.5 s waiting (a model call), then 0.05 s of CPU."""
    time.sleep(0.5)
    _burn(0.05)
    return task["id"]


async def busy_async(task: dict) -> str:
    """The same as an async agent: it waits in the event loop, computes in it."""
    await asyncio.sleep(0.5)
    _burn(0.05)
    return task["id"]


def _burn(cpu_s: float) -> None:
    start = time.process_time()
    while time.process_time() - start < cpu_s:
        pass
