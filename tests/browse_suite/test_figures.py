"""The success figure: one bar per level and system, and a legend that hides none of them."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from evalbench.browse_suite import figures
from evalbench.browse_suite.records import BrowseSuiteParams, BrowseSuiteResult

SYSTEMS = ["careful", "hasty", "no-browse"]


def _result(rate: float) -> BrowseSuiteResult:
    """A result whose every system succeeds at ``rate`` on every level (interval ±0.1)."""
    levels = pd.DataFrame(
        [
            {"system": s, "level": level, "success_rate": rate,
             "success_low": rate - 0.1, "success_high": min(rate + 0.1, 1.0)}
            for s in SYSTEMS
            for level in ["1", "2", "3", "4", "5", "all"]
        ]
    )  # fmt: skip
    params = BrowseSuiteParams.model_validate(
        {
            "title": "t",
            "systems": [{"name": s, "provider": "sim"} for s in SYSTEMS],
            "judge": {"name": "judge", "provider": "sim"},
        }
    )
    empty = pd.DataFrame()
    return BrowseSuiteResult(
        params, [], empty, empty, empty, levels, empty, empty, empty, empty, (), 0, empty,
        frozenset(SYSTEMS),
    )  # fmt: skip


def test_the_legend_covers_no_bar_even_when_every_bar_is_full():
    fig = figures.success_by_level(_result(0.95))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    bars = [p.get_window_extent(renderer) for p in ax.patches]
    assert len(bars) == 5 * 3  # five levels (no "all"), three systems
    assert [t.get_text() for t in ax.get_legend().get_texts()] == SYSTEMS
    assert not any(legend.overlaps(bar) for bar in bars)
    plt.close(fig)
