"""Shared plots: legends sit beside the axes (inside they hid bars), and a plot with nothing
labelled draws without a legend instead of failing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from evalbench import plots


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _outside_right(ax) -> bool:
    ax.figure.canvas.draw()
    return ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_interval_bars_put_the_hue_legend_beside_the_bars():
    df = pd.DataFrame({"x": ["L1", "L1"], "s": ["a", "b"], "y": [0.9, 0.95],
                       "lo": [0.8, 0.9], "hi": [1.0, 1.0]})  # fmt: skip
    ax = plots.interval_bars(df, x="x", y="y", low="lo", high="hi", hue="s")
    assert _outside_right(ax) and ax.get_legend().get_title().get_text() == "s"


def test_stacked_shares_legend_beside_and_no_parts_draws_without_one():
    df = pd.DataFrame({"label": ["a", "b"], "win": [0.7, 0.2], "loss": [0.3, 0.8]})
    assert _outside_right(plots.stacked_shares(df, label="label", parts=["win", "loss"]))
    # an agent run where no tool was called: no parts; a legend of 0 columns raised before
    ax = plots.stacked_shares(df[["label"]], label="label", parts=[])
    assert ax.get_legend() is None
