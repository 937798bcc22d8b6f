"""The BrowseComp notebook's figures: one function per figure, each a new one.

Each takes a :class:`~.records.BrowseCompResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``.
"""

from __future__ import annotations

from typing import cast

from matplotlib.figure import Figure

from evalbench import plots

from .records import BrowseCompResult


def reliability(result: BrowseCompResult) -> Figure:
    """Stated confidence against accuracy per fixed-width bin and system, with the bins'
    Wilson intervals (graded questions with a readable confidence)."""
    table = result.reliability
    # stats.wilson_interval(0, 3) puts the low end at 5.6e-17, above the estimate 0 (and
    # (10, 10) the high end just below 1): matplotlib refuses such a negative error bar
    table = table.assign(
        ci_low=table["ci_low"].clip(upper=table["accuracy"]),
        ci_high=table["ci_high"].clip(lower=table["accuracy"]),
    )
    ax = plots.reliability_diagram(
        table, title="Stated confidence vs accuracy (graded questions, fixed-width bins)"
    )
    return cast(Figure, ax.figure)
