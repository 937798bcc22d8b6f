"""The GAIA notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.GaiaResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()`` (through
:func:`drawn` for the agents' figure, which a chat-only run does not have).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from matplotlib.figure import Figure

from evalbench import plots

from .records import GaiaResult


def accuracy(result: GaiaResult) -> Figure:
    """First-attempt accuracy by level per system, with Wilson intervals."""
    level = result.params.confidence_level
    ax = plots.interval_bars(
        result.summary.accuracy, x="level", y="accuracy", low="ci_low", high="ci_high",
        hue="system", ylabel="accuracy (official scorer)",
        title=f"Accuracy by level (first attempt), {level:.0%} Wilson intervals",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def drops(result: GaiaResult) -> Figure:
    """The relative accuracy drop L1→L2 and L2→L3 per system, with bootstrap intervals."""
    level = result.params.confidence_level
    ax = plots.interval_bars(
        result.summary.drops, x="transition", y="relative_drop", low="relative_low",
        high="relative_high", hue="system", ylim=None,
        ylabel="relative drop (1 − harder / easier)",
        title=f"Relative accuracy drop between levels, {level:.0%} bootstrap intervals",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def tool_mix(result: GaiaResult) -> Figure:
    """Each agent's share of tool calls per tool, by level (ValueError without agents)."""
    if result.agents is None:
        raise ValueError("tool mix: no agent systems in this run")
    mix = result.agents.tools
    mix = mix.assign(label=mix["system"] + " · " + mix["level"].astype(str))
    tools = [c for c in mix.columns if c not in ("system", "level", "label")]
    ax = plots.stacked_shares(mix, label="label", parts=tools, title="Tool calls by tool")
    ax.set_xlabel("share of the agent's tool calls")
    plots.legend_beside(ax, "tool")
    return cast(Figure, ax.figure)


def drawn(figure: Callable[[GaiaResult], Figure], result: GaiaResult) -> Figure | None:
    """``figure(result)``, or ``None`` (nothing drawn) for the tool mix of a run without
    agents (:func:`~.report.steps_accuracy` says so in one line)."""
    return None if figure is tool_mix and result.agents is None else figure(result)
