"""evalbench.judge_golden.metrics: agreement, confusion and panel statistics, by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench import agreement as ag
from evalbench import judge as J
from evalbench.judge_golden import data as D
from evalbench.judge_golden import metrics as M
from evalbench.stats import Interval, wilson_interval


def _long(judge: list[float], human: list[float], dim: str = "accuracy") -> pd.DataFrame:
    n = len(judge)
    return pd.DataFrame(
        {
            "judge": "j",
            "item": [f"i{k}" for k in range(n)],
            "replicate": 0,
            "status": ["unscored" if math.isnan(x) else "scored" for x in judge],
            "dimension": dim,
            "judge_score": judge,
            "human": human,
            "diff": np.array(judge) - np.array(human),
            "answer_chars": 100,
        }
    )


def test_golden_agreement_by_hand() -> None:
    judge = [7.0, 5.0, 9.0, 3.0, math.nan]  # one unscored item
    human = [7.0, 7.0, 8.0, 3.0, 5.0]
    got = M.golden_agreement(
        _long(judge, human),
        J.get_rubric("fine_grained"),
        tolerance=1,
        rng=np.random.default_rng(0),
        rounds=200,
        level=0.95,
    ).iloc[0]
    assert (got["n_items"], got["n_scored"], got["n_unscored"]) == (5, 4, 1)
    assert got["within_k"] == pytest.approx(3 / 4)  # |diff| = 0, 2, 1, 0
    assert got["within_k_low"] == pytest.approx(wilson_interval(3, 4).low)
    assert got["within_k_strict"] == pytest.approx(3 / 5)  # the unscored item is a miss
    assert got["exact"] == pytest.approx(2 / 4)
    assert got["mae"] == pytest.approx((0 + 2 + 1 + 0) / 4)
    assert got["bias"] == pytest.approx((0 - 2 + 1 + 0) / 4)


def test_score_confusion_spans_the_whole_scale() -> None:
    table = M.score_confusion(
        _long([7.0, 5.0], [7.0, 7.0]), J.get_rubric("fine_grained"), judge="j", dimension="accuracy"
    )
    assert table.shape == (10, 10)
    assert table.loc[7, 7] == 1 and table.loc[7, 5] == 1 and int(table.to_numpy().sum()) == 2


def test_golden_panel_flags_outliers_by_hand() -> None:
    golden = pd.DataFrame({"item": ["i0"], "human_accuracy": [6.0]})
    judgments = pd.DataFrame(
        {
            "judge": ["j1", "j2", "j3", "j4"],
            "item": "i0",
            "replicate": 0,
            "status": ["scored", "scored", "scored", "unscored"],
            "score_accuracy": [5.0, 6.0, 10.0, math.nan],
        }
    )
    panel = M.golden_panel(
        judgments, golden, dimension="accuracy", method="mean", outlier_distance=2, tolerance=1
    )
    row = panel.loc["i0"]
    assert (row["n_scored"], row["n_unscored"]) == (3, 1)
    assert row["consensus"] == pytest.approx((5 + 6 + 10) / 3)
    # j1: |5 - median(6, 10)| = 3 > 2; j2: |6 - median(5, 10)| = 1.5; j3: |10 - 5.5| = 4.5 > 2
    assert row["outliers"] == ["j1", "j3"]
    assert row["within_k"] == (abs((5 + 6 + 10) / 3 - 6) <= 1)
    summary = M.panel_summary(panel, 0.95)
    assert summary["outliers_by_judge"] == {"j1": 1, "j3": 1}


# --------------------------------------------------------------------------- display frames


def test_status_counts_per_judge_and_replicate() -> None:
    judgments = pd.DataFrame(
        {
            "judge": ["a", "a", "a", "b"],
            "replicate": [0, 0, 1, 0],
            "status": ["scored", "unscored", "scored", "scored"],
        }
    )
    got = M.status_counts(judgments)
    assert got.to_dict("records") == [
        {"judge": "a", "replicate": 0, "scored": 1, "unscored": 1},
        {"judge": "a", "replicate": 1, "scored": 1, "unscored": 0},
        {"judge": "b", "replicate": 0, "scored": 1, "unscored": 0},
    ]


def test_human_summary_describes_every_dimension_and_the_weighted_score() -> None:
    golden = D.load_golden("demo").head(4)
    got = M.human_summary(golden, J.get_rubric("fine_grained")).set_index("human score")
    assert list(got.index) == [
        "human_accuracy", "human_completeness", "human_clarity", "human_weighted"
    ]  # fmt: skip
    assert got.loc["human_accuracy", "items"] == 4
    assert got.loc["human_accuracy", "mean"] == pytest.approx(golden["human_accuracy"].mean())


def test_panel_versus_and_outlier_items() -> None:
    golden = pd.DataFrame({"item": ["i0", "i1"], "human_accuracy": [6.0, 2.0]})
    judgments = pd.DataFrame(
        {
            "judge": ["j1", "j2", "j3"] * 2,
            "item": ["i0"] * 3 + ["i1"] * 3,
            "replicate": 0,
            "status": "scored",
            "score_accuracy": [5.0, 6.0, 10.0, 2.0, 2.0, 3.0],
        }
    )
    panel = M.golden_panel(
        judgments, golden, dimension="accuracy", method="mean", outlier_distance=2, tolerance=1
    )
    summary = M.panel_summary(panel, 0.95)
    # i0: mean 7 vs human 6 -> within 1; i1: mean 7/3 vs 2 -> within 1: 2 of 2
    assert summary["within_k"] == pytest.approx(wilson_interval(2, 2).estimate)
    single = pd.DataFrame(
        {
            "judge": ["j1"], "dimension": ["accuracy"], "n_scored": [2], "within_k": [0.5],
            "within_k_low": [0.1], "within_k_high": [0.9],
        }
    )  # fmt: skip
    versus = M.panel_versus(single, panel, summary, dimension="accuracy", label="panel")
    assert versus["judge"].tolist() == ["j1", "panel"]
    assert versus["n_scored"].tolist() == [2, 2]
    outliers = M.outlier_items(panel)  # only i0 has outliers (j1: |5 - 8| = 3, j3: |10 - 5.5|)
    assert outliers["item_id"].tolist() == ["i0"]
    assert outliers["outliers"].tolist() == ["j1, j3"]
    assert outliers["human"].tolist() == ["6"]


def test_retest_table_and_pair_measures_are_rows_of_intervals() -> None:
    iv = Interval(0.5, 0.25, 0.75, 0.95)
    retest = ag.RetestAgreement(
        n=10, exact=iv, within_1=iv, pearson=iv, spearman=iv, kappa=0.3, quadratic_kappa=0.9
    )
    table = M.retest_table(retest)
    assert table["statistic"].tolist()[-2:] == ["Cohen's kappa", "quadratic kappa"]
    assert table.iloc[-1]["estimate"] == 0.9 and math.isnan(table.iloc[-1]["low"])
    part = {"x": 0.5, "x_low": 0.4, "x_high": 0.6}
    summary = {
        "position": {
            **{k.replace("x", "consistency"): v for k, v in part.items()},
            **{k.replace("x", "first_win_rate"): v for k, v in part.items()},
        },
        "longer": {k.replace("x", "p_longer"): v for k, v in part.items()},
        "human": {
            **{k.replace("x", "with_ties"): v for k, v in part.items()},
            **{k.replace("x", "without_ties"): v for k, v in part.items()},
        },
    }
    measures = M.pair_measures(summary)
    assert len(measures) == 5 and measures["share"].tolist() == [0.5] * 5


def test_length_points_take_log_ratios_of_the_first_replicate() -> None:
    long = _long([7.0, 5.0, math.nan], [7.0, 7.0, 5.0]).assign(answer_chars=[100, 400, 50])
    rng = np.random.default_rng(0)
    points = M.length_points(long, judge="j", dimension="accuracy", typical=200.0, rng=rng)
    assert points["log_ratio"].tolist() == pytest.approx([math.log(0.5), math.log(2.0)])
    assert points["diff"].tolist() == [0.0, -2.0]  # the unscored item is left out
    assert (abs(points["shown"] - points["diff"]) <= 0.12).all()


def test_length_fit_is_the_slope_through_the_mean_point() -> None:
    points = pd.DataFrame({"log_ratio": [0.0, 1.0, 3.0], "diff": [0.0, 1.0, 5.0]})
    line = M.length_fit(points, slope=2.0, n=4)
    # mean point (4/3, 2); x from 0 to 3 in 3 steps; fit = 2 + 2·(x − 4/3)
    assert line["log_ratio"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert line["fit"].tolist() == pytest.approx([-2 / 3, 4 / 3, 10 / 3, 16 / 3])


def test_unscored_kinds_counts_by_judge_and_cause() -> None:
    unscored = pd.DataFrame({"judge": ["a", "a", "b"], "unscored_kind": ["nan", "nan", "empty"]})
    assert M.unscored_kinds(unscored).to_dict("records") == [
        {"judge": "a", "unscored_kind": "nan", "count": 2},
        {"judge": "b", "unscored_kind": "empty", "count": 1},
    ]
