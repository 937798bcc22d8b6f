"""The judge_public notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.JudgePublicResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()``. Intervals are
labelled with their level. A figure of a section not in this run's ``sections`` raises
``ValueError``; :func:`drawn` draws it only for a section the run has, so the notebook
calls it unconditionally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalbench import plots

from .data import Section
from .records import JudgePublicResult, PrdResult


def prd_agreement(result: JudgePublicResult) -> Figure:
    """Each reviewer's agreement with the human majority, with and without ties (Wilson),
    and human–human agreement as dotted lines."""
    prd = result.prd_part()
    table = prd.table
    both = pd.concat(
        [
            table.assign(
                setting=setting, est=table[col], lo=table[f"{col}_low"], hi=table[f"{col}_high"]
            )
            for setting, col in (("with ties", "with_ties"), ("without ties", "without_ties"))
        ]
    )
    ax = plots.interval_bars(
        both, x="reviewer", y="est", low="lo", high="hi", hue="setting",
        ylabel="agreement with the human majority",
        title=f"PRD: reviewer vs human majority ({result.params.confidence_level:.0%} Wilson)",
    )  # fmt: skip
    ax.axhline(prd.raters["with_ties"], color="C0", linestyle=":", linewidth=1.5)
    ax.axhline(prd.raters["without_ties"], color="C1", linestyle=":", linewidth=1.5)
    plots.legend_beside(ax, "setting")  # the axhlines join the legend
    return cast(Figure, ax.figure)


def prd_confusion(result: JudgePublicResult) -> Figure:
    """How each human verdict was judged by each reviewer (row shares)."""
    fig, ax = plt.subplots(figsize=(6, 7))
    plots.heatmap(
        result.prd_part().confusions, ax=ax, vmin=0, vmax=1, cmap="Blues",
        xlabel="reviewer verdict", title="PRD: how each human verdict was judged (row shares)",
    )  # fmt: skip
    return fig


def _with_humans(prd: PrdResult) -> pd.DataFrame:
    humans = pd.DataFrame([{"reviewer": "humans", **prd.human_longer}])
    return pd.concat([prd.table, humans], ignore_index=True)


def prd_bias(result: JudgePublicResult) -> Figure:
    """Position consistency per reviewer, and P(longer wins) per reviewer and for the humans."""
    prd, level = result.prd_part(), result.params.confidence_level
    fig, axes = plt.subplots(1, 2, figsize=(13, 3.8))
    plots.interval_bars(
        prd.table, x="reviewer", y="consistency", low="consistency_low",
        high="consistency_high", ax=axes[0], ylabel="same verdict in both orders",
        title=f"PRD: position consistency ({level:.0%} Wilson)",
    )  # fmt: skip
    plots.interval_bars(
        _with_humans(prd), x="reviewer", y="p_longer", low="p_longer_low", high="p_longer_high",
        ax=axes[1], ylabel="P(longer answer wins)",
        title=f"PRD: length preference ({level:.0%} Wilson)",
    )  # fmt: skip
    axes[1].axhline(0.5, color="grey", linestyle="--", linewidth=1)
    fig.tight_layout()
    return fig


def pandalm_confusion(result: JudgePublicResult) -> Figure:
    """How each human verdict was judged by each PandaLM judge (row shares)."""
    ax = plots.heatmap(
        result.pandalm_part().confusions, vmin=0, vmax=1, cmap="Blues", xlabel="judge verdict",
        title="PandaLM: how each human verdict was judged (row shares)",
    )  # fmt: skip
    return cast(Figure, ax.figure)


def mtbench_retest(result: JudgePublicResult, rng: np.random.Generator) -> Figure:
    """The two grades of each triple against each other (jittered by ``rng``)."""
    ax = plots.identity_scatter(
        result.mtbench_part().regrades.dropna(subset=["score_1", "score_2"]),
        x="score_1", y="score_2", jitter=0.2, rng=rng, xlabel="grade of generation 1",
        ylabel="grade of generation 2",
        title="MT-Bench: GPT-4 grades of mistral-orpo, two generations (jittered)",
    )  # fmt: skip
    return cast(Figure, ax.figure)


_SECTION: dict[Callable[..., Figure], Section] = {
    prd_agreement: "prd",
    prd_confusion: "prd",
    prd_bias: "prd",
    pandalm_confusion: "pandalm",
    mtbench_retest: "mtbench",
}


def drawn(figure: Callable[..., Figure], result: JudgePublicResult, *args: Any) -> Figure | None:
    """``figure(result, *args)``, or ``None`` (nothing drawn) when its section is not in this
    run's ``sections``."""
    return figure(result, *args) if _SECTION[figure] in result.params.sections else None
