"""The simulated agent's timeouts look like real ones: the agent worked a while first."""

from __future__ import annotations

import asyncio
from pathlib import Path

from evalbench.agents.runner import Recorder, TaskInput
from evalbench.agents.sim import sim_backend
from evalbench.agents.types import AgentTask, SystemSpec


class _Store(list):
    append = list.append


def _timeouts(mean_steps: float, n: int = 200) -> list[tuple[int, int]]:
    """(steps, tool calls) of ``n`` simulated tasks that all run out of time."""
    spec = SystemSpec.model_validate({
        "name": "s", "provider": "sim",
        "sim_agent": {"mean_steps": {"default": mean_steps}, "timeout_rate": {"default": 1.0}},
    })  # fmt: skip
    backend = sim_backend(spec, seed=0)
    out = []
    for i in range(n):
        item = TaskInput(AgentTask(id=f"t{i}", question="q"), {})
        recorder = Recorder(_Store(), "s", item)
        outcome = asyncio.run(backend(item, recorder, Path(".")))
        assert outcome.state == "timeout" and outcome.wall_s == item.task.limits.max_time_s
        tools = [s for s in recorder.steps if s.kind == "tool"]
        out.append((len(recorder.steps), len(tools)))
    return out


def test_a_timed_out_agent_made_at_least_one_tool_call_first():
    # Poisson(4) draws 0 tool calls for about e^-4 = 1.8% of tasks (3-4 of 200): those too
    got = _timeouts(4.0)
    assert all(tools >= 1 and steps == 2 * tools for steps, tools in got)  # model + tool each
    assert len({tools for _, tools in got}) > 3  # cut at different points, not a constant


def test_a_timeout_is_cut_within_the_drawn_trajectory():
    # mean 1: most tasks draw 0-2 tool calls; a timeout keeps 1 up to the drawn number
    got = _timeouts(1.0)
    assert min(t for _, t in got) == 1 and max(t for _, t in got) <= 8
