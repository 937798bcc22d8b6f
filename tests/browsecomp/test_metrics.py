"""BrowseComp statistics by hand: HLE's calib_err (quirks), the corrected variant,
BrowseComp-ZH's fixed bins, accuracy, the reliability table's inputs, tool counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench.browsecomp import metrics as m
from evalbench.calibration import calib_err_official


def test_calib_err_leaves_out_the_last_extended_bin():
    # beta 2, 5 items; sorted by confidence: (0.1, 0) (0.3, 1) | (0.5, 0) (0.7, 1) (0.9, 1)
    conf = np.array([0.9, 0.1, 0.5, 0.7, 0.3])
    hit = np.array([1, 0, 0, 1, 1])
    # only the first bin counts: |0.2 − 0.5| = 0.3, weight 2/5 -> sqrt(0.4 × 0.09) = sqrt(0.036)
    assert calib_err_official(conf, hit, beta=2, p="2").value == pytest.approx(math.sqrt(0.036))
    assert calib_err_official(conf, hit, beta=2, p="1").value == pytest.approx(0.4 * 0.3)
    assert calib_err_official(conf, hit, beta=2, p="infty").value == pytest.approx(0.3)


def test_calib_err_small_samples_behave_as_the_official_code():
    # the official code raises IndexError below beta items: undefined here, with the reason
    small = calib_err_official(np.ones(99), np.zeros(99))
    assert small.value is None and "IndexError" in small.reason
    assert calib_err_official(np.ones(150), np.zeros(150)).value == 0.0  # one bin, dropped
    # 200 items all at confidence 1 and wrong: only the first 100 count, weight 100/200
    assert calib_err_official(np.ones(200), np.zeros(200)).value == pytest.approx(math.sqrt(0.5))


def test_the_reported_hle_value_rounds_before_scaling():
    # sqrt(0.5) = 0.7071 -> round(·, 2) = 0.71 -> × 100
    assert m.hle_calibration_error([100.0] * 200, [False] * 200, 100) == pytest.approx(71.0)
    assert math.isnan(m.hle_calibration_error([50.0] * 99, [True] * 99, 100))


def test_the_corrected_variant_counts_every_bin():
    conf, hit = [90, 10, 50, 70, 30], [1, 0, 0, 1, 1]
    # bin 1: gap 0.3, weight 2/5 -> 0.036; bin 2: mean conf 0.7, accuracy 2/3, gap 1/30,
    # weight 3/5 -> 0.6/900; total 0.036 + 0.000667 -> sqrt, in percent
    expected = 100 * math.sqrt(0.4 * 0.3**2 + 0.6 * (0.7 - 2 / 3) ** 2)
    assert m.calibration_error_all_bins(conf, hit, beta=2) == pytest.approx(expected)
    assert m.calibration_error_all_bins([80, 80], [1, 0], beta=100) == pytest.approx(
        30.0
    )  # one bin
    assert math.isnan(m.calibration_error_all_bins([], [], 100))


def test_browsecomp_zh_fixed_width_bins():
    conf = [10, 30, 90, 100, 0]
    verdicts = ["yes", "no", "yes", "none", "no"]
    # bins: [0,20): 10 yes, 0 no -> acc .5, conf .05, |.45| × 2/5 = .18
    #       [20,40): 30 no -> acc 0, conf .3, .3 × 1/5 = .06
    #       [80,∞): 90 yes, 100 none -> acc .5, conf .95, .45 × 2/5 = .18   -> 0.42 × 100
    assert m.zh_calibration_error(conf, verdicts) == pytest.approx(42.0)
    assert m.zh_calibration_error([150], ["yes"]) == pytest.approx(50.0)  # unclipped: |1 − 1.5|
    assert m.zh_calibration_error([-5], ["yes"]) == pytest.approx(105.0)  # -1 indexes the last bin
    assert math.isnan(m.zh_calibration_error([], []))


def test_official_accuracy_over_graded_and_over_all():
    rows = [
        {"system": "s", "state": "answered", "status": "scored", "correct": True},
        {"system": "s", "state": "answered", "status": "scored", "correct": False},
        {"system": "s", "state": "answered", "status": "unscored", "correct": None},
        {"system": "s", "state": "timeout", "status": "not answered", "correct": None},
    ]
    frame = pd.DataFrame(
        [
            {
                **r,
                "reference_correct": False,
                "pr93_correct": r["correct"] is True,
                "zh_verdict": "yes" if r["correct"] else "none",
            }
            for r in rows
        ]
    )
    row = m.official_accuracy(frame).iloc[0]
    assert (row["graded"], row["unscored"], row["correct"]) == (2, 1, 1)
    assert row["accuracy"] == 0.5 and row["accuracy_all"] == 0.25  # 1/2 and 1/4
    assert row["reference_accuracy"] == 0.0 and row["pr93_accuracy"] == 0.25
    assert row["zh_accuracy"] == 0.25
