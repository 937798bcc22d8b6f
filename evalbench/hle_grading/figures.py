"""The expert-grading notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.HleGradingResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from evalbench import plots

from .metrics import heatmap_matrix, scored_sources
from .records import HleGradingResult


def heatmaps(result: HleGradingResult) -> Figure:
    """Mean overall score by category × difficulty, one panel per source with a scored
    answer (same rows in every panel; a blank cell has no scored answer)."""
    sources = scored_sources(result.sources, result.summary.long)
    if not sources:
        fig, ax = plt.subplots(figsize=(5.5, 2))
        ax.set_axis_off()
        ax.set_title("No scored answer: nothing to draw")
        return fig
    cells = result.summary.cells
    matrices = [heatmap_matrix(cells, source) for source in sources]
    categories = sorted(set().union(*(m.index for m in matrices)))
    fig, axes = plt.subplots(1, len(sources), figsize=(2.2 + 4.2 * len(sources), 4),
                             squeeze=False, sharey=True)  # fmt: skip
    for i, (ax, source, matrix) in enumerate(zip(axes[0], sources, matrices, strict=True)):
        plots.heatmap(matrix.reindex(categories), ax=ax, vmin=0, vmax=100, fmt=".0f",
                      title=f"Mean overall score (0–100): {source}")  # fmt: skip
        if i:
            ax.set_ylabel("")
    fig.tight_layout()
    return fig


def _overall_series(result: HleGradingResult) -> dict[str, pd.Series]:
    long = result.summary.long
    overall = long[long["dimension"] == "overall"]
    series = {f"judge: {s}": part["score"] for s, part in overall.groupby("source", sort=False)}
    human = overall.dropna(subset=["human"]).drop_duplicates("id")["human"]
    if len(human):
        series["human baseline"] = human
    return series


def distribution(result: HleGradingResult) -> Figure:
    """Histograms of the overall score per source (judged) and of the human baseline."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    series = _overall_series(result)
    for label, scores in series.items():
        ax.hist(scores, bins=range(0, 105, 5), alpha=0.5, label=label)
    ax.set(xlabel="overall score (0–100)", ylabel="answers", title="Overall score distribution")
    plots.legend_beside(ax)
    fig.tight_layout()
    return fig


def confidence_gap(result: HleGradingResult) -> Figure:
    """The judge's confidence against its absolute gap to the human overall score (scored
    answers with a human baseline; empty axes without one)."""
    long = result.summary.long
    overall = long[long["dimension"] == "overall"].dropna(subset=["human"])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(overall["judge_confidence"], overall["diff"].abs(), alpha=0.7)
    title = "Judge confidence vs its gap to the humans"
    if not len(overall):
        title += ": no human baseline"
    ax.set(xlabel="judge confidence (0–100)", ylabel="|judge − human| (overall, points)",
           xlim=(-2, 102), title=title)  # fmt: skip
    fig.tight_layout()
    return fig
