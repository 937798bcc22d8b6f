"""Multi-turn diagnostics beyond the official score, on hand-made replays."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbench.bfcl.multi_turn import MultiTurnCheck, TurnTrace
from evalbench.bfcl.multi_turn_metrics import (
    DETAIL_COLUMNS,
    behaviour_table,
    efficiency_table,
    multi_turn_detail,
    outcome_shares,
)
from evalbench.bfcl.replay import ExecCall
from evalbench.bfcl.schema import MultiTurnItem

ITEM = MultiTurnItem(
    "multi_turn_miss_func_900", "multi_turn_miss_func", [[], [], []], [], {},
    ["GorillaFileSystem"],
    [["cd(folder='a')", "mv(source='x', destination='y')"], [], ["sort(file_name='y')"]],
    {2: ["sort"]},
)  # fmt: skip


def steps(*calls: str) -> list[tuple[ExecCall, ...]]:
    return [tuple(ExecCall(c) for c in calls)]


def check(turns, results, valid=True, error_type=None, turn=None) -> MultiTurnCheck:
    trace = tuple(TurnTrace(r, []) for r in results)
    return MultiTurnCheck(valid, error_type, None, turn, None, turns, trace)


def test_counts_of_one_replay():
    # turn 0: mv before cd (an inversion), cd twice (a repeat); turn 1 (held out): sort is
    # called although it is the held-out function; turn 2: the sort again
    turns = [
        steps("mv(source='x', destination='y')", "cd(folder='a')", "cd(folder='a')"),
        steps("sort(file_name='y')"),
        steps("sort(file_name='y')"),
    ]
    results = [[['{"error": "no x"}', "None", "None"]], [['{"sorted_content": ""}']],
               [['{"sorted_content": ""}']]]  # fmt: skip
    row = multi_turn_detail("s", ITEM, check(turns, results))
    assert set(row) == set(DETAIL_COLUMNS)
    assert (row["model_calls"], row["truth_calls"]) == (3 + 1 + 1, 2 + 0 + 1)
    assert (row["repeated_calls"], row["error_results"], row["order_inversions"]) == (1, 1, 1)
    assert (row["holdout"], row["holdout_turns"], row["holdout_calls"]) == ("function", 1, 1)
    assert row["called_missing"] is True


def test_a_replay_that_stopped_counts_only_the_turns_that_ran():
    turns = [steps("cd(folder='b')"), [], steps("sort(file_name='y')")]
    row = multi_turn_detail(
        "s", ITEM, check(turns, [[["None"]]], False, "multi_turn:instance_state_mismatch", 0)
    )
    assert (row["model_calls"], row["truth_calls"], row["holdout_turns"]) == (1, 2, 0)
    assert row["failed_turn"] == 0 and row["holdout"] == "function"


def _details(rows):
    base = dict.fromkeys(DETAIL_COLUMNS, 0)
    return pd.DataFrame([{**base, "system": "s", "test_category": "multi_turn_base",
                          "holdout": "", "called_missing": False, **r} for r in rows])  # fmt: skip


def test_behaviour_shares_and_their_denominators():
    details = _details([
        {"valid": True, "model_calls": 3, "truth_calls": 2, "holdout_turns": 1,
         "holdout_calls": 1, "holdout": "parameter"},
        {"valid": False, "error_type": "multi_turn:instance_state_mismatch",
         "model_calls": 2, "truth_calls": 2, "repeated_calls": 1},
        {"valid": True, "model_calls": 1, "truth_calls": 2, "holdout_turns": 1,
         "holdout": "function"},
    ])  # fmt: skip
    table = behaviour_table(details).set_index("behaviour")
    assert (table.loc["more calls than the ground truth", ["n", "items"]] == [3, 1]).all()
    assert table.loc["a repeated call", "share"] == pytest.approx(1 / 3)
    assert (table.loc["called in a held-out turn", ["n", "items"]] == [2, 1]).all()
    assert (table.loc["called the held-out function", ["n", "items"]] == [1, 0]).all()
    assert table.loc["a repeated call", "share_low"] < 1 / 3 < table.loc["a repeated call",
                                                                         "share_high"]  # fmt: skip
    # efficiency pools items: (3 + 2 + 1) / (2 + 2 + 2) = 1.0
    ratio = efficiency_table(details).iloc[0]
    assert ratio["calls_per_truth_call"] == pytest.approx(6 / 6)
    assert ratio["calls_per_truth_call_low"] <= 1.0 <= ratio["calls_per_truth_call_high"]
    shares = outcome_shares(details).iloc[0]
    assert shares["correct"] == pytest.approx(2 / 3) and shares["state differs"] == pytest.approx(
        1 / 3
    )
