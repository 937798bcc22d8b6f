"""A simulated agent (``provider: sim`` with ``sim_agent:`` knobs): the offline default.

Seeded per (seed, system, task): the number of tool calls is Poisson with the level's
``mean_steps``; each call picks a tool from ``tool_mix`` and fails with ``tool_error_rate``;
each step takes an exponential simulated time with mean ``seconds_per_step``. The task runs
out of time with the level's ``timeout_rate`` after 1 to n of its n drawn tool calls (at least
one, as a real agent that used its time; the trajectory so far is kept), exceeds
``max_steps`` when the drawn steps do, and otherwise answers: correctly with the system's
``sim.accuracy`` for the level, else with the benchmark's plausible wrong answer. With
``sim.error_rate``, a task fails at once like an API failure (state ``error``), drawn from a
stream of its own so the other draws stay as they were. Nothing
waits: the times are simulated and recorded as such. The known truth lets tests check every
trajectory statistic against its expectation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from evalbench.models import sim_rng

from .runner import Backend, Outcome, Recorder, TaskInput
from .types import SystemSpec

WrongAnswer = Callable[[Any, np.random.Generator], str]
_ARGS = {
    "read_file": '{"name": "attachment"}',
    "python": '{"code": "print(42)"}',
    "search": '{"query": "key fact"}',
    "open_page": '{"id": "doc-1"}',
}


def sim_backend(spec: SystemSpec, *, seed: int, wrong_answer: WrongAnswer | None = None) -> Backend:
    """The simulated agent of ``spec`` (its ``sim`` and ``sim_agent`` knobs)."""
    knobs = spec.sim_agent
    assert knobs is not None
    tools = list(knobs.tool_mix)
    weights = np.array([knobs.tool_mix[t] for t in tools], dtype=float)
    weights = weights / weights.sum()

    async def backend(item: TaskInput, recorder: Recorder, workdir: Path) -> Outcome:
        if _fails(spec, seed, item.key):
            return Outcome("error", error=SIM_ERROR)
        rng = sim_rng(seed, spec.name, item.key)
        n_calls = int(rng.poisson(knobs.per_level(knobs.mean_steps, item.level)))
        times_out = rng.random() < knobs.per_level(knobs.timeout_rate, item.level)
        cut = int(rng.integers(1, max(n_calls, 1) + 1)) if times_out else n_calls
        wall = 0.0
        for index in range(min(cut, item.task.limits.max_steps)):
            tool = str(rng.choice(tools, p=weights))
            wall += _model_step(recorder, rng, knobs.seconds_per_step, asked=tool)
            wall += _tool_step(recorder, rng, tool, index, knobs)
        if times_out:
            return Outcome(
                "timeout", detail="simulated: ran out of time", wall_s=item.task.limits.max_time_s
            )
        if n_calls >= item.task.limits.max_steps:
            return Outcome(
                "step_limit", detail="simulated: no final answer within max_steps", wall_s=wall
            )
        wall += _model_step(recorder, rng, knobs.seconds_per_step, asked="final_answer")
        correct = rng.random() < spec.sim.accuracy_for(item.level)
        answer = (
            str(item.truth) if correct or wrong_answer is None else wrong_answer(item.truth, rng)
        )
        recorder.step(
            "tool", tool="final_answer", arguments=f'{{"answer": "{answer}"}}', result=answer
        )
        return Outcome("answered", answer=answer, wall_s=round(wall, 3))

    return backend


SIM_ERROR = "sim_error: simulated permanent API failure"
"""The error of a simulated agent task that failed (the sim provider's words for a call)."""


def _fails(spec: SystemSpec, seed: int, key: str) -> bool:
    """Whether the task fails with ``sim.error_rate`` (its own seeded draw)."""
    rate = spec.sim.error_rate
    return bool(rate) and sim_rng(seed, spec.name, f"{key}#error").random() < rate


def _model_step(recorder: Recorder, rng: np.random.Generator, mean_s: float, asked: str) -> float:
    seconds = float(rng.exponential(mean_s * 0.6))
    recorder.step(
        "model",
        tool=asked,
        prompt_tokens=int(rng.integers(400, 1200)),
        completion_tokens=int(rng.integers(20, 200)),
        latency_s=round(seconds, 3),
    )
    return seconds


def _tool_step(
    recorder: Recorder, rng: np.random.Generator, tool: str, index: int, knobs: Any
) -> float:
    seconds = float(rng.exponential(knobs.seconds_per_step * 0.4))
    failed = rng.random() < knobs.tool_error_rate
    result = f"error: simulated {tool} failure" if failed else f"simulated {tool} result #{index}"
    recorder.step(
        "tool",
        tool=tool,
        arguments=_ARGS.get(tool, "{}"),
        result=result,
        latency_s=round(seconds, 3),
        error=result[7:] if failed else None,
    )
    return seconds
