"""Summaries of an arena run: the pairwise judge's position and length preferences."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbench.arena.metrics import judge_position_bias, judge_prefers_longer


def pair_rows(**columns: list) -> pd.DataFrame:
    n = len(next(iter(columns.values())))
    base = {"pair_id": [f"q{i}" for i in range(n)], "model_x": ["X"] * n, "model_y": ["Y"] * n}
    return pd.DataFrame({**base, **columns})


def test_judge_position_bias_from_the_two_orders():
    rows = pair_rows(
        first=["x", "x", "y", "tie"],  # x shown first
        second=["x", "y", "x", "tie"],  # y shown first
        final=["x", "tie", "tie", "tie"],
        len_x=[10, 10, 10, 10],
        len_y=[20, 20, 20, 20],
    )
    bias = judge_position_bias(rows)
    # pairs 1 and 4 agree; pair 2 favours whoever was first (x, then y); pair 3 the second
    assert (bias.n, bias.consistency, bias.n_inconsistent) == (4, 2 / 4, 2)
    assert bias.first_preference == pytest.approx(1 / 2)
    # first position wins: order 1 x, x; order 2: y (pair 2) -> 3 of 8 verdicts
    assert bias.first_position_win_rate == pytest.approx(3 / 8)
    longer, n = judge_prefers_longer(rows)
    assert (longer.estimate, n) == (0.0, 1)  # one decisive pair, won by the shorter x
