"""HLE figures: each returns a new Figure with labelled axes, drawn from the result's tables;
the reliability diagram is core's, on the study's reliability table (fractions)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from evalbench.calibration import reliability_table
from evalbench.hle import figures


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_accuracy_bars_are_the_systems_accuracies(result):
    fig = figures.accuracy(result)
    ax = fig.axes[0]
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx(result.summary.systems["accuracy"].tolist())
    assert ax.get_ylabel() and ax.get_xlabel() == "system" and "95% Wilson" in ax.get_title()


def test_the_reliability_diagram_plots_the_reliability_table(result):
    fig = figures.reliability(result)
    ax = fig.axes[0]
    table = result.summary.reliability
    bars = [c for c in ax.containers if c.get_label() == "<b>sys</b>"]
    assert len(bars) == 1  # one system: one line through its bins, with error bars
    x, y = bars[0].lines[0].get_data()
    assert np.allclose(x, table["mean_confidence"]) and np.allclose(y, table["accuracy"])
    assert (ax.get_xlim(), ax.get_ylim()) == ((0, 1), (0, 1))  # fractions, as core draws them
    assert ax.get_xlabel() == "mean stated confidence" and ax.get_ylabel() == "accuracy (judge)"


def test_a_bin_with_no_right_answer_still_draws(result):
    # Wilson's low for 0 of 3 was 5.6e-17, above the estimate 0: matplotlib refused the
    # negative error bar (ValueError), so any run with such a bin lost its notebook; the
    # interval now holds its estimate exactly (tests/test_stats.py)
    frame = pd.DataFrame({"system": "s", "confidence": [0.05] * 3 + [0.95] * 3,
                          "correct": [False] * 3 + [True] * 3})  # fmt: skip
    table = reliability_table(frame, bins=10)
    assert table["ci_low"].iloc[0] == table["accuracy"].iloc[0] == 0.0  # the rounding case
    summary = result.summary._replace(reliability=table)
    ax = figures.reliability(result._replace(summary=summary)).axes[0]
    assert [c.get_label() for c in ax.containers] == ["s"]


def test_the_category_legend_sits_beside_the_bars(result):
    fig = figures.categories(result)
    ax = fig.axes[0]
    legend = ax.get_legend()
    fig.canvas.draw()
    # outside the axes on the right: it cannot cover a bar
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert ax.get_ylabel() and ax.get_xlabel() == "category"
