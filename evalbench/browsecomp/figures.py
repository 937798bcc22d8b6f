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
    ax = plots.reliability_diagram(
        result.reliability,
        title="Stated confidence vs accuracy (graded questions, fixed-width bins)",
    )
    return cast(Figure, ax.figure)
