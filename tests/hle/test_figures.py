"""HLE figures: each returns a new Figure with labelled axes, drawn from the result's tables."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

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


def test_the_category_legend_sits_beside_the_bars(result):
    fig = figures.categories(result)
    ax = fig.axes[0]
    legend = ax.get_legend()
    fig.canvas.draw()
    # outside the axes on the right: it cannot cover a bar
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    assert ax.get_ylabel() and ax.get_xlabel() == "category"
