"""The sweep notebook's figures: one function per figure, each returning a new Figure.

A figure of a section the sweep could not compute (no cell ended ok, no swept key) raises
``ValueError`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalbench import plots

from .records import SweepResult

MAX_FOREST_ROWS = 60
"""A forest of more rows than this is unreadable: the figure shows the first ones (the table
has them all)."""


def _need(frame: pd.DataFrame, what: str) -> None:
    if not len(frame):
        raise ValueError(f"{what}: nothing to draw (no cell ended ok)")


def seeds(result: SweepResult) -> Figure:
    """Each configuration's cells, one point per seed with its within-run interval, and the
    mean over seeds as a bar: seed spread and item-sampling spread side by side."""
    est = result.estimates[result.estimates["metric"] == result.metric]
    _need(est, "seeds")
    cells = result.cells.set_index("cell")
    frame = est.assign(config=est["cell"].map(cells["config"]), seed=est["cell"].map(cells["seed"]))
    systems = sorted(frame["system"].unique())
    configs = sorted(frame["config"].unique())
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(configs) + 3), 4), layout="constrained")
    width = 0.8 / len(systems)
    seed_values = sorted(frame["seed"].unique())
    for i, system in enumerate(systems):
        part = frame[frame["system"] == system]
        base = np.array([configs.index(c) for c in part["config"]]) - 0.4 + width * (i + 0.5)
        jitter = np.array([seed_values.index(s) for s in part["seed"]], dtype=float)
        x = base + (jitter - (len(seed_values) - 1) / 2) * width / max(len(seed_values) + 1, 2)
        y = part["estimate"].to_numpy(float)
        err = np.vstack([y - part["low"].to_numpy(float), part["high"].to_numpy(float) - y])
        ax.errorbar(
            x,
            y,
            yerr=np.clip(err, 0, None),
            fmt="o",
            ms=3,
            capsize=2,
            color=f"C{i}",
            label=str(system),
        )
        means = part.groupby("config")["estimate"].mean()
        pos = np.array([configs.index(c) for c in means.index]) - 0.4 + width * (i + 0.5)
        ax.hlines(means.to_numpy(float), pos - width / 2, pos + width / 2, color=f"C{i}", lw=2)
    ax.set_xticks(np.arange(len(configs)), [str(c) for c in configs])
    ax.set_xlabel("configuration")
    ax.set_ylabel(result.metric)
    level = result.params.confidence_level
    ax.set_title(f"{result.metric} per cell (points: seeds, {level:.0%} intervals; bars: mean)")
    plots.legend_beside(ax, "system")
    return fig


def vs_baseline(result: SweepResult) -> Figure:
    """The change of the ranking metric of every cell against its baseline cell, with its
    paired bootstrap interval (forest; the first :data:`MAX_FOREST_ROWS` rows)."""
    tests = result.comparisons
    _need(tests, "vs_baseline")
    rows = tests[(tests["slice"] == "all") & (tests["metric"] == result.metric)]
    several = rows["system_b"].nunique() > 1
    frame = rows.head(MAX_FOREST_ROWS).assign(
        label=[
            f"cell {c} vs {b}" + (f" · {s}" if several else "")
            for c, b, s in zip(rows["cell"], rows["baseline_cell"], rows["system_b"], strict=False)
        ][:MAX_FOREST_ROWS]
    )
    level = result.params.confidence_level
    ax = plots.forest(
        frame,
        label="label",
        estimate="difference",
        low="low",
        high="high",
        reference=0.0,
        xlabel=f"change in {result.metric} (cell − baseline cell)",
        title=f"Each cell vs the baseline cell of its seed ({level:.0%} paired intervals)",
    )
    return cast(Figure, ax.figure)


def cost_quality(result: SweepResult) -> Figure:
    """The ranking metric against cost, tokens and seconds per call (one panel each), every
    configuration a labelled point, its Pareto front joined by a line."""
    configs = result.configs
    _need(configs, "cost_quality")
    panels = [
        ("cost_usd", "front_cost", "cost per cell (USD)"),
        ("tokens", "front_tokens", "tokens per cell"),
        ("latency_s", "front_latency", "seconds per call"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), layout="constrained", sharey=True)
    for ax, (measure, front, label) in zip(axes, panels, strict=True):
        _front_panel(ax, configs, measure, front, result.metric)
        ax.set_xlabel(label)
    axes[0].set_ylabel(result.metric)
    plots.legend_beside(axes[-1])
    fig.suptitle(f"{result.metric} vs what it costs (mean over seeds; line: Pareto front)")
    return fig


def _front_panel(
    ax: plt.Axes, configs: pd.DataFrame, measure: str, front: str, metric: str
) -> None:
    x, y = configs[measure].to_numpy(float), configs["estimate"].to_numpy(float)
    on = configs[front].to_numpy(bool)
    ax.scatter(x[~on], y[~on], color="grey", alpha=0.6, label="dominated")
    ax.scatter(x[on], y[on], color="C3", label="Pareto front")
    order = np.argsort(x[on])
    ax.plot(x[on][order], y[on][order], color="C3", lw=1)
    if len(configs) <= 40:  # past that the labels cover the points
        for cx, cy, config in zip(x, y, configs["config"], strict=True):
            if np.isfinite(cx) and np.isfinite(cy):
                ax.annotate(
                    str(config),
                    (cx, cy),
                    fontsize="x-small",
                    xytext=(3, 3),
                    textcoords="offset points",
                )
    if not np.isfinite(x).any():
        ax.text(0.5, 0.5, "not recorded", transform=ax.transAxes, ha="center")


def main_effects(result: SweepResult) -> Figure:
    """One panel per swept key: the mean of the ranking metric per value with its interval,
    one line per system (parallel lines in two panels = no interaction between them)."""
    effects = result.effects
    _need(effects, "main_effects")
    names = list(dict.fromkeys(effects["factor"]))
    fig, axes = plt.subplots(
        1,
        len(names),
        figsize=(max(4.0, 3.6 * len(names)), 3.6),
        layout="constrained",
        sharey=True,
        squeeze=False,
    )
    for ax, factor in zip(axes[0], names, strict=True):
        part = effects[effects["factor"] == factor]
        for i, (system, rows) in enumerate(part.groupby("system", sort=True)):
            y = rows["mean"].to_numpy(float)
            err = np.vstack([y - rows["low"].to_numpy(float), rows["high"].to_numpy(float) - y])
            ax.errorbar(
                np.arange(len(rows)) + 0.05 * i,
                y,
                yerr=np.clip(err, 0, None),
                fmt="-o",
                capsize=3,
                label=str(system),
            )
        ax.set_xticks(
            np.arange(len(part.drop_duplicates("value"))),
            [str(v) for v in part.drop_duplicates("value")["value"]],
        )
        ax.set_xlabel(factor)
    axes[0][0].set_ylabel(f"{result.metric} (mean over cells)")
    plots.legend_beside(axes[0][-1], "system")
    level = result.params.confidence_level
    fig.suptitle(f"Main effects on {result.metric} ({level:.0%} intervals over cells)")
    return fig


def drawn(figure: Callable[[SweepResult], Figure], result: SweepResult) -> Figure | None:
    """``figure(result)``, or ``None`` (nothing drawn) when its section has nothing to show:
    no cell compared with a baseline (one configuration), no cell ok, no swept key (the
    section's sentence or table says so in one line)."""
    needs: dict[Callable[[SweepResult], Figure], pd.DataFrame] = {
        vs_baseline: result.comparisons,
        seeds: result.estimates,
        cost_quality: result.configs,
        main_effects: result.effects,
    }
    frame = needs.get(figure)
    return None if frame is not None and not len(frame) else figure(result)
