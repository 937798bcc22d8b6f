"""The golden-set figures: one new Figure each, labels by hand, and what the run lacks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from figure_checks import legends_over_data, unsafe_colormaps
from matplotlib.figure import Figure

from evalbench.judge_golden import figures


@pytest.mark.slow
def test_agreement_draws_one_row_per_judge_and_dimension_on_a_new_figure(result) -> None:
    before = set(plt.get_fignums())
    fig = figures.agreement(result)
    assert isinstance(fig, Figure) and fig.number not in before
    ax = fig.axes[0]
    assert ax.get_title() == "±1 agreement per judge and dimension (95% Wilson)"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(result.agreement) and labels[0] == "a · accuracy"
    plt.close(fig)


@pytest.mark.slow
def test_length_bias_draws_the_line_through_the_mean_point(result) -> None:
    fig = figures.length_bias(result)
    line = fig.axes[0].get_lines()[0]
    x, y = line.get_xydata().T
    points, slope = result.length, result.slope.estimate
    # the line passes through (mean log_ratio, mean diff) with the OLS slope
    mid = points["diff"].mean() + slope * (x - points["log_ratio"].mean())
    np.testing.assert_allclose(y, mid)
    assert (x[0], x[-1]) == (points["log_ratio"].min(), points["log_ratio"].max()) and len(x) == 20
    assert line.get_label() == f"OLS slope {slope:+.2f}"
    plt.close(fig)


def test_drawn_draws_only_what_the_run_computed(result) -> None:
    fig = figures.drawn(figures.pairs_bias, result)
    assert fig is not None and fig.axes[0].get_xlim() == (0, 1)
    plt.close(fig)
    without = result._replace(pairs=None, confusion=None)
    before = set(plt.get_fignums())
    assert figures.drawn(figures.pairs_bias, without) is None
    assert figures.drawn(figures.confusion, without) is None
    assert set(plt.get_fignums()) == before  # nothing drawn
    with pytest.raises(ValueError, match="pairwise_judge is not set"):
        figures.pairs_bias(without)
    with pytest.raises(ValueError, match="no score confusion on accuracy"):
        figures.confusion(without)


@pytest.mark.slow
def test_no_legend_covers_data_and_every_colour_map_is_colour_blind_safe(result) -> None:
    # the ±1 agreement figure's legend sat over the bottom rows' intervals (lower left)
    drawings = (figures.agreement, figures.length_bias, figures.panel, figures.pairs_bias,
                figures.confusion)  # fmt: skip
    for draw in drawings:
        fig = draw(result)
        assert legends_over_data(fig) == [], draw.__name__
        assert unsafe_colormaps(fig) == set(), draw.__name__
        plt.close(fig)


@pytest.mark.slow
def test_panel_has_the_forest_and_the_judge_matrix(result) -> None:
    fig = figures.panel(result)
    forest, matrix = fig.axes[:2]
    assert [t.get_text() for t in forest.get_yticklabels()][:2] == ["a", "b"]
    assert matrix.get_title() == "Judge vs judge: share within ±1"
    plt.close(fig)
