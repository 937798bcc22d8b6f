"""Plotting helpers shared by the study notebooks (matplotlib; seaborn for heatmaps).

Every function draws on an ``ax`` it is given (or a new figure), labels its axes, and
returns the ``Axes``; intervals are drawn as error bars whose level the caller states in
the title or label. Call :func:`setup` once per notebook for a consistent look.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from evalbench.look import MARKERS, OKABE_ITO

_SAFE_NAMES = ("viridis", "cividis", "magma", "inferno", "plasma", "Blues", "Greens", "Greys",
               "Oranges", "Purples", "Reds", "BuPu", "YlGnBu", "YlOrBr", "RdBu", "PuOr", "BrBG",
               "PRGn", "RdYlBu")  # fmt: skip
SAFE_CMAPS = frozenset(name + tail for name in _SAFE_NAMES for tail in ("", "_r"))
"""Colour maps a heatmap may use: perceptually uniform (viridis, cividis, ...), one-hue
sequential, and the diverging ColorBrewer maps marked colour-blind safe. Red–yellow–green,
Spectral and rainbow maps are refused: red and green cells look alike to 1 man in 12."""


THEME: dict[str, Any] = {
    "axes.axisbelow": True, "axes.edgecolor": ".8", "axes.grid": True, "axes.labelcolor": ".15",
    "axes.labelsize": 12.0, "axes.linewidth": 1.25, "axes.titlesize": 12.0,
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans",
                        "sans-serif"],
    "font.size": 12.0, "grid.color": ".8", "grid.linewidth": 1.0, "legend.fontsize": 11.0,
    "legend.title_fontsize": 12.0, "lines.solid_capstyle": "round", "patch.edgecolor": "w",
    "patch.force_edgecolor": True, "text.color": ".15",
    "xtick.bottom": False, "xtick.color": ".15", "xtick.labelsize": 11.0,
    "xtick.major.size": 6.0, "xtick.major.width": 1.25, "xtick.minor.size": 4.0,
    "xtick.minor.width": 1.0,
    "ytick.color": ".15", "ytick.labelsize": 11.0, "ytick.left": False, "ytick.major.size": 6.0,
    "ytick.major.width": 1.25, "ytick.minor.size": 4.0, "ytick.minor.width": 1.0,
}  # fmt: skip
"""What ``seaborn.set_theme(style="whitegrid", context="notebook")`` sets, as matplotlib
settings (``tests/test_plots.py`` holds them to seaborn's): :func:`setup` applies them without
importing seaborn, which imports scipy.stats (~0.6 s of every fresh kernel's start, for the
studies that draw no heatmap). Its ``image.cmap`` is left out: every heatmap names its map."""


def setup() -> None:
    """Consistent figure style for reports (seaborn's whitegrid look, readable sizes, PNG
    output, the :data:`OKABE_ITO` colours), every text drawn as it is written: a ``$`` in a
    system name is a dollar sign, never the start of math text (``a$\\foo{$b`` failed the
    report)."""
    from cycler import cycler
    from matplotlib.colors import to_rgb

    plt.rcParams.update(cast(Any, THEME))  # validated as any setting is
    plt.rcParams.update({"axes.prop_cycle": cycler(color=[to_rgb(c) for c in OKABE_ITO]),
                         "figure.dpi": 100, "savefig.dpi": 100, "figure.figsize": (8, 4.2),
                         "text.parse_math": False})  # fmt: skip


def _axes(ax: Axes | None, figsize: tuple[float, float] | None = None) -> Axes:
    if ax is not None:
        return ax
    _, new = plt.subplots(figsize=figsize)
    return new


MAX_LEGEND = 30
"""More entries than this get no legend (a 10,000-entry legend took minutes to draw, and
nobody reads one of 100): a note beside the axes says how many there are."""


def legend_beside(
    ax: Axes, title: str | None = None, handles: Sequence[Any] | None = None,
    labels: Sequence[str] | None = None,
) -> None:  # fmt: skip
    """Put ``ax``'s legend (or one of ``handles`` and ``labels``) beside the axes, top right:
    inside, it can hide bars. No legend when nothing is labelled; past :data:`MAX_LEGEND`
    entries, a note of their number instead."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    if labels and not too_many_for_a_legend(ax, len(labels), title or "series"):
        place_beside(ax, handles, labels, title)


def place_beside(
    ax: Axes, handles: Sequence[Any], labels: Sequence[str], title: str | None = None,
    gap: float = 0.01,
) -> None:  # fmt: skip
    """The legend of ``handles`` and ``labels`` with its top left corner ``gap`` (a share of
    the axes' width) right of the axes' top right corner, so that it covers no data (the
    report's PNG is cut to fit it, ``bbox_inches="tight"``)."""
    ax.legend(handles, labels, title=title, fontsize="small", loc="upper left",
              bbox_to_anchor=(1 + gap, 1))  # fmt: skip


def too_many_for_a_legend(ax: Axes, count: int, what: str) -> bool:
    """Whether ``count`` entries are past :data:`MAX_LEGEND`; if so, a note beside the axes
    says how many there are, e.g. ``system: 2,000`` (the caller then draws no legend)."""
    if count <= MAX_LEGEND:
        return False
    note = f"{what}: {count:,}\n(too many for a legend)"
    ax.text(1.01, 1, note, transform=ax.transAxes, va="top", fontsize="small")
    return True


def interval_bars(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    low: str,
    high: str,
    hue: str | None = None,
    ax: Axes | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    ylim: tuple[float, float] | None = (0, 1),
) -> Axes:
    """Grouped bars of ``y`` per ``x`` (one colour per ``hue``, in the style's colour cycle)
    with [low, high] error bars; all drawn in one call each, so thousands of groups stay fast."""
    ax = _axes(ax)
    groups = list(dict.fromkeys(df[hue])) if hue else [None]
    cats = list(dict.fromkeys(df[x]))
    width = 0.8 / len(groups)
    rows = df.set_index([hue, x] if hue else x).reindex(
        pd.MultiIndex.from_product([groups, cats]) if hue else cats
    )
    pos = (np.arange(len(cats)) - 0.4 + width * (np.arange(len(groups))[:, None] + 0.5)).ravel()
    est = rows[y].to_numpy(float)
    err = np.vstack([est - rows[low].to_numpy(float), rows[high].to_numpy(float) - est])
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = [cycle[i % len(cycle)] for i in range(len(groups)) for _ in cats]
    drawn = _bars(ax, pos, est, width, colors, each=len(groups) <= MAX_LEGEND)
    firsts = drawn[:: len(cats)]  # each group's first bar stands for its colour
    ax.errorbar(pos, est, yerr=np.clip(err, 0, None), fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(np.arange(len(cats)), [str(c) for c in cats])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    if ylim:
        ax.set_ylim(*ylim)
    if hue:
        legend_beside(ax, hue, firsts, [str(g) for g in groups])
    if title:
        ax.set_title(title)
    return ax


def _bars(ax: Axes, pos: np.ndarray, heights: np.ndarray, width: float, colors: list[str],
          *, each: bool) -> list[Any]:  # fmt: skip
    """Bars as ``ax.bar`` draws them (an artist ``each``, returned), or one collection (none
    returned): matplotlib adds an artist in ~0.5 ms, minutes for 10,000 systems' bars."""
    if each:
        return list(ax.bar(pos, heights, width, color=colors).patches)
    from matplotlib.collections import PolyCollection

    left, right, base = pos - width / 2, pos + width / 2, np.zeros_like(heights)
    corners = np.stack([np.c_[left, base], np.c_[left, heights], np.c_[right, heights],
                        np.c_[right, base]], axis=1)  # fmt: skip
    drawn = ~np.isnan(heights)
    ax.add_collection(PolyCollection(corners[drawn], facecolors=np.array(colors)[drawn]))
    ax.autoscale_view()
    return []


def interval_lines(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    low: str,
    high: str,
    hue: str,
    ax: Axes | None = None,
    ylabel: str | None = None,
    title: str | None = None,
) -> Axes:
    """One line per ``hue`` over ``x`` (numbers on their own scale, other values in order of
    first appearance) with [low, high] error bars; each series is moved a little sideways
    and has its own marker, so no interval is drawn over a neighbour's (shaded bands hid
    each other)."""
    ax = _axes(ax)
    groups = list(dict.fromkeys(df[hue]))
    numeric = pd.api.types.is_numeric_dtype(df[x])
    cats = sorted(set(df[x])) if numeric else list(dict.fromkeys(df[x]))
    at = {c: (float(c) if numeric else float(i)) for i, c in enumerate(cats)}
    step = _dodge_step(sorted(at.values()), len(groups))
    for i, (group, part) in enumerate(df.groupby(hue, sort=False)):
        xs = part[x].map(at).to_numpy(float) + step * (i - (len(groups) - 1) / 2)
        est = part[y].to_numpy(float)
        err = np.vstack([est - part[low].to_numpy(float), part[high].to_numpy(float) - est])
        ax.errorbar(xs, est, yerr=np.clip(err, 0, None), marker=MARKERS[i % len(MARKERS)],
                    capsize=2, elinewidth=1, label=str(group))  # fmt: skip
    ax.set_xticks(list(at.values()), [str(c) for c in cats])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel or y)
    legend_beside(ax, hue)
    if title:
        ax.set_title(title)
    return ax


def _dodge_step(positions: list[float], series: int) -> float:
    """How far apart neighbouring series are drawn: together they span 30% of the smallest
    gap between two x positions (a single series stays in place)."""
    if series < 2:
        return 0.0
    gaps = [b - a for a, b in itertools.pairwise(positions) if b > a]
    return 0.3 * (min(gaps) if gaps else 1.0) / (series - 1)


def forest(
    df: pd.DataFrame,
    *,
    label: str,
    estimate: str,
    low: str,
    high: str,
    ax: Axes | None = None,
    xlabel: str | None = None,
    title: str | None = None,
    reference: float | None = None,
    truth: str | None = None,
    legend: bool = True,
) -> Axes:
    """Horizontal point-and-interval plot, one row per ``label`` (top = first row).

    ``reference`` draws a vertical line (e.g. 0.5 or a baseline rating); ``truth`` names a
    column of true values drawn as open diamonds (simulated studies), explained by a legend
    beside the axes unless ``legend`` is false (a forest with another axes to its right).
    """
    ax = _axes(ax, figsize=(8, max(2.0, 0.45 * len(df) + 1)))
    ypos = np.arange(len(df))[::-1]
    est = df[estimate].to_numpy(float)
    err = np.vstack([est - df[low].to_numpy(float), df[high].to_numpy(float) - est])
    ax.errorbar(est, ypos, xerr=np.clip(err, 0, None), fmt="o", capsize=3, label=estimate)
    if truth:
        ax.scatter(df[truth], ypos, marker="D", facecolors="none", edgecolors="C3", label=truth)
        if legend:
            legend_beside(ax)
    if reference is not None:
        ax.axvline(reference, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(ypos, [str(v) for v in df[label]])
    ax.set_xlabel(xlabel or estimate)
    if title:
        ax.set_title(title)
    return ax


def heatmap(
    matrix: pd.DataFrame,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    fmt: str = ".2f",
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    annot: Any = True,
) -> Axes:
    """Annotated heatmap of a labelled matrix (rows and columns keep their labels); the
    annotations are made smaller (down to :data:`MIN_ANNOTATION_PT`), then wrapped before
    an interval's "[", until each fits its cell.

    Raises:
        ValueError: ``cmap`` is not in :data:`SAFE_CMAPS`.
    """
    import seaborn as sns

    if cmap not in SAFE_CMAPS:
        raise ValueError(
            f"heatmap: colour map {cmap!r} is not colour-blind safe; use one of viridis, "
            "cividis, Blues, Reds, RdBu, PuOr (plots.SAFE_CMAPS)"
        )
    size = (max(5.0, 0.7 * matrix.shape[1] + 2), max(3.0, 0.5 * matrix.shape[0] + 1.5))
    ax = _axes(ax, figsize=size)
    sns.heatmap(matrix.astype(float), annot=annot, fmt=fmt, cmap=cmap, vmin=vmin, vmax=vmax, ax=ax,
                cbar_kws={"shrink": 0.8})  # fmt: skip
    ax.grid(False)  # grid lines would show through empty (NaN) cells
    ax.tick_params(axis="y", labelrotation=0)
    if max((len(str(c)) for c in matrix.columns), default=0) > 6:
        ax.set_xticklabels(ax.get_xticklabels(), rotation=30, ha="right")
    ax.set_xlabel(xlabel if xlabel is not None else (matrix.columns.name or ""))
    ax.set_ylabel(ylabel if ylabel is not None else (matrix.index.name or ""))
    if title:
        ax.set_title(title)
    fit_annotations(ax, matrix.shape)
    return ax


MIN_ANNOTATION_PT = 6.0
"""The smallest font an annotation is shrunk to before it is wrapped onto two lines."""


def fit_annotations(ax: Axes, shape: tuple[int, int], margin: float = 0.9) -> None:
    """Make a heatmap's cell annotations fit ``margin`` of their cell (``shape``: rows,
    columns): one common font size, no smaller than :data:`MIN_ANNOTATION_PT`; a label
    still too wide is wrapped before its " [" (an interval goes under its estimate)."""
    texts = [t for t in ax.texts if t.get_text()]
    if not texts or not all(shape):
        return
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    box = ax.get_window_extent(renderer)
    cell = (box.width / shape[1] * margin, box.height / shape[0] * margin)
    if _shrink(texts, renderer, cell) >= 1:
        return
    for text in texts:
        text.set_text(text.get_text().replace(" [", "\n[", 1))
    _shrink(texts, renderer, cell)


def _shrink(texts: list[Any], renderer: Any, cell: tuple[float, float]) -> float:
    """Scale the texts' common font so the largest fits ``cell`` (px, not below the minimum);
    returns how much room there was (>= 1: they already fitted, untouched)."""
    extents = [t.get_window_extent(renderer) for t in texts]
    room = min(cell[0] / max(e.width for e in extents), cell[1] / max(e.height for e in extents))
    if room < 1:
        size = max(MIN_ANNOTATION_PT, min(t.get_fontsize() for t in texts) * room)
        for text in texts:
            text.set_fontsize(size)
    return room


def stacked_shares(
    df: pd.DataFrame,
    *,
    label: str,
    parts: Sequence[str],
    ax: Axes | None = None,
    title: str | None = None,
    colors: Sequence[str] | None = None,
) -> Axes:
    """Horizontal 100% stacked bars (e.g. win / tie / loss shares) per ``label``."""
    ax = _axes(ax, figsize=(8, max(2.0, 0.45 * len(df) + 1)))
    left = np.zeros(len(df))
    ypos = np.arange(len(df))[::-1]
    for i, part in enumerate(parts):
        values = df[part].to_numpy(float)
        color = colors[i] if colors else None
        ax.barh(ypos, values, left=left, label=part, color=color)
        left += values
    ax.set_yticks(ypos, [str(v) for v in df[label]])
    ax.set_xlim(0, max(1.0, float(left.max()) if len(left) else 1.0))
    legend_beside(ax)
    if title:
        ax.set_title(title)
    return ax


def radar(
    scores: pd.DataFrame,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    scale: tuple[float, float] | None = None,
) -> Axes:
    """Radar (spider) chart: one polygon per row of ``scores``, one axis per column."""
    dims = list(scores.columns)
    angles = np.linspace(0, 2 * np.pi, len(dims), endpoint=False).tolist()
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.5), subplot_kw={"polar": True})
    for name, row in scores.iterrows():
        values = row.to_numpy(float).tolist()
        ax.plot(angles + angles[:1], values + values[:1], marker="o", label=str(name))
        ax.fill(angles + angles[:1], values + values[:1], alpha=0.1)
    ax.set_xticks(angles, dims)
    if scale:
        ax.set_ylim(*scale)
    if not too_many_for_a_legend(ax, len(scores), "series"):
        place_beside(ax, *ax.get_legend_handles_labels(), gap=0.15)  # past the angle labels
    if title:
        ax.set_title(title)
    return ax


def identity_scatter(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    jitter: float = 0.0,
    rng: np.random.Generator | None = None,
) -> Axes:
    """Scatter of ``y`` against ``x`` with the identity line (predicted vs observed).

    ``jitter`` spreads tied integer scores by up to ±jitter (needs ``rng``) so overlapping
    points stay visible; the identity line is unaffected.
    """
    ax = _axes(ax, figsize=(5, 5))
    xs, ys = df[x].to_numpy(float), df[y].to_numpy(float)
    if jitter and rng is not None:
        xs = xs + rng.uniform(-jitter, jitter, xs.size)
        ys = ys + rng.uniform(-jitter, jitter, ys.size)
    ax.scatter(xs, ys, alpha=0.6)
    finite = np.concatenate([xs[np.isfinite(xs)], ys[np.isfinite(ys)]])
    if finite.size:
        lo, hi = float(finite.min()), float(finite.max())
        ax.plot([lo, hi], [lo, hi], color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    return ax


def bars(
    series: pd.Series,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    horizontal: bool = False,
) -> Axes:
    """Simple bar chart of a labelled series (counts, shares)."""
    ax = _axes(ax)
    labels = [str(i) for i in series.index]
    if horizontal:
        ax.barh(labels[::-1], series.to_numpy(float)[::-1])
    else:
        ax.bar(labels, series.to_numpy(float))
        ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel(xlabel or "")
    ax.set_ylabel(ylabel or "")
    if title:
        ax.set_title(title)
    return ax


def rating_panels(
    report: Any, *, title: str, truth: pd.Series | None = None, reference: float = 1000.0
) -> Any:
    """Four panels of a :class:`evalbench.ratings.RatingReport`: ratings with intervals (and
    the true ratings when ``truth`` maps model -> rating), observed win rates, predicted vs
    observed win rate per pair, and the rank distribution over bootstrap rounds."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5))
    # seaborn draws the whole figure once per heatmap: draw the heatmaps while it is empty
    heatmap(
        report.observed, ax=axes[0, 1], vmin=0, vmax=1, cmap="RdBu",
        title="Observed win rate of row vs column (ties = ½)",
    )  # fmt: skip
    heatmap(
        report.ranks, ax=axes[1, 1], vmin=0, vmax=1, cmap="Blues", xlabel="rank (1 = best)",
        title="Rank distribution over bootstrap rounds",
    )  # fmt: skip
    table = report.table.assign(
        true_rating=None if truth is None else report.table["model"].map(truth)
    )
    forest(
        table, label="model", estimate="rating", low="ci_low", high="ci_high", ax=axes[0, 0],
        xlabel="Bradley–Terry rating (Elo scale)", reference=reference,
        title=f"Ratings, {float(table['level'].iloc[0]):.0%} bootstrap intervals",
        truth=None if truth is None else "true_rating",
    )  # fmt: skip
    identity_scatter(
        report.pairs, x="predicted", y="observed", ax=axes[1, 0],
        xlabel="predicted by the BT ratings", ylabel="observed",
        title="Win rate per pair: predicted vs observed",
    )  # fmt: skip
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def reliability_diagram(
    table: pd.DataFrame,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    ylabel: str = "accuracy",
) -> Axes:
    """Accuracy against mean stated confidence per bin and system, with the bins' intervals
    and the diagonal of perfect calibration; both axes are fractions (0-1).

    Args:
        table: :func:`evalbench.calibration.reliability_table`.
    """
    ax = _axes(ax, figsize=(6, 6))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect calibration")
    for system, part in table.groupby("system", sort=False):
        est = part["accuracy"].to_numpy(float)
        err = np.vstack(
            [est - part["ci_low"].to_numpy(float), part["ci_high"].to_numpy(float) - est]
        )
        ax.errorbar(part["mean_confidence"], est, yerr=err, marker="o", capsize=3, label=system)
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean stated confidence", ylabel=ylabel)
    if title:
        ax.set_title(title)
    if not too_many_for_a_legend(ax, table["system"].nunique(), "system"):
        place_beside(ax, *ax.get_legend_handles_labels(), title="system")
    return ax
