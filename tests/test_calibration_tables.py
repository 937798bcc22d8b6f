"""The shared reliability table (:func:`evalbench.calibration.reliability_table`) and its
diagram (:func:`evalbench.plots.reliability_diagram`), computed by hand."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from evalbench.calibration import RELIABILITY_COLUMNS, reliability_table
from evalbench.plots import reliability_diagram
from evalbench.stats import wilson_interval


def test_bins_counts_and_gaps_by_hand() -> None:
    # system a: 0.05 and 0.08 in bin 0-10 (1 of 2 right); 0.3 in 30-40 (right); 1.0 in 90-100
    frame = pd.DataFrame({
        "system": ["a", "a", "a", "a", "b"],
        "confidence": [0.05, 0.08, 0.3, 1.0, 0.95],
        "correct": [True, False, True, False, True],
    })  # fmt: skip
    table = reliability_table(frame, bins=10)
    assert list(table.columns) == RELIABILITY_COLUMNS
    a = table[table["system"] == "a"].set_index("bin")
    assert list(a.index) == ["0-10", "30-40", "90-100"]
    assert a.loc["0-10", "n"] == 2
    assert a.loc["0-10", "mean_confidence"] == pytest.approx((0.05 + 0.08) / 2)
    assert a.loc["0-10", "accuracy"] == pytest.approx(0.5)
    assert a.loc["0-10", "gap"] == pytest.approx(0.065 - 0.5)
    assert (a.loc["30-40", "lower"], a.loc["30-40", "upper"]) == pytest.approx((0.3, 0.4))
    assert a.loc["90-100", "accuracy"] == 0.0  # confidence 1.0 falls in the last bin
    w = wilson_interval(1, 2)
    assert (a.loc["0-10", "ci_low"], a.loc["0-10", "ci_high"]) == pytest.approx((w.low, w.high))
    assert table[table["system"] == "b"]["bin"].tolist() == ["90-100"]


def test_percent_edges_land_in_the_bin_they_name() -> None:
    # 0.3 * 10 = 3.0000000000000004 and 0.7 * 10 = 7.000000000000001: bins 30-40 and 70-80
    frame = pd.DataFrame({"system": "s", "confidence": [0.3, 0.7, 0.6], "correct": True})
    assert reliability_table(frame)["bin"].tolist() == ["30-40", "60-70", "70-80"]


def test_zero_items_is_an_empty_table_and_the_diagram_still_draws() -> None:
    empty = pd.DataFrame({"system": [], "confidence": [], "correct": []})
    table = reliability_table(empty)
    assert table.empty and list(table.columns) == RELIABILITY_COLUMNS
    ax = reliability_diagram(table, title="t")
    assert ax.get_title() == "t" and ax.get_xlim() == (0, 1)
    matplotlib.pyplot.close("all")


def test_the_diagram_draws_one_series_per_system() -> None:
    frame = pd.DataFrame({"system": ["a", "b"], "confidence": [0.2, 0.9], "correct": [1, 0]})
    ax = reliability_diagram(reliability_table(frame))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["perfect calibration", "a", "b"]
    matplotlib.pyplot.close("all")
