"""evalbench.retry_loop.metrics on a loop of four items written by hand, every number worked
out below."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench.retry_loop import metrics as M

NAN = math.nan
# (item, arm, round, weighted score, stopped, cost): two rounds at most, threshold 8.
# suggestion: a 5 -> 6 -> 7.5 (rounds); b 6 -> 8.2 (threshold); c 4 -> unscored;
#             d 5, the judge wrote no suggestion (no_suggestion).
# control:    a 5 -> 5.5 -> 6; b 6 -> 6 -> 6.5; c 4 -> 4.5 -> 4.5; d 5 -> 5.5 -> 5 (all rounds).
ROWS = [
    ("a", "suggestion", 0, 5.0, None, 0.01), ("b", "suggestion", 0, 6.0, None, 0.01),
    ("c", "suggestion", 0, 4.0, None, 0.01), ("d", "suggestion", 0, 5.0, "no_suggestion", 0.01),
    ("a", "suggestion", 1, 6.0, None, 0.02), ("b", "suggestion", 1, 8.2, "threshold", 0.02),
    ("c", "suggestion", 1, NAN, "unscored", 0.02), ("a", "suggestion", 2, 7.5, "rounds", 0.03),
    ("a", "control", 0, 5.0, None, 0.01), ("b", "control", 0, 6.0, None, 0.01),
    ("c", "control", 0, 4.0, None, 0.01), ("d", "control", 0, 5.0, None, 0.01),
    ("a", "control", 1, 5.5, None, 0.02), ("b", "control", 1, 6.0, None, 0.02),
    ("c", "control", 1, 4.5, None, 0.02), ("d", "control", 1, 5.5, None, 0.02),
    ("a", "control", 2, 6.0, "rounds", 0.03), ("b", "control", 2, 6.5, "rounds", 0.03),
    ("c", "control", 2, 4.5, "rounds", 0.03), ("d", "control", 2, 5.0, "rounds", 0.03),
]  # fmt: skip


@pytest.fixture
def rounds() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["item", "arm", "round", "weighted_score", "stopped",
                                        "cost_usd"])  # fmt: skip
    frame["status"] = np.where(frame["weighted_score"].isna(), "unscored", "scored")
    return frame.assign(prompt_tokens=100, completion_tokens=10)


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_paths_carry_a_stop_forward_and_drop_a_failure(rounds: pd.DataFrame) -> None:
    paths = M.score_paths(rounds, "suggestion", 2)
    expected = [[5, 6, 7.5], [6, 8.2, 8.2], [4, NAN, NAN], [5, NAN, NAN]]
    np.testing.assert_array_equal(paths.to_numpy(), expected)
    assert list(paths.index) == ["a", "b", "c", "d"] and list(paths.columns) == [0, 1, 2]


def test_round_gains_by_hand(rounds: pd.DataFrame) -> None:
    paths = M.score_paths(rounds, "suggestion", 2)
    table = M.round_gains(paths, arm="suggestion", rng=_rng(), rounds=200, level=0.95)
    one, two = table.iloc[0], table.iloc[1]
    # round 1: a 6 - 5 = 1, b 8.2 - 6 = 2.2 (c failed, d stopped on its failure) -> 1.6
    assert (one["n"], one["gain"]) == (2, pytest.approx(1.6))
    # round 2: a 7.5 - 6 = 1.5, b 8.2 - 8.2 = 0 (stopped: carried) -> 0.75; cumulative
    # a 7.5 - 5 = 2.5, b 8.2 - 6 = 2.2 -> 2.35
    assert two["gain"] == pytest.approx(0.75) and two["cumulative"] == pytest.approx(2.35)
    assert two["mean_score"] == pytest.approx((7.5 + 8.2) / 2)
    # Wilcoxon exact: 2 positive differences -> 2 · 1/4 = 0.5; (1.5, 0): the zero dropped,
    # one positive -> 2 · 1/2 = 1. Holm: sorted 0.5, 1 -> min(1, 2 · 0.5) = 1, then 1
    assert table["p"].tolist() == [0.5, 1.0] and table["p_holm"].tolist() == [1.0, 1.0]
    # every resample's mean lies in [1, 2.2]; both extremes are drawn in 200 rounds
    assert (one["gain_low"], one["gain_high"]) == (1.0, pytest.approx(2.2))
    assert M.stops_helping(table, "suggestion") == 2  # round 2's interval includes 0


def test_round_shares_by_hand(rounds: pd.DataFrame) -> None:
    table = M.round_shares(rounds, 0.95).set_index(["arm", "round"])
    s1 = table.loc[("suggestion", 1)]
    # a +1, b +2.2 improved; c unscored: not compared
    assert s1[["retried", "compared", "failed", "improved", "unchanged", "worsened"]].tolist() == [
        3, 2, 1, 2, 0, 0]  # fmt: skip
    assert s1["improved_share"] == 1.0 and s1["worsened_share"] == 0.0
    # control round 2: a 5.5 -> 6 up, b 6 -> 6.5 up, c 4.5 -> 4.5 same, d 5.5 -> 5 down
    c2 = table.loc[("control", 2)]
    assert c2[["improved", "unchanged", "worsened"]].tolist() == [2, 1, 1]
    assert (
        c2["improved_share"] == 0.5 and c2["improved_share_low"] < 0.5 < c2["improved_share_high"]
    )
    assert list(table.index) == [("suggestion", 1), ("control", 1), ("suggestion", 2),
                                 ("control", 2)]  # fmt: skip


def test_round_costs_by_hand(rounds: pd.DataFrame) -> None:
    paths = M.score_paths(rounds, "suggestion", 2)
    gains = M.round_gains(paths, arm="suggestion", rng=_rng(), rounds=200, level=0.95)
    costs = M.round_costs(rounds[rounds["arm"] == "suggestion"], gains).set_index("round")
    assert costs["answers"].tolist() == [4, 3, 1] and costs["tokens"].tolist() == [440, 330, 110]
    # round 1: 3 answers · 0.02 = 0.06 for 1.6 points · 2 items = 3.2 points -> 0.01875
    assert costs.loc[1, "per_point"] == pytest.approx(0.06 / 3.2)
    # its gain interval [1, 2.2] lies above 0: 0.06 / (2.2 · 2) .. 0.06 / (1 · 2)
    assert costs.loc[1, "per_point_low"] == pytest.approx(0.06 / 4.4)
    assert costs.loc[1, "per_point_high"] == pytest.approx(0.06 / 2)
    # round 2: 0.03 for 0.75 · 2 = 1.5 points; its interval reaches 0: no bounds
    assert costs.loc[2, "per_point"] == pytest.approx(0.02) and math.isnan(
        costs.loc[2, "per_point_high"]
    )
    # the retries, 0.06 + 0.03, over 2.35 · 2 = 4.7 points since the first answer
    assert costs.loc[2, "cumulative_cost_usd"] == pytest.approx(0.09)
    assert costs.loc[2, "cumulative_per_point"] == pytest.approx(0.09 / 4.7)
    assert costs.loc[0, "cumulative_cost_usd"] == 0 and math.isnan(costs.loc[0, "per_point"])


def test_suggestion_effect_by_hand(rounds: pd.DataFrame) -> None:
    s, c = M.score_paths(rounds, "suggestion", 2), M.score_paths(rounds, "control", 2)
    table = M.suggestion_effect(s, c, rng=_rng(), rounds=200, level=0.95)
    one, two = table.iloc[0], table.iloc[1]
    # round 1, items a and b: effect 6 - 5.5 = 0.5 and 8.2 - 6 = 2.2 -> 1.35 (c, d: failed)
    assert (one["n"], one["effect"], one["round_effect"]) == (2, pytest.approx(1.35),
                                                              pytest.approx(1.35))  # fmt: skip
    # round 2: a 7.5 - 6 = 1.5, b 8.2 - 6.5 = 1.7 -> 1.6; round's own: a (1.5 - 0.5) = 1,
    # b (0 - 0.5) = -0.5 -> 0.25
    assert two["effect"] == pytest.approx(1.6) and two["round_effect"] == pytest.approx(0.25)


def test_self_preference_by_hand(rounds: pd.DataFrame) -> None:
    finals = M.final_rounds(rounds).set_index(["item", "arm"])
    assert finals["final_round"].to_dict() == {
        ("a", "control"): 2, ("a", "suggestion"): 2, ("b", "control"): 2,
        ("b", "suggestion"): 1, ("c", "control"): 2, ("c", "suggestion"): 0,
        ("d", "control"): 2, ("d", "suggestion"): 0,
    }  # fmt: skip
    second = pd.DataFrame(
        [("a", "first", 4.0), ("b", "first", 5.0), ("c", "first", 3.0), ("d", "first", 4.0),
         ("a", "suggestion", 5.0), ("b", "suggestion", 6.0), ("a", "control", 4.5),
         ("b", "control", 5.5), ("c", "control", 3.5), ("d", "control", 4.0)],
        columns=["item", "answer", "weighted_score"],
    )  # fmt: skip
    per_item = M.self_preference_items(M.final_rounds(rounds), second)
    gaps = per_item.set_index(["item", "arm"])["gap"].to_dict()
    # a: loop 7.5 - 5 = 2.5, second 5 - 4 = 1 -> 1.5; b: 2.2 - 1 = 1.2; c, d: the first
    # answer is final -> 0; control a: 1 - 0.5 = 0.5, b: 0.5 - 0.5 = 0, c: 0.5 - 0.5, d: 0
    assert gaps == pytest.approx({
        ("a", "suggestion"): 1.5, ("b", "suggestion"): 1.2, ("c", "suggestion"): 0.0,
        ("d", "suggestion"): 0.0, ("a", "control"): 0.5, ("b", "control"): 0.0,
        ("c", "control"): 0.0, ("d", "control"): 0.0,
    })  # fmt: skip
    table = M.self_preference(per_item, arms=["suggestion", "control"], rng=_rng(),
                              rounds=200, level=0.95).set_index("arm")  # fmt: skip
    assert table.loc["suggestion", "gap"] == pytest.approx((1.5 + 1.2) / 4)
    assert table.loc["suggestion", "retried_share"] == 0.5
    assert table.loc["control", "gap"] == pytest.approx(0.5 / 4)
    diff = M.gap_difference(per_item, rng=_rng(), rounds=200, level=0.95)
    assert diff["difference"] == pytest.approx((1.0 + 1.2 + 0 + 0) / 4)
    # the second judge's final answers: a 5 - 4.5, b 6 - 5.5, c 3 - 3.5 (c's final is its
    # first), d 4 - 4 -> (0.5 + 0.5 - 0.5 + 0) / 4
    effect = M.second_effect(per_item, rng=_rng(), rounds=200, level=0.95)
    assert (effect["n"], effect["effect"]) == (4, pytest.approx(0.125))


def test_round_costs_of_both_arms_stay_with_their_rows(rounds: pd.DataFrame) -> None:
    paths = {arm: M.score_paths(rounds, arm, 2) for arm in ("suggestion", "control")}
    gains = pd.concat(
        [M.round_gains(paths[a], arm=a, rng=_rng(), rounds=200, level=0.95) for a in paths]
    )
    costs = M.round_costs(rounds, gains).set_index(["arm", "round"])
    assert list(costs.index) == [("suggestion", r) for r in range(3)] + [
        ("control", r) for r in range(3)
    ]
    assert costs.loc[("suggestion", 1), "per_point"] == pytest.approx(0.06 / 3.2)
    # control round 1: a +0.5, b 0, c +0.5, d +0.5 -> 0.375 · 4 = 1.5 points for 4 · 0.02
    assert costs.loc[("control", 1), "per_point"] == pytest.approx(0.08 / 1.5)
    # control since the first answer: 0.08 + 0.12 over (1 + 0.5 + 0.5 + 0) = 2 points
    assert costs.loc[("control", 2), "cumulative_per_point"] == pytest.approx(0.20 / 2)
