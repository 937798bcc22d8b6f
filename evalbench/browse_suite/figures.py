"""The browse-suite notebook's figures: one function per figure, each a new one.

Each takes a :class:`~.records.BrowseSuiteResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``.
"""

from __future__ import annotations

from typing import cast

from matplotlib.figure import Figure

from evalbench import plots

from .records import BrowseSuiteResult


def success_by_level(result: BrowseSuiteResult) -> Figure:
    """Success rate per level and system with its Wilson interval (the "all" row left out)."""
    levels = result.levels[result.levels["level"] != "all"]
    frame = levels.assign(level="L" + levels["level"].astype(str))
    ax = plots.interval_bars(
        frame,
        x="level",
        y="success_rate",
        low="success_low",
        high="success_high",
        hue="system",
        ylabel="success rate",
        title=f"Success by level, {result.params.confidence_level:.0%} Wilson intervals",
    )
    return cast(Figure, ax.figure)
