"""The golden-set notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.JudgeGoldenResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``. A figure of
something the run did not compute raises ``ValueError``; :func:`drawn` draws it only when
there is something to draw, so the notebook calls it unconditionally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from evalbench import plots

from .metrics import length_fit
from .records import JudgeGoldenResult


def agreement(result: JudgeGoldenResult) -> Figure:
    """±k agreement per judge and dimension (Wilson), with the simulated judges' expected
    values as open diamonds."""
    p, table = result.params, result.agreement
    truth = "expected_within_k" if table["expected_within_k"].notna().any() else None
    ax = plots.forest(
        table.assign(label=table["judge"] + " · " + table["dimension"]), label="label",
        estimate="within_k", low="within_k_low", high="within_k_high", truth=truth,
        xlabel=f"share within ±{p.tolerance:g} of the human score",
        title=f"±{p.tolerance:g} agreement per judge and dimension "
        f"({p.confidence_level:.0%} Wilson)",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def confusion(result: JudgeGoldenResult) -> Figure:
    """The primary judge's scores against the human scores on ``result.shown`` (counts)."""
    if result.confusion is None:
        raise ValueError(f"no score confusion on {result.shown}: the human scores are fractional")
    ax = plots.heatmap(
        result.confusion, fmt=".0f", cmap="Blues",
        title=f"{result.params.judges[0].name} vs human on {result.shown} (item counts)",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def length_bias(result: JudgeGoldenResult) -> Figure:
    """The primary judge's error against ln(answer length / median), jittered, with the
    OLS line of :attr:`~.records.JudgeGoldenResult.slope`."""
    points, slope = result.length, result.slope.estimate
    line = length_fit(points, slope)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.scatter(points["log_ratio"], points["shown"], alpha=0.6)
    ax.plot(line["log_ratio"], line["fit"], color="C3", label=f"OLS slope {slope:+.2f}")
    ax.axhline(0, color="grey", linestyle="--", linewidth=1)
    ax.set(
        xlabel="ln(answer length / median length)",
        ylabel=f"judge − human ({result.shown}, jittered)",
        title=f"Length bias of {result.params.judges[0].name}: error vs answer length",
    )
    plots.legend_beside(ax)
    return fig


def panel(result: JudgeGoldenResult) -> Figure:
    """Each judge's and the panel's ±k agreement (Wilson), and judge × judge agreement."""
    p, panel = result.params, result.panel
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.4), gridspec_kw={"width_ratios": [3, 2]})
    plots.forest(
        panel.versus, label="judge", estimate="within_k", low="within_k_low",
        high="within_k_high", ax=axes[0],
        xlabel=f"share within ±{p.tolerance:g} of the human {p.headline}",
        title=f"Single judges vs the panel ({p.confidence_level:.0%} Wilson)",
    )  # fmt: skip
    plots.heatmap(
        panel.matrix, ax=axes[1], vmin=0, vmax=1, cmap="Blues",
        title=f"Judge vs judge: share within ±{p.tolerance:g}",
    )  # fmt: skip
    plt.setp(axes[1].get_xticklabels(), rotation=20, ha="right", rotation_mode="anchor")
    fig.tight_layout()
    return fig


def pairs_bias(result: JudgeGoldenResult) -> Figure:
    """The pairwise judge's position and length measures (Wilson), 0.5 marked."""
    spec = result.params.pairwise_judge
    if result.pairs is None or spec is None:
        raise ValueError("no pairwise check in this run (pairwise_judge is not set)")
    ax = plots.forest(
        result.pairs.measures, label="measure", estimate="share", low="low", high="high",
        reference=0.5, xlabel="share of pairs / verdicts",
        title=f"{spec.name}: position and length bias "
        f"({result.params.confidence_level:.0%} Wilson)",
    )  # fmt: skip
    ax.set_xlim(0, 1)
    return cast(Figure, ax.figure)


def anchors(result: JudgeGoldenResult) -> Figure:
    """Anchored − plain bias and ±k agreement per judge and dimension (paired bootstrap),
    the simulated judges' expected changes as open diamonds."""
    if result.anchors is None:
        raise ValueError("no few-shot anchors in this run (anchors is empty)")
    p, table = result.params, result.anchors.comparison
    table = table.assign(label=table["judge"] + " · " + table["dimension"])
    fig, axes = plt.subplots(1, 2, figsize=(12, max(2.5, 0.45 * len(table) + 1)), sharey=True)
    level = f"{p.confidence_level:.0%} paired bootstrap"
    for ax, measure, xlabel in (
        (axes[0], "bias", "change in bias (judge − human), points"),
        (axes[1], "within_k", f"change in the share within ±{p.tolerance:g}"),
    ):
        truth = f"expected_{measure}_diff"
        plots.forest(
            table, label="label", estimate=f"{measure}_diff", low=f"{measure}_diff_low",
            high=f"{measure}_diff_high", reference=0.0, ax=ax, xlabel=xlabel,
            truth=truth if table[truth].notna().any() else None,
            title=f"Anchored − plain ({level})", legend=ax is axes[1],
        )  # fmt: skip
    fig.tight_layout()
    return fig


Drawing = Callable[[JudgeGoldenResult], Figure]


def drawn(figure: Drawing, result: JudgeGoldenResult) -> Figure | None:
    """``figure(result)``, or ``None`` (nothing drawn) when the run has nothing for it: no
    score confusion when the human scores are fractional, no pairs without a pairwise judge, no
    anchor comparison without anchors."""
    missing: dict[Drawing, bool] = {
        confusion: result.confusion is None,
        pairs_bias: result.pairs is None,
        anchors: result.anchors is None,
    }
    return None if missing.get(figure, False) else figure(result)
