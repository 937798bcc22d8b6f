"""The arena notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.ArenaResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook shows it with ``plt.show()`` (through
:func:`drawn` for a figure a run may not have).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from evalbench import plots

from .records import ArenaResult


def dimensions(result: ArenaResult) -> Figure:
    """Radar chart of the mean judge score per dimension (rubric runs; ValueError otherwise)."""
    if result.means is None:
        raise ValueError("no rubric scores in this run (judging: pairwise)")
    means = result.means
    wide = means.pivot(index="system", columns="dimension", values="mean")
    ax = plots.radar(wide[list(dict.fromkeys(means["dimension"]))], scale=(1, 10))
    ax.set_title(f"Mean judge score per dimension ({result.params.rubric}, 1–10)", y=1.12)
    return cast(Figure, ax.figure)


def ratings(result: ArenaResult) -> Figure:
    """Four panels (ratings, observed win rates, predicted vs observed, ranks) or, with two
    systems, the ratings alone."""
    p = result.params
    truth = None if result.truth is None else result.truth.set_index("model")["true_rating"]
    if len(result.table) > 2:
        title = f"Arena run ({p.judging} judge)"
        fig = plots.rating_panels(
            result.ratings, title=title, truth=truth, reference=p.anchor_rating
        )
        return cast(Figure, fig)
    fig, ax = plt.subplots(figsize=(8, 1.4 + 0.5 * len(result.table)))
    level = f"{p.confidence_level:.0%}"
    plots.forest(
        result.table, ax=ax, label="model", estimate="rating", low="ci_low", high="ci_high",
        reference=p.anchor_rating, truth="true_rating" if truth is not None else None,
        xlabel="Bradley–Terry rating (Elo scale)",
        title=f"Arena run ({p.judging} judge): ratings, {level} bootstrap intervals",
    )  # fmt: skip
    return fig


def drawn(figure: Callable[[ArenaResult], Figure], result: ArenaResult) -> Figure | None:
    """``figure(result)``, or ``None`` (nothing drawn) for the rubric figure of a pairwise run."""
    return None if figure is dimensions and result.means is None else figure(result)
