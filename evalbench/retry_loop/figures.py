"""The retry-loop notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.RetryLoopResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``. A figure of
something the run did not compute (no control arm, no second judge) raises ``ValueError``;
:func:`drawn` draws it only when there is something to draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from evalbench import plots

from .records import RetryLoopResult


def _level(result: RetryLoopResult) -> str:
    return f"{result.params.confidence_level:.0%} paired bootstrap"


def gains(result: RetryLoopResult) -> Figure:
    """Left: the gain since the first answer after each round, per arm, with its interval
    band (a simulation's true gain dashed). Right: each round's own gain, per arm."""
    table = result.gains
    zero = ("cumulative", "cumulative_low", "cumulative_high", "true_cumulative")
    start = pd.DataFrame({"arm": result.params.arms(), "round": 0} | dict.fromkeys(zero, 0.0))
    lines = pd.concat([start, table], ignore_index=True).sort_values(["round"], kind="stable")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    plots.interval_lines(
        lines, x="round", y="cumulative", low="cumulative_low", high="cumulative_high",
        hue="arm", ax=left, ylabel="gain over the first answer (weighted score)",
        title=f"Cumulative gain ({_level(result)})",
    )  # fmt: skip
    if "true_gain" in table:
        for i, (arm, part) in enumerate(lines.groupby("arm", sort=False)):
            left.plot(part["round"], part["true_cumulative"], linestyle="--",
                      color=f"C{i}", alpha=0.7, label=f"{arm} (true)")  # fmt: skip
        plots.legend_beside(left, "arm")
    plots.interval_bars(
        table, x="round", y="gain", low="gain_low", high="gain_high", hue="arm", ax=right,
        ylabel="gain in the round", title=f"Gain per round ({_level(result)})", ylim=None,
    )  # fmt: skip
    right.axhline(0, color="grey", linewidth=1)
    fig.tight_layout()
    return fig


def shares(result: RetryLoopResult) -> Figure:
    """The retried items that improved, stayed and worsened, per arm and round."""
    table = result.shares.copy()
    for part in ("improved", "unchanged", "worsened"):
        table[part] = table[part] / table["compared"].where(table["compared"] > 0)
    table["label"] = table["arm"] + " · round " + table["round"].astype(str)
    ax = plots.stacked_shares(
        table, label="label", parts=["improved", "unchanged", "worsened"],
        colors=["C2", "0.75", "C3"], title="Retried items against their previous score",
    )  # fmt: skip
    ax.set_xlabel("share of the retried items compared")
    return cast(Figure, ax.figure)


def costs(result: RetryLoopResult) -> Figure:
    """Cost of the retries against the gain they bought, per arm, one point per round."""
    merged = result.costs.merge(result.gains, on=["arm", "round"])
    fig, ax = plt.subplots(figsize=(7, 4))
    for arm, part in merged.groupby("arm", sort=False):
        err = [
            part["cumulative"] - part["cumulative_low"],
            part["cumulative_high"] - part["cumulative"],
        ]
        ax.errorbar(part["cumulative_cost_usd"], part["cumulative"], yerr=err, marker="o",
                    capsize=3, label=str(arm))  # fmt: skip
        for x, y, r in zip(
            part["cumulative_cost_usd"], part["cumulative"], part["round"], strict=True
        ):
            ax.annotate(
                f"r{r}", (x, y), textcoords="offset points", xytext=(5, -10), fontsize="small"
            )
    ax.set(xlabel="cost of the retries (USD)", ylabel="gain over the first answer",
           title=f"What the gain costs ({_level(result)} intervals)")  # fmt: skip
    plots.legend_beside(ax, "arm")
    fig.tight_layout()
    return fig


def effect(result: RetryLoopResult) -> Figure:
    """Suggestion arm − control arm after each round (the suggestion's effect)."""
    if result.effect is None:
        raise ValueError("no control arm in this run (control: false)")
    table = result.effect.assign(label="after round " + result.effect["round"].astype(str))
    truth = "true_effect" if "true_effect" in table else None
    ax = plots.forest(
        table, label="label", estimate="effect", low="effect_low", high="effect_high",
        reference=0.0, truth=truth, xlabel="suggestion − control (weighted score)",
        title=f"The suggestion's effect, paired by item ({_level(result)})",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def self_preference(result: RetryLoopResult) -> Figure:
    """Per arm, the gap between the loop judge's and the second judge's gains, and (with the
    control arm) their difference: the self-preference."""
    if result.second is None:
        raise ValueError("no second judge in this run (second_judge is not set)")
    table = result.second.table.assign(label=lambda t: t["arm"] + " arm gap")
    diff = result.second.difference
    if diff is not None:
        row = {"label": "suggestion gap − control gap", "gap": diff["difference"],
               "gap_low": diff["difference_low"], "gap_high": diff["difference_high"]}  # fmt: skip
        table = pd.concat([table, pd.DataFrame([row])], ignore_index=True)
    ax = plots.forest(
        table, label="label", estimate="gap", low="gap_low", high="gap_high", reference=0.0,
        xlabel="loop judge's gain − second judge's gain",
        title=f"Self-preference check ({_level(result)})",
    )  # fmt: skip
    return cast(Figure, ax.figure)


Drawing = Callable[[RetryLoopResult], Figure]


def drawn(figure: Drawing, result: RetryLoopResult) -> Figure | None:
    """``figure(result)``, or ``None`` (nothing drawn) when the run has nothing for it: no
    effect without the control arm, no self-preference check without a second judge."""
    missing: dict[Drawing, bool] = {
        effect: result.effect is None,
        self_preference: result.second is None,
    }
    return None if missing.get(figure, False) else figure(result)
