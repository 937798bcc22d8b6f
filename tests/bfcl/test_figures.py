"""BFCL figures on the hand-made result (three systems, one category; see cases.py)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from bfcl.cases import hand_made_result
from figure_checks import legends_over_data, unsafe_colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from evalbench.bfcl import figures
from evalbench.bfcl.metrics import summarize


@pytest.fixture
def result(tmp_path):
    return hand_made_result(tmp_path)


def test_accuracy_heatmap_columns_are_systems_in_order_and_the_title_states_the_level(result):
    fig = figures.accuracy_heatmap(result._replace(summary=summarize(result.verdicts)))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Accuracy by category (cell: accuracy, [95% Wilson interval])"
    # a column per system, a row per category: 18 categories × 3 systems left each label
    # 1.3 cells wide when the categories were the columns
    assert [t.get_text() for t in ax.get_xticklabels()] == ["files", "simmy", "real"]
    assert ax.get_ylabel() == "BFCL category"
    # drawn at font size 8 inside the figure function, whatever the caller's rcParams
    assert ax.get_xticklabels()[0].get_fontsize() == 8
    assert unsafe_colormaps(fig) == set()  # viridis, not red–yellow–green
    plt.close(fig)


@pytest.mark.slow
def test_every_bfcl_figure_keeps_its_legend_off_the_data(result):
    with_formats = _with_formats(result)
    for fig in (figures.format_accuracy(with_formats), figures.format_spread(with_formats),
                figures.error_shares(result)):  # fmt: skip
        assert legends_over_data(fig) == [] and unsafe_colormaps(fig) == set()
        plt.close(fig)


def test_error_shares_colour_bar_is_in_percent(result):
    fig = figures.error_shares(result)
    assert isinstance(fig.axes[-1].yaxis.get_major_formatter(), PercentFormatter)
    plt.close(fig)


def _with_formats(result):
    from evalbench.bfcl.format_sensitivity import CONFIGS

    # system a: item i1 right in the first format only; i2 right everywhere
    rows = [("a", f"i{i}", config, i == 2 or config == CONFIGS[0])
            for config in CONFIGS for i in (1, 2)]  # fmt: skip
    import pandas as pd

    formats = pd.DataFrame(rows, columns=["system", "item_id", "config", "valid"])
    return result._replace(formats=formats)


def test_format_figures_plot_each_format_and_the_spread(result):
    fig = figures.format_accuracy(_with_formats(result))
    line = fig.axes[0].containers[0].lines[0]  # the error bar container's data line
    assert list(line.get_ydata()) == [1.0] + [0.5] * 25  # 2 of 2, then 1 of 2
    plt.close(fig)
    fig = figures.format_spread(_with_formats(result))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a"]
    observed = next(c for c in ax.collections if c.get_label() == "observed")
    assert observed.get_offsets()[0][0] == 0.5  # largest difference: 1.0 - 0.5
    # shuffled, i1's one right answer lands in another format: still 1.0 - 0.5, every time
    assert ax.get_lines()[0].get_xdata()[0] == 0.5
    plt.close(fig)


def test_format_figures_refuse_a_run_without_format_sensitivity(result):
    for draw in (figures.format_accuracy, figures.format_spread):
        with pytest.raises(ValueError, match="format sensitivity was not studied"):
            draw(result)
