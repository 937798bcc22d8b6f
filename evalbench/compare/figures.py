"""The compare notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.study.CompareResult` and returns the
:class:`~matplotlib.figure.Figure` (``None`` when there is nothing to draw); the notebook shows
it with ``plt.show()``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from . import metrics
from .records import CompareResult


def history_figure(result: CompareResult) -> Figure | None:
    """The headline metric of each system over the baseline study's runs, one line per
    system and configuration (overrides other than ``tag=``, commit), each run at its place in
    time, and a red mark over each run whose alert check fired; ``None`` for an imported
    baseline (no history)."""
    primary = metrics.primary_metric(result.runs[0].outcomes)
    frame = metrics.history_series(result.series, primary)
    if not len(frame):
        return None
    order = frame.drop_duplicates("run_id")["run"].tolist()  # oldest first
    place = {run: i for i, run in enumerate(order)}
    groups = list(frame.groupby("series", sort=False))
    fig, ax = plt.subplots(figsize=(8, 3.6 + 0.25 * len(groups)), layout="constrained")
    for i, (name, part) in enumerate(groups):
        dodge = 0.3 * (i / max(len(groups) - 1, 1) - 0.5)  # side by side within a run
        x = [place[r] + dodge for r in part["run"]]
        estimate = part["estimate"].to_numpy(float)
        spread = [estimate - part["low"].to_numpy(float), part["high"].to_numpy(float) - estimate]
        ax.errorbar(x, estimate, yerr=np.clip(spread, 0, None), fmt="-o", capsize=3,
                    label=str(name))  # fmt: skip
    alerted = [place[r] for r in frame[frame["alerts"].fillna("").astype(bool)]["run"].unique()]
    if alerted:
        top = ax.get_ylim()[1]
        ax.plot(alerted, [top] * len(alerted), "v", color="#d00", markersize=9, clip_on=False,
                label="alert fired (this run)")  # fmt: skip
    ax.set_xticks(np.arange(len(order)), order, rotation=30, ha="right")
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_xlabel("run (started, run id)")
    ax.set_ylabel(str(primary))
    fig.legend(title="system · configuration", fontsize="small", loc="outside lower center")
    level = result.params.confidence_level
    ax.set_title(f"{primary} over the study's runs, {level:.0%} intervals")
    return fig
