"""The HLE notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.HleResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``.
"""

from __future__ import annotations

from typing import cast

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from evalbench import plots

from .records import HleResult


def accuracy(result: HleResult) -> Figure:
    """Each system's accuracy over all questions (official denominator), Wilson intervals."""
    level = f"{result.params.confidence_level:.0%}"
    ax = plots.interval_bars(
        result.summary.systems, x="system", y="accuracy", low="ci_low", high="ci_high",
        ylabel="accuracy (judge, official denominator)",
        title=f"Accuracy over all questions (official denominator), {level} Wilson intervals",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def reliability(result: HleResult) -> Figure:
    """Accuracy against the stated confidence in fixed-width bins, per system
    (:func:`evalbench.plots.reliability_diagram`)."""
    level = f"{result.params.confidence_level:.0%}"
    ax = plots.reliability_diagram(
        result.summary.reliability, ylabel="accuracy (judge)",
        title=f"Reliability diagram: accuracy vs stated confidence ({level} Wilson intervals)",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def categories(result: HleResult) -> Figure:
    """Accuracy per category and system, Wilson intervals (legend beside the bars)."""
    level = f"{result.params.confidence_level:.0%}"
    fig, ax = plt.subplots(figsize=(10, 4.2))
    plots.interval_bars(
        result.summary.categories, x="category", y="accuracy", low="ci_low", high="ci_high",
        hue="system", ax=ax, ylabel="accuracy (judge, official denominator)",
        title=f"Accuracy per category, {level} Wilson intervals",
    )  # fmt: skip
    ax.tick_params(axis="x", labelrotation=20)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    fig.tight_layout()
    return fig
