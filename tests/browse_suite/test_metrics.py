"""Browse-suite statistics by hand: the denominators of success and scores, tool counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbench.browse_suite import metrics as m


def _suite(rows):
    base = {
        "kind": "static",
        "steps": 3,
        "tool_calls": 1,
        "wall_s": 1.0,
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "cost_usd": None,
    }
    return pd.DataFrame([{**base, **r} for r in rows])


def test_suite_denominators_by_hand():
    rows = [
        {
            "system": "a",
            "task_id": "t1",
            "level": 1,
            "state": "answered",
            "status": "scored",
            "score": 1.0,
            "success": True,
        },
        {
            "system": "a",
            "task_id": "t2",
            "level": 1,
            "state": "answered",
            "status": "scored",
            "score": 0.5,
            "success": False,
        },
        {
            "system": "a",
            "task_id": "t3",
            "level": 1,
            "state": "timeout",
            "status": "not answered",
            "score": None,
            "success": False,
        },
        {
            "system": "a",
            "task_id": "t4",
            "level": 1,
            "state": "answered",
            "status": "unscored",
            "score": None,
            "success": None,
        },
    ]
    table, kinds = m.success_tables(_suite(rows), rng=np.random.default_rng(0), rounds=50)
    one = table[table["level"] == "1"].iloc[0]
    assert (one["tasks"], one["answered"], one["timeout"], one["unscored"]) == (4, 3, 1, 1)
    assert one["successes"] == 1 and one["success_rate"] == pytest.approx(1 / 3)  # t4 left out
    assert one["score_answered"] == pytest.approx((1.0 + 0.5) / 2)
    assert one["score_all"] == pytest.approx((1.0 + 0.5 + 0) / 3)  # the timeout counts 0
    assert list(table["level"]) == ["1", "all"]
    assert list(kinds["kind"]) == ["static", "all"]
    assert kinds.iloc[1].drop("kind").equals(table.iloc[1].drop("level"))  # one "all" row
