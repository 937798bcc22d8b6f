"""The datagen figures on the hand-made result of test_report: a new Figure each, and a
figure of something the run did not compute named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from datagen.test_report import _result
from matplotlib.figure import Figure

from evalbench.datagen import figures


def test_topic_bars_counts_the_valid_problems_per_topic() -> None:
    result = _result()
    fig = figures.topic_bars(result)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Valid problems per topic (n = 3)"
    # one bar per topic of the study; algebra 2, geometry 1 (PROBLEMS of test_report), others 0
    widths = [bar.get_width() for bar in ax.patches]
    assert len(widths) == len(result.summary.topics) and sorted(w for w in widths if w) == [1, 2]
    plt.close(fig)


def test_figures_of_what_the_run_did_not_compute_say_so() -> None:
    result = _result()  # a real generator: no hidden quality
    with pytest.raises(ValueError, match="no hidden quality"):
        figures.judge_truth_scatter(result)
    no_pairs = result._replace(summary=result.summary._replace(win=None))
    with pytest.raises(ValueError, match="win_rate_pairs: 0"):
        figures.win_rate_bars(no_pairs)
