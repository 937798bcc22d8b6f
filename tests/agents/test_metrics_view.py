"""Trajectory statistics by hand, and the trajectory viewer keeps model text inert."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalbench.agents.metrics import (
    accuracy_by_steps,
    count_tools,
    effort_table,
    state_table,
    tool_mix,
)
from evalbench.agents.view import trajectories_html, trajectory_html

RUNS = pd.DataFrame(
    {
        "system": ["a"] * 4,
        "level": ["L1", "L1", "L2", "L2"],
        "state": ["answered", "timeout", "answered", "error"],
        "steps": [2, 6, 4, 0],
        "tool_calls": [1, 3, 2, 0],
        "tool_errors": [0, 1, 1, 0],
        "tool_counts": [{"python": 1}, {"python": 2, "search": 1}, {"read_file": 2}, {}],
        "wall_s": [1.0, 3.0, 2.0, 0.0],
        "prompt_tokens": [100, 300, 200, None],
        "completion_tokens": [10, 30, 20, None],
        "cost_usd": [None] * 4,
        "correct": [True, False, False, False],
    }
)


def test_state_table_counts_and_rates():
    table = state_table(RUNS, ["system", "level"]).set_index("level")
    assert table.loc["L1", ["tasks", "answered", "timeout", "error"]].tolist() == [2, 1, 1, 0]
    assert table.loc["L1", "timeout_rate"] == 0.5 and table.loc["L2", "error_rate"] == 0.5
    assert table.loc["L1", "timeout_low"] < 0.5 < table.loc["L1", "timeout_high"]


def test_effort_table_means_medians_and_error_share():
    table = effort_table(RUNS, ["system"], rng=np.random.default_rng(0), rounds=200).iloc[0]
    assert table["steps_mean"] == (2 + 6 + 4 + 0) / 4 and table["steps_median"] == 3.0
    assert table["tool_calls_mean"] == 6 / 4
    assert table["tool_error_share"] == 2 / 6  # 2 failed tool calls of 6
    assert table["tokens_mean"] == pytest.approx((110 + 330 + 220 + 0) / 4)
    assert np.isnan(table["cost_usd_mean"])  # nobody reported a cost


def test_tool_mix_shares_sum_to_one():
    mix = tool_mix(RUNS, ["system"]).iloc[0]
    assert mix["python"] == 3 / 6 and mix["search"] == 1 / 6 and mix["read_file"] == 2 / 6


def test_accuracy_by_steps_bins():
    table = accuracy_by_steps(RUNS, bins=(0, 3, 6)).set_index("steps_bin")
    assert table.loc["0–2", "tasks"] == 2 and table.loc["0–2", "accuracy"] == 0.5  # steps 2, 0
    assert table.loc["3–5", "tasks"] == 1 and table.loc["6+", "tasks"] == 1


def test_the_viewer_escapes_everything():
    payload = "<script>alert(1)</script>"
    task = {"task_id": "t<1>", "state": "answered", "answer": payload, "expected": "x",
            "detail": float("nan"), "tool_calls": 1}  # fmt: skip
    steps = [{"step": 0, "kind": "tool", "tool": "<b>python</b>", "arguments": payload,
              "result": payload, "error": None}]  # fmt: skip
    html = trajectory_html(task, steps)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>python</b>" not in html and "<dt>detail</dt>" not in html  # NaN not shown
    assert html.startswith("<details><summary>t&lt;1&gt; — answered")
    assert trajectories_html([], []) == "<p><i>none</i></p>"


def _failed(system: str, index: int, state: str) -> dict:
    return {"system": system, "task_id": f"{system}{index}", "state": state, "tool_calls": 1}


def test_the_failure_sample_shows_every_end_state_of_every_system():
    """12 wrong answers of system a listed first, then a's error/timeout/step limit and b's
    two wrong answers: a sample of 6 takes one of each (state, system) pair in turn (the
    order: error, timeout, step_limit, answered), then the next of each, in input order."""
    tasks = [_failed("a", i, "answered") for i in range(12)]
    tasks += [
        _failed("a", 12, "error"),
        _failed("a", 13, "timeout"),
        _failed("a", 14, "step_limit"),
    ]
    tasks += [_failed("b", 0, "answered"), _failed("b", 1, "answered")]
    html = trajectories_html(tasks, [], limit=6)
    shown = re.findall(r"<summary>(\w+) · (\w+) — (\w+)", html)
    assert shown == [
        ("a", "a12", "error"), ("a", "a13", "timeout"), ("a", "a14", "step_limit"),
        ("a", "a0", "answered"), ("a", "a1", "answered"), ("b", "b0", "answered"),
    ]  # fmt: skip
    # 17 - 6 = 11 left: a2..a11 (10) and b1, all wrong answers
    assert "11 more not shown (answered 11)" in html
    assert trajectories_html(tasks, [], limit=6) == html  # deterministic


def test_step_counts_are_singular_for_one():
    task = {"task_id": "t", "state": "error", "tool_calls": 1}
    one = trajectory_html(task, [{"step": 0, "kind": "model"}])
    assert "t — error, 1 step, 1 tool call" in one
    two = trajectory_html({**task, "tool_calls": 2}, [{"step": 0}, {"step": 1}])
    assert "t — error, 2 steps, 2 tool calls" in two


def test_tools_count_as_searches_or_pages():
    # search 2 -> searches; open_url 3 + browser 1 -> pages; python is neither
    assert count_tools({"search": 2, "open_url": 3, "browser": 1, "python": 4}) == (2, 3 + 1)
    assert count_tools(None) == (0, 0)
