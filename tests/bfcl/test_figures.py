"""BFCL figures on the hand-made result (three systems, one category; see cases.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from bfcl.cases import hand_made_result
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from evalbench.bfcl import figures
from evalbench.bfcl.metrics import summarize


@pytest.fixture
def result(tmp_path):
    return hand_made_result(tmp_path)


def test_accuracy_heatmap_rows_are_systems_in_order_and_the_title_states_the_level(result):
    fig = figures.accuracy_heatmap(result._replace(summary=summarize(result.verdicts)))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Accuracy by category (cell: accuracy, [95% Wilson interval])"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["files", "simmy", "real"]
    # drawn at font size 8 inside the figure function, whatever the caller's rcParams
    assert ax.get_xticklabels()[0].get_fontsize() == 8
    plt.close(fig)


def test_error_shares_colour_bar_is_in_percent(result):
    fig = figures.error_shares(result)
    assert isinstance(fig.axes[-1].yaxis.get_major_formatter(), PercentFormatter)
    plt.close(fig)
