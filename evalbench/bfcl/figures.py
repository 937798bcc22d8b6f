"""The BFCL notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.BfclResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``.
"""

from __future__ import annotations

from typing import cast

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from evalbench import plots

from . import metrics, multi_turn_metrics
from .records import BfclResult


def accuracy_heatmap(result: BfclResult) -> Figure:
    """Categories × systems accuracy (a row per category: its name reads level and every
    cell has room for its Wilson interval), in viridis (no red against green)."""
    values, labels = metrics.accuracy_matrix(result.summary.categories, order=result.order)
    level = result.params.confidence_level
    values, labels = values.T, labels.T
    with plt.rc_context({"font.size": 8}):
        width = min(13.0, 3.0 + 1.5 * len(values.columns))
        fig, ax = plt.subplots(figsize=(width, 1.2 + 0.32 * len(values)))
        plots.heatmap(
            values, ax=ax, annot=labels.to_numpy(), fmt="", vmin=0, vmax=1, cmap="viridis",
            xlabel="system", ylabel="BFCL category",
            title=f"Accuracy by category (cell: accuracy, [{level:.0%} Wilson interval])",
        )  # fmt: skip
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right", rotation_mode="anchor")
    return fig


def error_shares(result: BfclResult) -> Figure:
    """Each system's failures by official error type, as shares (all categories pooled)."""
    _, shares = metrics.error_shares(result.verdicts, result.order)
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.3 * len(shares)))
    plots.heatmap(
        shares, ax=ax, fmt=".0%", cmap="Reds", vmin=0, xlabel="system",
        ylabel="official error type",
        title="Share of each system's failures by official error type (all categories pooled)",
    )  # fmt: skip
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", rotation_mode="anchor")
    fig.axes[-1].yaxis.set_major_formatter(PercentFormatter(1, decimals=0))
    return fig


def multi_turn_outcomes(result: BfclResult) -> Figure:
    """Each system's multi-turn items by official outcome, per category (100% bars)."""
    if result.multi_turn is None:
        raise ValueError("multi_turn_outcomes: no multi-turn item was scored in this study")
    shares = multi_turn_metrics.outcome_shares(result.multi_turn)
    parts = list(multi_turn_metrics.OUTCOMES.values())
    # correct in bluish green, the failures in Okabe–Ito colours apart from it and each other
    colors = ["#009E73", "#D55E00", "#E69F00", "#CC79A7", "#56B4E9", "#999999"]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.4 * len(shares)))
    plots.stacked_shares(
        shares, label="label", parts=parts, ax=ax, colors=colors,
        title="Multi-turn items by official outcome (first failing check)",
    )  # fmt: skip
    ax.xaxis.set_major_formatter(PercentFormatter(1, decimals=0))
    return fig


def multi_turn_behaviours(result: BfclResult) -> Figure:
    """Share of multi-turn items with each behaviour beyond the official score, per system,
    with Wilson intervals."""
    if result.multi_turn is None:
        raise ValueError("multi_turn_behaviours: no multi-turn item was scored in this study")
    level = result.params.confidence_level
    table = multi_turn_metrics.behaviour_table(result.multi_turn, level=level)
    fig, ax = plt.subplots(figsize=(10, 4))
    plots.interval_bars(
        table, x="behaviour", y="share", low="share_low", high="share_high", hue="system",
        ax=ax, ylabel="share of items",
        title=f"Multi-turn behaviours beyond the official score ({level:.0%} Wilson intervals)",
    )  # fmt: skip
    ax.set_xlabel("")
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", rotation_mode="anchor")
    ax.yaxis.set_major_formatter(PercentFormatter(1, decimals=0))
    return fig


def format_accuracy(result: BfclResult) -> Figure:
    """Each prompting system's accuracy in every prompt format, with Wilson intervals."""
    if result.formats is None or not len(result.formats):
        raise ValueError("format_accuracy: format sensitivity was not studied in this run")
    level = result.params.confidence_level
    table = metrics.format_accuracy(result.formats, level=level)
    fig, ax = plt.subplots(figsize=(12, 4.5))
    plots.interval_lines(
        table, x="format", y="accuracy", low="accuracy_low", high="accuracy_high", hue="system",
        ax=ax, ylabel="accuracy",
        title=f"Accuracy per prompt format (official order; {level:.0%} Wilson intervals)",
    )  # fmt: skip
    ax.set_xlabel("")
    plt.setp(ax.get_xticklabels(), rotation=60, ha="right", rotation_mode="anchor", fontsize=7)
    ax.yaxis.set_major_formatter(PercentFormatter(1, decimals=0))
    return fig


def format_spread(result: BfclResult) -> Figure:
    """Per prompting system, the largest accuracy difference between two formats (a diamond)
    beside what shuffling each item's answers across formats gives (mean and central range):
    a diamond inside the range is what a format-blind system would show."""
    if result.formats is None or not len(result.formats):
        raise ValueError("format_spread: format sensitivity was not studied in this run")
    params = result.params
    spread = metrics.format_spread(result.formats, seed=params.seed, level=params.confidence_level,
                                   rounds=params.bootstrap_rounds)  # fmt: skip
    shuffled = f"no format effect: shuffled mean, {params.confidence_level:.0%} range"
    spread = spread.rename(columns={"max_delta": "observed", "null_max_delta": shuffled})
    ax = plots.forest(
        spread, label="system", estimate=shuffled, low="null_low", high="null_high",
        truth="observed", xlabel="best format's accuracy − worst format's",
        title="Largest difference between formats vs what item noise alone gives",
    )  # fmt: skip
    ax.xaxis.set_major_formatter(PercentFormatter(1, decimals=0))
    return cast(Figure, ax.figure)
