"""Summaries of an arena run: the pairwise judge's position and length preferences."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbench.arena import metrics
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


def test_each_answer_is_measured_when_it_took_part_in_a_battle_else_says_why():
    # prompts q1, q2; systems a, b, c; a's call on q2 failed. Pairs: q1 a-b decided (the
    # one battle), q1 a-c unparsed, q1 b-c the judge's call failed, q2 b-c dropped.
    answers = pd.DataFrame(
        {"system": ["a", "a", "b", "b", "c", "c"], "question_id": ["q1", "q2"] * 3,
         "error": [None, "http_500: down", None, None, None, None]}
    )  # fmt: skip
    judgments = pd.DataFrame(
        {"pair_id": ["q1", "q1", "q1", "q2"], "model_x": ["a", "a", "b", "b"],
         "model_y": ["b", "c", "c", "c"],
         "outcome": ["consistent", "unscored", "unscored", "inconsistent_dropped"],
         "error": [None, None, "timeout: slow; timeout: slow", None]}
    )  # fmt: skip
    battles = pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "question_id": ["q1"]})
    rows = {m.system: m for m in metrics.measured_systems(answers, judgments, battles)}
    assert (rows["a"].scored, rows["a"].unscored) == (1, {"failed call (http_500)": 1})
    assert (rows["b"].scored, rows["b"].unscored) == (1, {metrics.DROPPED: 1})
    # c on q1: unparsed (a-c) and a failed judge call (b-c): the failed call explains it
    assert (rows["c"].scored, rows["c"].unscored) == (
        0, {"failed judge call (timeout)": 1, metrics.DROPPED: 1}
    )  # fmt: skip
