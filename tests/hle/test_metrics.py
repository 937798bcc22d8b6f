"""HLE metrics by hand: the official accuracy and Wald half-width, Wilson, the official
calibration error with its bins and last-bin rule (and its failure below 100 items), the
corrected one, and the per-system / per-category / reliability tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hle.cases import frame, record, wilson_by_hand

from evalbench import calibration
from evalbench.hle import metrics

# ----------------------------------------------------------------------------- accuracy


def test_official_accuracy_and_wald_half_width_by_hand():
    # 7 of 27: 100·7/27 = 25.9259… → 25.93 (rounded first, as the official script does);
    # 1.96·√(25.93·74.07/27) = 1.96·√71.1346 = 1.96·8.43413 = 16.5309 → 16.53
    assert metrics.official_accuracy(7, 27) == 25.93
    assert metrics.official_half_width(25.93, 27) == 16.53
    assert metrics.official_half_width(25.93, 27) == round(1.96 * math.sqrt(25.93 * 74.07 / 27), 2)
    # 50 of 100: √(50·50/100) = 5 → 1.96·5 = 9.8
    assert (metrics.official_accuracy(50, 100), metrics.official_half_width(50.0, 100)) == (
        50.0,
        9.8,
    )
    # 0 of n: the Wald half-width collapses to 0 (Wilson does not)
    assert metrics.official_half_width(metrics.official_accuracy(0, 40), 40) == 0.0
    assert metrics.official_accuracy(0, 0) is None and metrics.official_half_width(None, 0) is None


def test_wilson_beside_wald_by_hand():
    table = metrics.system_table(frame([
        record("s", f"q{i}", "Math", "scored", correct=i < 3, confidence=50) for i in range(10)
    ]))  # fmt: skip
    row = table.iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx(wilson_by_hand(3, 10))
    assert row.official_pct == 30.0
    assert row.wald_pct == round(1.96 * math.sqrt(30 * 70 / 10), 2)  # = 28.4


# ----------------------------------------------------------------------------- calibration


def _two_groups(rng_seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """250 items: 100 at confidence 0.2, all wrong; 150 at 0.9 with 90 right (shuffled)."""
    conf = np.array([0.2] * 100 + [0.9] * 150)
    right = np.array([False] * 100 + [True] * 90 + [False] * 60)
    order = np.random.default_rng(rng_seed).permutation(250)
    return conf[order], right[order]


def test_official_bins_with_the_last_bin_stretched():
    assert calibration.bin_edges(250) == [(0, 100), (100, 250)]
    assert calibration.bin_edges(200) == [(0, 100), (100, 200)]
    assert calibration.bin_edges(299) == [(0, 100), (100, 299)]
    assert calibration.bin_edges(150) == [(0, 150)]
    assert calibration.bin_edges(99) == []


def test_official_calibration_error_on_250_items_counts_only_the_first_bin():
    conf, right = _two_groups()
    official = calibration.calib_err_official(conf, right)
    # bins [0, 100) and [100, 250); the loop skips the last: √(100/250 · (0.2 − 0)²) = √0.016
    assert official.value == pytest.approx(math.sqrt(0.016))  # 0.126491
    assert official.percent == 100 * round(math.sqrt(0.016), 2)  # 13.000000000000002, as printed
    assert official.n == 250 and official.reason is None
    corrected = calibration.calib_err_corrected(conf, right)
    # every bin: √(0.4 · 0.2² + 0.6 · (0.9 − 0.6)²) = √(0.016 + 0.054) = √0.07
    assert corrected.value == pytest.approx(math.sqrt(0.07))  # 0.264575
    assert corrected.percent == pytest.approx(100 * math.sqrt(0.07))


def test_the_other_norms_on_the_same_bins():
    conf, right = _two_groups()
    assert calibration.calib_err_official(conf, right, p="1").value == pytest.approx(0.4 * 0.2)
    assert calibration.calib_err_official(conf, right, p="infty").value == pytest.approx(0.2)
    assert calibration.calib_err_corrected(conf, right, p="1").value == pytest.approx(
        0.4 * 0.2 + 0.6 * 0.3
    )
    assert calibration.calib_err_corrected(conf, right, p="infty").value == pytest.approx(0.3)


def test_fewer_than_100_items_official_undefined_corrected_one_bin():
    conf = np.full(99, 0.8)
    right = np.arange(99) % 2 == 0  # 50 of 99 right
    official = calibration.calib_err_official(conf, right)
    assert official.value is None and official.percent is None
    assert "IndexError" in official.reason and "99" in official.reason
    corrected = calibration.calib_err_corrected(conf, right)
    assert corrected.value == pytest.approx(abs(0.8 - 50 / 99))  # one bin, weight 1
    assert calibration.calib_err_corrected([], []).value is None


def test_100_to_199_items_give_exactly_zero_officially():
    conf = np.full(150, 1.0)
    right = np.zeros(150, bool)  # maximally overconfident
    official = calibration.calib_err_official(conf, right)
    assert official.value == 0.0 and official.percent == 0.0
    assert "one bin" in official.reason
    assert calibration.calib_err_corrected(conf, right).value == pytest.approx(1.0)


def test_200_items_all_sure_all_wrong():
    official = calibration.calib_err_official(np.ones(200), np.zeros(200, bool))
    # only the first bin counts, weight 100/200: √(0.5 · 1) = 0.70711 → 100·0.71 = 71
    assert official.value == pytest.approx(math.sqrt(0.5))
    assert official.percent == pytest.approx(71.0)


def test_the_bin_table_says_which_bins_the_official_loop_counts():
    conf, right = _two_groups()
    bins = metrics.calibration_bins(conf, right)
    assert bins[["first", "last", "n"]].to_numpy().tolist() == [[0, 99, 100], [100, 249, 150]]
    assert bins["mean_confidence"].tolist() == pytest.approx([0.2, 0.9])
    assert bins["accuracy"].tolist() == pytest.approx([0.0, 0.6])
    assert bins["weight"].tolist() == pytest.approx([0.4, 0.6])
    assert bins["official"].tolist() == [True, False]
    assert metrics.calibration_bins([0.5] * 3, [True] * 3)["official"].tolist() == [False]


# ----------------------------------------------------------------------------- tables


def _records():
    return frame([
        record("s", "m1", "Math", "scored", True, 90),
        record("s", "m2", "Math", "scored", True, 80),
        record("s", "m3", "Math", "scored", False, 60),
        record("s", "m4", "Math", "unscored"),
        record("s", "p1", "Physics", "scored", True, 50),
        record("s", "p2", "Physics", "no_response"),
        record("s", "p3", "Physics", "scored", False, None, confidence_note="missing"),
    ])  # fmt: skip


def test_category_table_arithmetic():
    table = metrics.category_table(_records()).set_index("category")
    math_row, physics = table.loc["Math"], table.loc["Physics"]
    # Math: 4 asked, 3 scored (2 right), 1 unscored (counted wrong)
    assert (math_row.n, math_row.scored, math_row.unscored, math_row.correct) == (4, 3, 1, 2)
    assert math_row.accuracy == pytest.approx(2 / 4)
    assert math_row.accuracy_scored == pytest.approx(2 / 3)
    assert math_row.official_pct == 50.0 and math_row.wald_pct == 49.0  # 1.96·√(50·50/4) = 49
    # confidences 0.9, 0.8, 0.6: mean 0.7667 vs accuracy 0.6667 → +0.1 (one bin of 3)
    assert math_row.mean_confidence == pytest.approx((0.9 + 0.8 + 0.6) / 3)
    assert math_row.overconfidence == pytest.approx(0.1)
    assert math_row.calib_corrected_pct == pytest.approx(10.0)
    assert math.isnan(math_row.calib_official_pct) and "IndexError" in math_row.calib_official_note
    # Physics: 3 asked, 1 without an answer; of the 2 scored only one has a confidence
    assert (physics.n, physics.no_response, physics.correct) == (3, 1, 1)
    assert physics.accuracy == pytest.approx(1 / 3) and physics.official_pct == 33.33
    assert physics.n_calibration == 1 and physics.confidence_missing == 1
    assert physics.overconfidence == pytest.approx(0.5 - 1.0)  # underconfident
    overall = metrics.system_table(_records()).iloc[0]
    assert (overall.n, overall.correct) == (7, 3) and overall.accuracy == pytest.approx(3 / 7)
    assert overall.n_calibration == 4  # 90, 80, 60, 50


def test_an_out_of_range_confidence_stays_in_the_official_number_only():
    rows = [record("s", f"q{i}", "Math", "scored", False, 50) for i in range(120)]
    rows[0] = record("s", "q0", "Math", "scored", False, None, confidence_official=150.0,
                     confidence_note="out_of_range")  # fmt: skip
    table = metrics.system_table(frame(rows)).iloc[0]
    assert table.n_calibration_official == 120 and table.n_calibration == 119
    assert table.confidence_out_of_range == 1


def test_reliability_bins_by_hand():
    table = metrics.reliability_frame(_records(), bins=10).set_index("bin")
    assert list(table.index) == ["50-60", "60-70", "80-90", "90-100"]
    assert table.loc["90-100", "n"] == 1 and table.loc["90-100", "accuracy"] == 1.0
    assert table.loc["60-70", "gap"] == pytest.approx(0.6 - 0.0)
    assert (table.loc["50-60", "ci_low"], table.loc["50-60", "ci_high"]) == pytest.approx(
        wilson_by_hand(1, 1)
    )
    full = metrics.reliability_frame(frame([record("s", "a", "M", "scored", True, 100)]), bins=10)
    assert full["bin"].tolist() == ["90-100"]  # 100 falls in the last bin


def test_judge_table_counts_parse_paths_and_confidence_notes():
    rows = _records()
    rows.loc[rows.id == "m2", "parse_method"] = "text"
    rows.loc[rows.id == "m3", "confidence_note"] = "fraction"
    table = metrics.judge_table(rows).iloc[0]
    assert (table.judged, table.scored, table.unscored) == (6, 5, 1)  # p2 was never judged
    assert (table.json, table.text) == (4, 1)
    assert (table.confidence_ok, table.fraction, table.missing) == (3, 1, 1)


def test_truth_table_compares_estimates_with_the_simulation():
    rows = [record("s", f"q{i}", "M", "scored", correct=i < 2, confidence=80, truth_correct=i < 2,
                   truth_p_correct=0.5, truth_stated=80.0) for i in range(4)]  # fmt: skip
    table = metrics.truth_table(frame(rows)).iloc[0]
    assert table.true_accuracy == 0.5 and table.expected_accuracy == 0.5
    assert table.judge_agreement == 1.0
    assert table.true_calibration == pytest.approx(0.3)  # √mean((0.8 − 0.5)²)
    assert table.true_overconfidence == pytest.approx(0.3)
    assert table.measured_overconfidence == pytest.approx(0.8 - 0.5)
