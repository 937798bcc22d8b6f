"""The datagen notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.DatagenResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``. Intervals
are labelled with their level.
"""

from __future__ import annotations

from typing import cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalbench import plots

from .metrics import judge_columns
from .records import DatagenResult
from .scoring import DIMENSIONS, EXCELLENT_SCORE, PASS_SCORE


def topic_bars(result: DatagenResult) -> Figure:
    """Valid problems per topic (horizontal bars)."""
    topics = result.summary.topics
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.35 * len(topics)))
    plots.bars(
        topics["count"],
        ax=ax,
        title=f"Valid problems per topic (n = {len(result.problems)})",
        xlabel="problems",
        ylabel="topic",
        horizontal=True,
    )
    return fig


def answer_histogram(result: DatagenResult) -> Figure:
    """Shares of generated and real answers in bins of 50 over 0–999."""
    generated, real = result.problems["answer"], result.real["answer"]
    fig, ax = plt.subplots()
    ax.hist(
        [generated, real],
        bins=np.arange(0, 1001, 50).tolist(),
        weights=[
            np.full(len(generated), 1 / max(1, len(generated))),
            np.full(len(real), 1 / max(1, len(real))),
        ],
        label=[f"generated (n = {len(generated)})", f"real AIME (n = {len(real)})"],
    )
    ax.set_xlabel("answer")
    ax.set_ylabel("share of answers (bins of 50)")
    ax.set_title("Answers of generated and real problems")
    plots.legend_beside(ax)
    return fig


def judge_dimension_bars(result: DatagenResult) -> Figure:
    """Mean judge score per dimension with bootstrap intervals."""
    metrics = result.summary.judge.metrics.reset_index() if result.summary.judge else None
    dims = metrics[metrics["metric"].isin(DIMENSIONS)] if metrics is not None else pd.DataFrame()
    level = result.params.confidence_level
    ax = plots.interval_bars(
        dims,
        x="metric",
        y="estimate",
        low="low",
        high="high",
        ylim=(1, 5),
        ylabel="mean judge score (1-5)",
        title=f"Judge score per dimension, {level:.0%} bootstrap intervals",
    )
    return cast(Figure, ax.figure)


def judge_score_histogram(result: DatagenResult) -> Figure:
    """Distribution of the judge's weighted scores with the pass and excellent bars."""
    scores = judge_columns(result.judge_results)
    scores = scores[scores["status"] == "scored"]["weighted"]
    fig, ax = plt.subplots()
    ax.hist(scores, bins=np.arange(0.875, 5.2, 0.25).tolist(), color="tab:blue")
    for x, name in ((PASS_SCORE, "pass"), (EXCELLENT_SCORE, "excellent")):
        ax.axvline(x, color="black", linestyle="--", linewidth=1)
        ax.text(x, ax.get_ylim()[1] * 0.95, f" {name}", va="top")
    ax.set_xlabel("judge score (mean of the four dimensions)")
    ax.set_ylabel("problems")
    ax.set_title(f"Distribution of judge scores (n = {len(scores)})")
    return fig


def judge_truth_scatter(result: DatagenResult) -> Figure:
    """Judge score against the simulated problems' hidden quality (identity line)."""
    if not len(result.judge_truth):
        raise ValueError("no hidden quality to compare with (the generator is not simulated)")
    ax = plots.identity_scatter(
        result.judge_truth,
        x="true_quality",
        y="judge",
        xlabel="hidden true quality (1-5)",
        ylabel="judge score (1-5)",
        title="Judge score vs hidden true quality (simulated)",
    )
    return cast(Figure, ax.figure)


def win_rate_bars(result: DatagenResult) -> Figure:
    """Win rate (ties half) and win/loss/tie shares, with parity and the threshold."""
    win, p = result.summary.win, result.params
    if win is None:
        raise ValueError("no comparisons in this run (win_rate_pairs: 0)")
    rates = win.table.reset_index()
    rates["metric"] = rates["metric"].replace({"win_rate": "win rate (ties half)"})
    level = p.confidence_level
    ax = plots.interval_bars(
        rates,
        x="metric",
        y="estimate",
        low="low",
        high="high",
        ylabel="share of scored pairs",
        title=f"Generated vs real AIME problems (n = {win.n} pairs), {level:.0%} intervals",
    )
    ax.axhline(0.5, color="black", linestyle=":", linewidth=1, label="parity (50%)")
    bar = p.thresholds.win_rate
    ax.axhline(bar, color="tab:red", linestyle="--", linewidth=1, label=f"threshold ({bar:.0%})")
    ax.set_xlabel("")
    plots.legend_beside(ax)
    return cast(Figure, ax.figure)


def similarity_histogram(result: DatagenResult) -> Figure:
    """Similarity of each generated problem to its closest real problem, with the threshold."""
    dups = result.duplicates
    fig, ax = plt.subplots()
    ax.hist(dups.top["similarity"].dropna(), bins=np.linspace(0, 1, 41).tolist())
    ax.axvline(dups.threshold, color="black", linestyle="--", linewidth=1, label="threshold")
    ax.set_xlabel("similarity to the closest real problem")
    ax.set_ylabel("generated problems")
    ax.set_title(f"Closest real problem per generated problem (n = {len(dups.top)})")
    plots.legend_beside(ax)
    return fig
